#!/usr/bin/env python3
"""Inject a known interference on the measured CPU and check what rtprobe reports.

docs/design.md, "Quality bars": a higher-priority thread busy for D us every T ms
on the measured CPU is reported as a maximum of about D with the right count of
exceedances.

Set-up.  `rtprobe cyclic` measures one SCHED_FIFO 80 thread on CPU C with a
1 ms interval I, deadlines d_k = t0 + k*I.  Beside it this script starts an
interferer (a small Python process, SCHED_FIFO 90, pinned to C, garbage
collector off, memory locked) that sleeps until s_j = s_0 + j*T and then spins
on CLOCK_MONOTONIC until s_j + D.  The burst is counted from s_j, the expiry
of its timer, because a FIFO 90 task takes the CPU as soon as it is woken:
its first clock read comes tens of us later (its own wake-up and the Python
interpreter), and a deadline in that gap is delayed like any other.  It
records s_j, that first read and the real end of every burst and writes them
to a file when it stops; the measured lengths (end - s_j) give the
expectation.

Expectation.  While the interferer spins, the FIFO 80 thread cannot run.  A
burst [s, s+D) with D < I contains at most one deadline d, with probability
D/I over a uniformly random phase of s against the deadline grid.  The thread
whose deadline d lies in the burst wakes when the burst ends, so its latency
is (s + D) - d, plus its ordinary wake-up latency eps (a few us here).  Given
a deadline inside, d - s is uniform on [0, D), so the delay is uniform on
(0, D]:
  - the maximum reported latency is about D (+ eps), reached by a burst that
    starts just before a deadline;
  - a sample reaches the threshold theta when d lies in [s, s + D - theta],
    probability (D - theta)/I per burst, so the expected number of samples
    >= theta is N_bursts * (D - theta) / I (N_bursts = measured time / T), or,
    with the measured burst lengths D_j, sum_j max(0, D_j - theta) / I.
The phase must sweep uniformly: T is chosen so that T mod I is not a simple
fraction of I (10.317 ms: the phase steps by 317 us and only repeats after
1000 bursts; T = 10.3 ms would visit just 10 phases, 100 us apart, and the
count would depend on where the grid happens to fall).

Because the interferer records its real burst times on the same clock as the
probe's t0, the script also predicts, burst by burst, which deadline each
burst hits and the delay it causes ("phase-exact prediction"), and matches the
predicted exceedances with rtprobe's spike records (due time t_ns).

RT throttling (sched_rt_runtime_us / sched_rt_period_us, 95 % by default) would
add 50 ms stalls; the interferer's duty D/T is a few percent, far below it; the
script prints both.  A baseline run without the interferer shows the
exceedances this (noisy, virtualised) machine has on its own.

Usage (root, quiet machine):
    python3 bench/injected_interference.py [--cpu 1] [--bursts-us 300,600]
        [--period-us 10317] [--seconds 20] [--threshold-us 100] [--json FILE]
Prints a Markdown section for BENCHMARKS.md.  Exit 3 when not root or when
the machine cannot run it; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PROBE = REPO / "probe" / "build" / "rtprobe"
INTERVAL_NS = 1_000_000
WARMUP_S = 1
INTERFERER_PRIORITY = 90
MCL_CURRENT, MCL_FUTURE = 1, 2


def interferer(out: Path, cpu: int, burst_ns: int, period_ns: int,
               until_ns: int) -> int:
    """Spin burst_ns every period_ns at FIFO 90 on cpu until until_ns; log bursts."""
    gc.disable()
    try:
        os.sched_setaffinity(0, {cpu})
        os.sched_setscheduler(0, os.SCHED_FIFO,
                              os.sched_param(INTERFERER_PRIORITY))
    except OSError as exc:
        print(f"interferer: cannot run SCHED_FIFO {INTERFERER_PRIORITY} on CPU "
              f"{cpu}: {exc}; run as root", file=sys.stderr)
        return 3
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mlockall(MCL_CURRENT | MCL_FUTURE) != 0:
        print(f"interferer: mlockall: {os.strerror(ctypes.get_errno())}",
              file=sys.stderr)
        return 3
    now = time.monotonic_ns
    bursts = max(1, (until_ns - now()) // period_ns + 2)
    dues = [0] * bursts
    starts = [0] * bursts
    ends = [0] * bursts
    n = 0
    due = now() + period_ns
    while due < until_ns and n < bursts:
        delay = due - now()
        if delay > 0:
            time.sleep(delay / 1e9)
        # The CPU is ours from the timer's expiry at `due`, not from this
        # first clock read (tens of us later in Python): spin to due + D.
        start = t = now()
        stop = due + burst_ns
        while t < stop:
            t = now()
        dues[n] = due
        starts[n] = start
        ends[n] = t
        n += 1
        due += period_ns
    with out.open("w") as f:
        for i in range(n):
            f.write(f"{dues[i]} {starts[i]} {ends[i]}\n")
    return 0


@dataclass
class ProbeRun:
    """What one rtprobe cyclic run reported."""

    t0_ns: int
    measured_ns: int
    count: int
    max_ns: int
    exceed: int
    overruns: int
    spikes: list[tuple[int, int]] = field(default_factory=list)
    spikes_dropped: int = 0
    exit_code: int = 0


@dataclass
class Case:
    """One injected-interference case and its figures."""

    burst_us: int
    bursts: list[tuple[int, int]]  # (timer due, end of spinning), ns
    run: ProbeRun
    wake_lag: dict[int, int]  # due -> first clock read after waking - due, ns

    def window(self) -> list[tuple[int, int]]:
        """Bursts that start inside the measured part of the run."""
        lo = self.run.t0_ns + WARMUP_S * 10**9
        hi = lo + self.run.measured_ns
        return [(s, e) for s, e in self.bursts if lo <= s < hi]

    def predicted(self) -> list[tuple[int, int]]:
        """(due t_ns, delay ns) of the deadline each measured burst contains."""
        out = []
        t0 = self.run.t0_ns
        for s, e in self.window():
            k = -(-(s - t0) // INTERVAL_NS)
            due = t0 + k * INTERVAL_NS
            if due < e:
                out.append((due - t0, e - due))
        return out


def probe_cmd(cpu: int, seconds: int, threshold_us: int) -> list[str]:
    """The rtprobe command under test (the settings of docs/design.md, "Quality bars")."""
    return [str(PROBE), "cyclic", "--threads", "1", "--cpus", str(cpu),
            "--priority", "80", "--interval", "1ms", "--duration", f"{seconds}s",
            "--warmup", f"{WARMUP_S}s", "--threshold", f"{threshold_us}us"]


def all_cpus() -> None:
    """In a child before exec: allow every CPU again (the parent avoids the measured one)."""
    os.sched_setaffinity(0, range(os.cpu_count() or 1))


def run_probe(cmd: list[str]) -> ProbeRun:
    """Run rtprobe and pick the figures out of its NDJSON output."""
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                          preexec_fn=all_cpus)
    if proc.returncode not in (0, 1):
        sys.exit(f"injected_interference: {' '.join(cmd)} exited "
                 f"{proc.returncode}: {proc.stderr.strip()[:300]}")
    t0 = 0
    spikes: list[tuple[int, int]] = []
    result: dict[str, Any] | None = None
    for line in proc.stdout.splitlines():
        rec = json.loads(line)
        if rec["type"] == "start":
            t0 = int(rec["t0_ns"])
        elif rec["type"] == "spike":
            spikes.append((int(rec["t_ns"]), int(rec["latency_ns"])))
        elif rec["type"] == "result":
            result = rec
    if result is None or not result["series"]:
        sys.exit("injected_interference: rtprobe wrote no result record")
    ser = result["series"][0]
    return ProbeRun(t0_ns=t0, measured_ns=int(result["measured_ns"]),
                    count=int(ser["count"]), max_ns=int(ser["max_ns"]),
                    exceed=int(ser["exceed"][0]["count"]),
                    overruns=int(ser["overruns"]), spikes=spikes,
                    spikes_dropped=int(ser["spikes_dropped"]),
                    exit_code=proc.returncode)


def run_case(args: argparse.Namespace, burst_us: int, tmp: Path) -> Case:
    """One probe run with an interferer of burst_us every args.period_us."""
    log = tmp / f"bursts-{burst_us}.txt"
    lead_s = 0.3
    until = time.monotonic_ns() + int(
        (lead_s + WARMUP_S + args.seconds + 1.5) * 1e9)
    inter = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--interferer",
         str(log), "--cpu", str(args.cpu), "--burst-ns", str(burst_us * 1000),
         "--period-ns", str(args.period_us * 1000), "--until-ns", str(until)],
        preexec_fn=all_cpus)
    time.sleep(lead_s)
    if inter.poll() is not None:
        sys.exit(f"injected_interference: the interferer exited {inter.returncode}")
    run = run_probe(probe_cmd(args.cpu, args.seconds, args.threshold_us))
    if inter.wait() != 0:
        sys.exit(f"injected_interference: the interferer exited {inter.returncode}")
    rows = [tuple(map(int, ln.split())) for ln in log.read_text().splitlines()]
    return Case(burst_us, [(r[0], r[2]) for r in rows], run,
                {r[0]: r[1] - r[0] for r in rows})


def rt_limit() -> tuple[int, int]:
    """sched_rt_runtime_us and sched_rt_period_us."""
    base = Path("/proc/sys/kernel")
    return (int((base / "sched_rt_runtime_us").read_text()),
            int((base / "sched_rt_period_us").read_text()))


def us(ns: float) -> str:
    """Nanoseconds as microseconds with one decimal."""
    return f"{ns / 1000:.1f}"


def ratio(a: float, b: float) -> str:
    """a/b with two decimals, or a dash when b is 0."""
    return f"{a / b:.2f}" if b else "-"


def case_figures(case: Case, threshold_ns: int, period_ns: int,
                 baseline_exceed: int) -> dict[str, Any]:
    """Expected, predicted and reported figures of one case."""
    win = case.window()
    lengths = sorted(e - s for s, e in win)
    pred = case.predicted()
    pred_exc = [(t, d) for t, d in pred if d >= threshold_ns]
    reported = dict(case.run.spikes)
    matched = [reported[t] - d for t, d in pred_exc if t in reported]
    uniform = sum(max(0, n - threshold_ns) for n in lengths) / INTERVAL_NS
    nominal = (case.run.measured_ns / period_ns
               * max(0, case.burst_us * 1000 - threshold_ns) / INTERVAL_NS)
    extra = sorted(matched)
    eps = extra[len(extra) // 2] if extra else 0
    lags = sorted(case.wake_lag[s] for s, _ in win)
    # The probe's own wake-up latency eps pushes delays in [theta - eps,
    # theta) over the threshold too; the machine's own exceedances (baseline
    # run) come on top.
    corrected = sum(max(0, n + eps - threshold_ns) for n in lengths) / INTERVAL_NS
    return {
        "burst_us": case.burst_us, "bursts": len(win),
        "burst_median_ns": lengths[len(lengths) // 2] if lengths else 0,
        "burst_max_ns": lengths[-1] if lengths else 0,
        "wake_lag_median_ns": lags[len(lags) // 2] if lags else 0,
        "wake_lag_max_ns": lags[-1] if lags else 0,
        "expected_exceed_nominal": nominal,
        "expected_exceed": uniform,
        "predicted_exceed": len(pred_exc),
        "predicted_max_ns": max((d for _, d in pred), default=0),
        "matched_max_ns": max((reported[t] for t, _ in pred if t in reported),
                              default=0),
        "reported_exceed": case.run.exceed,
        "reported_max_ns": case.run.max_ns,
        "samples": case.run.count, "overruns": case.run.overruns,
        "spikes": len(case.run.spikes),
        "spikes_dropped": case.run.spikes_dropped,
        "matched": len(matched),
        "unpredicted_spikes": sum(1 for t in reported
                                  if t not in dict(pred_exc)),
        "extra_delay_median_ns": extra[len(extra) // 2] if extra else None,
        "expected_exceed_corrected": corrected + baseline_exceed,
        "stretched_bursts": sum(1 for n in lengths
                                if n > case.burst_us * 1000 + 50_000),
    }


def markdown(args: argparse.Namespace, base: ProbeRun,
             figs: list[dict[str, Any]]) -> str:
    """The BENCHMARKS.md section."""
    runtime, period = rt_limit()
    cmd = " ".join(probe_cmd(args.cpu, args.seconds, args.threshold_us))
    cmd = cmd.replace(str(REPO) + "/", "")
    lines = [
        "## injected interference", "",
        "Script: `bench/injected_interference.py` (root, quiet machine; `make bench` runs "
        f"it): `python3 bench/injected_interference.py --cpu {args.cpu} --bursts-us "
        f"{','.join(map(str, args.bursts_us))} --period-us {args.period_us} --seconds "
        f"{args.seconds} --threshold-us {args.threshold_us}`. Measured: `{cmd}`; "
        f"beside it a Python interferer at SCHED_FIFO {INTERFERER_PRIORITY} pinned to "
        f"CPU {args.cpu} spins D µs every T = {args.period_us / 1000:g} ms (phase "
        "against the 1 ms grid steps by "
        f"{args.period_us % 1000} µs, so it sweeps the grid uniformly) and logs each "
        "burst's due time, first clock read and end on CLOCK_MONOTONIC.",
        "",
        f"Machine: {machine()}; RT throttling {runtime} / {period} µs, interferer duty "
        + ", ".join(f"{f['burst_us'] / args.period_us * 100:.1f} %" for f in figs)
        + ".", "",
        "Expected (derivation in the script): a burst of length D < 1 ms holds the one "
        "deadline inside it until the burst ends, a delay uniform on (0, D]; so max ≈ D "
        "and the count of samples ≥ θ is Σ max(0, D_j − θ) / 1 ms over the measured "
        "bursts j (nominal: N_bursts·(D − θ)/1 ms). *Predicted* uses the logged burst "
        "times against the probe's deadline grid (t0 from its start record), burst by "
        "burst; *matched* counts predicted exceedances that rtprobe reported as a spike "
        "at the same deadline; *expected + ε + baseline* adds the probe's own wake-up ε "
        "(delays in [θ − ε, θ) cross θ too) and the baseline run's exceedances.", "",
        f"| D (µs) | bursts measured | burst length median / max (µs) "
        "| max expected ≈ D | max predicted "
        "| max reported: all / at burst deadlines "
        f"| ≥ {args.threshold_us} µs expected (nominal) "
        "| predicted | reported | reported / expected "
        "| expected + ε + baseline | reported / that | matched / predicted "
        "| ε = reported − predicted delay, median (µs) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| baseline (none) | 0 | - | - | - | {us(base.max_ns)} / - | 0 | 0 | {base.exceed} "
        "| - | - | - | - | - |",
    ]
    for f in figs:
        extra = f["extra_delay_median_ns"]
        lines.append(
            f"| {f['burst_us']} | {f['bursts']} | {us(f['burst_median_ns'])} / "
            f"{us(f['burst_max_ns'])} | {f['burst_us']}.0 "
            f"| {us(f['predicted_max_ns'])} | {us(f['reported_max_ns'])} / "
            f"{us(f['matched_max_ns'])} "
            f"| {f['expected_exceed']:.1f} ({f['expected_exceed_nominal']:.1f}) "
            f"| {f['predicted_exceed']} | {f['reported_exceed']} "
            f"| {ratio(f['reported_exceed'], f['expected_exceed'])} "
            f"| {f['expected_exceed_corrected']:.1f} "
            f"| {ratio(f['reported_exceed'], f['expected_exceed_corrected'])} "
            f"| {f['matched']} / {f['predicted_exceed']} "
            f"| {us(extra) if extra is not None else '-'} |")
    lines.append("")
    lines.append(
        f"Samples per run: {base.count} (baseline), "
        + ", ".join(f"{f['samples']} (D={f['burst_us']})" for f in figs)
        + "; overruns: " + ", ".join(str(f["overruns"]) for f in figs)
        + "; spike records dropped: "
        + ", ".join(str(f["spikes_dropped"]) for f in figs)
        + "; reported spikes at no predicted deadline: "
        + ", ".join(str(f["unpredicted_spikes"]) for f in figs)
        + "; bursts stretched > 50 µs by the VM: "
        + ", ".join(str(f["stretched_bursts"]) for f in figs)
        + "; interferer's first clock read after its timer, median / max (µs): "
        + ", ".join(f"{us(f['wake_lag_median_ns'])} / {us(f['wake_lag_max_ns'])}"
                    for f in figs) + ".")
    wrapped: list[str] = []
    for line in lines:
        if line.startswith("|") or len(line) <= 95:
            wrapped.append(line)
        else:
            wrapped.extend(textwrap.wrap(line, 95, break_on_hyphens=False,
                                         break_long_words=False))
    return "\n".join(wrapped) + "\n"


def machine() -> str:
    """One line naming the machine."""
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    virt = "KVM guest" if "hypervisor" in Path("/proc/cpuinfo").read_text() else "host"
    preempt = [w for w in platform.version().split() if w.startswith("PREEMPT")]
    kind = "PREEMPT_RT" if "PREEMPT_RT" in preempt else (
        " ".join(preempt) + ", not RT" if preempt else "not RT")
    return (f"{virt}, {os.cpu_count()} vCPUs ({cpu}), Linux {platform.release()} "
            f"({kind}), {time.strftime('%Y-%m-%d')}")


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu", type=int, default=1, help="measured CPU (default 1)")
    p.add_argument("--bursts-us", default="300,600",
                   help="burst lengths D in us, comma-separated (each < 1000)")
    p.add_argument("--period-us", type=int, default=10317,
                   help="burst period T in us (default 10317, not a multiple of 1 ms)")
    p.add_argument("--seconds", type=int, default=20, help="measured seconds per run")
    p.add_argument("--threshold-us", type=int, default=100, help="threshold theta")
    p.add_argument("--json", type=Path, help="also write the figures as JSON here")
    p.add_argument("--interferer", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--burst-ns", type=int, help=argparse.SUPPRESS)
    p.add_argument("--period-ns", type=int, help=argparse.SUPPRESS)
    p.add_argument("--until-ns", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.interferer is None:
        try:
            args.bursts_us = [int(v) for v in args.bursts_us.split(",")]
        except ValueError:
            p.error(f"--bursts-us: {args.bursts_us!r} is not a list of integers")
        if any(not 0 < d < 1000 for d in args.bursts_us):
            p.error("--bursts-us: each burst must be between 1 and 999 us (< interval)")
        if args.period_us % 1000 == 0 or args.period_us < 2000:
            p.error("--period-us: use a period >= 2000 us that is not a multiple of 1000")
        if args.seconds < 1:
            p.error("--seconds: give at least 1")
    return args


def main(argv: list[str]) -> int:
    """Run the baseline and each injected case; print the Markdown section."""
    args = parse_args(argv)
    if args.interferer is not None:
        return interferer(args.interferer, args.cpu, args.burst_ns,
                          args.period_ns, args.until_ns)
    if os.geteuid() != 0:
        print("injected_interference: needs root (SCHED_FIFO); run it with sudo",
              file=sys.stderr)
        return 3
    if not PROBE.is_file():
        print(f"injected_interference: {PROBE} missing; run `make -C probe`",
              file=sys.stderr)
        return 3
    if args.cpu not in os.sched_getaffinity(0) or len(os.sched_getaffinity(0)) < 2:
        print(f"injected_interference: --cpu {args.cpu} is not one of this process's "
              "CPUs, or only one CPU is available; pick another --cpu", file=sys.stderr)
        return 3
    runtime, period = rt_limit()
    duty = max(args.bursts_us) / args.period_us
    if runtime >= 0 and duty + 0.05 > runtime / period:
        print(f"injected_interference: interferer duty {duty:.0%} is too close to the "
              f"RT throttling limit {runtime}/{period}; lengthen --period-us",
              file=sys.stderr)
        return 3
    # Keep this script (and the probe's collector, which avoids measured CPUs)
    # off the measured CPU.
    os.sched_setaffinity(0, os.sched_getaffinity(0) - {args.cpu})
    threshold_ns = args.threshold_us * 1000
    with tempfile.TemporaryDirectory(prefix="rtbench-inject-") as tmp:
        base = run_probe(probe_cmd(args.cpu, args.seconds, args.threshold_us))
        cases = [run_case(args, d, Path(tmp)) for d in args.bursts_us]
    figs = [case_figures(c, threshold_ns, args.period_us * 1000, base.exceed)
            for c in cases]
    text = markdown(args, base, figs)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"baseline": base.__dict__ | {"spikes": None},
                                         "cases": figs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
