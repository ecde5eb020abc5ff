#!/usr/bin/env python3
"""Time the reports of a 49-cell suite (docs/design.md, "Quality bars": in seconds).

Builds, in a temporary SQLite store and through the store API, a synthetic run
of 7 scenarios x 7 tests = 49 measurements, each with 2 series of 60 one-second
windows at 1 kHz (60 000 samples per series: a lognormal body with a sparse
heavy tail whose scale changes with the scenario, as loaded machines show),
its spikes, a result record and each scenario's achieved load intensity.  The
store is filled once (not timed); then it times, separately:

  - reading the run back (`Store.get_run`),
  - the HTML report (`rtbench.report.html.write_html_report`), and
  - the terminal summary (`summary_table` + `load_table`, rendered by rich to
    a string of 120 columns),

each the best and the median of --repeat tries.

    python3 bench/report_49.py [--scenarios 7] [--tests 7] [--windows 60]
        [--repeat 3] [--profile N]
--profile N prints the N most expensive functions of one HTML report (cProfile).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402

from rtbench.bundle import RunDetail  # noqa: E402
from rtbench.report.html import write_html_report  # noqa: E402
from rtbench.report.terminal import load_table, summary_table  # noqa: E402
from rtbench.rtprobe.wire import loglin7 as hist  # noqa: E402
from rtbench.rtprobe.wire.records import ProbeOutput  # noqa: E402
from rtbench.store import Store  # noqa: E402

S = "rtprobe/1"
INTERVAL_NS = 1_000_000
THRESHOLDS_NS = [50_000, 100_000]
SCENARIOS = ["idle", "cpu", "sched", "mem", "io", "net", "timer"]
TESTS = ["cyclic", "cyclic-100us", "periodic", "clock", "wakeup-futex", "wakeup-pipe",
         "noise"]


def pairs(values: np.ndarray) -> list[list[int]]:
    """Sparse loglin7 histogram of values as JSON pairs."""
    idx, cnt = hist.from_values(values)
    return [[int(i), int(c)] for i, c in zip(idx, cnt, strict=True)]


def latencies(rng: np.random.Generator, n: int, load: float) -> np.ndarray:
    """n latencies (ns): lognormal body around 5-15 us plus a sparse Pareto tail."""
    body = rng.lognormal(8.5 + 0.4 * load, 0.5, n)
    tail = rng.random(n) < 0.002 * (1 + load)
    body[tail] += (rng.pareto(2.5, int(tail.sum())) + 1) * 20_000 * (1 + load)
    return body.astype(np.int64) + 1000


def measurement_lines(rng: np.random.Generator, series: int, windows: int,
                      load: float) -> list[str]:
    """NDJSON of one cyclic-shaped measurement (start, windows, spikes, result)."""
    per_window = 10**9 // INTERVAL_NS
    start = {
        "schema": S, "type": "start", "tool": "rtprobe", "version": "0.1.0",
        "test": "cyclic", "simulated": True, "simulate": "1",
        "argv": ["rtprobe", "cyclic", "--duration", f"{windows}s"],
        "clock": "monotonic", "t0_ns": 1000, "t0_unix_ns": 1_795_000_000 * 10**9,
        "hist_layout": "loglin7", "window_ns": 10**9,
        "common": {"threads": series, "thresholds_ns": THRESHOLDS_NS,
                   "warmup_ns": 10**9, "worst_n": 10},
        "params": {"interval_ns": INTERVAL_NS, "mode": "abs"},
        "series": [{"index": i, "label": f"cpu{i}", "cpu": i} for i in range(series)]}
    lines = [json.dumps(start, separators=(",", ":"))]
    measured: dict[int, list[np.ndarray]] = {s: [] for s in range(series)}
    warm: dict[int, np.ndarray] = {}
    spikes = []
    for w in range(windows + 1):
        for s in range(series):
            lat = latencies(rng, per_window, load)
            if w == 0:
                warm[s] = lat
            else:
                measured[s].append(lat)
                for k in np.flatnonzero(lat >= THRESHOLDS_NS[0])[:64]:
                    level = max(t for t in THRESHOLDS_NS if lat[k] >= t)
                    spikes.append({"schema": S, "type": "spike", "series": s,
                                   "t_ns": int(w * 10**9 + k * INTERVAL_NS),
                                   "latency_ns": int(lat[k]), "threshold_ns": level})
            lines.append(json.dumps({
                "schema": S, "type": "window", "series": s, "index": w,
                "warmup": w == 0, "start_ns": w * 10**9, "end_ns": (w + 1) * 10**9,
                "count": per_window, "min_ns": int(lat.min()), "max_ns": int(lat.max()),
                "sum_ns": int(lat.sum()), "overruns": 0, "early": 0,
                "exceed": [int((lat >= t).sum()) for t in THRESHOLDS_NS],
                "hist": pairs(lat)}, separators=(",", ":")))
    lines.extend(json.dumps(sp, separators=(",", ":")) for sp in spikes)
    result_series = []
    for s in range(series):
        lat = np.concatenate(measured[s])
        order = np.argsort(-lat, kind="stable")[:10]
        wl = warm[s]
        result_series.append({
            "index": s, "label": f"cpu{s}", "cpu": s, "count": int(lat.size),
            "min_ns": int(lat.min()), "max_ns": int(lat.max()), "sum_ns": int(lat.sum()),
            "overruns": 0, "early": 0,
            "exceed": [{"threshold_ns": t, "count": int((lat >= t).sum())}
                       for t in THRESHOLDS_NS],
            "worst": [{"t_ns": int(10**9 + k * INTERVAL_NS), "latency_ns": int(lat[k])}
                      for k in order],
            "warmup": {"count": int(wl.size), "min_ns": int(wl.min()),
                       "max_ns": int(wl.max()), "sum_ns": int(wl.sum()), "overruns": 0},
            "hist": pairs(lat), "spikes_dropped": 0, "raw_dropped": 0, "error": None})
    fails = any(r["exceed"][-1]["count"] for r in result_series)
    lines.append(json.dumps({
        "schema": S, "type": "result", "test": "cyclic",
        "status": "fail" if fails else "ok", "exit_code": 1 if fails else 0,
        "reason": None, "simulated": True, "elapsed_ns": (windows + 1) * 10**9,
        "measured_ns": windows * 10**9, "series": result_series,
        "verdicts": [{"name": f"threshold {t // 1000}us", "pass": True, "detail": "-"}
                     for t in THRESHOLDS_NS],
        "data": {}}, separators=(",", ":")))
    return lines


def build_run(store: Store, scenarios: int, tests: int, series: int,
              windows: int) -> int:
    """Store the synthetic run and return its id."""
    rng = np.random.default_rng(49)
    sysinfo = {"uname": {"release": "6.18.44-bench", "machine": "x86_64",
                         "nodename": "bench"},
               "cpu_model": "Bench CPU", "preempt_rt": False, "clocksource": "tsc"}
    run_id = store.create_run(
        suite="bench49", suite_source="# synthetic 7 x 7 suite", scale=1.0,
        hostname="bench", target="local", sysinfo=sysinfo,
        preflight=[{"name": "PREEMPT_RT", "value": "no", "severity": "warn",
                    "advice": "use a PREEMPT_RT kernel"}],
        tool_versions={"rtbench": "bench", "rtprobe": "0.1.0"},
        command_line=["rtbench", "run", "bench49"], simulated=True)
    for i in range(scenarios):
        name = SCENARIOS[i % len(SCENARIOS)] + ("" if i < len(SCENARIOS) else f"-{i}")
        loads = [] if i == 0 else [{"kind": name, "rate": 50, "cpus": "0"}]
        sid = store.add_scenario(run_id, name=name, loads=loads, load_cpus="0",
                                 measure_cpus="1")
        for j in range(tests):
            test = TESTS[j % len(TESTS)] + ("" if j < len(TESTS) else f"-{j}")
            output = ProbeOutput.from_lines(
                measurement_lines(rng, series, windows, load=i / scenarios))
            store.add_measurement(
                sid, name=test, test="cyclic", params={"interval": "1ms"},
                command=["rtprobe", "cyclic"], output=output,
                status=output.result.status if output.result else "error",
                thresholds_ns=THRESHOLDS_NS)
        store.set_scenario_intensity(sid, {
            "cpu_busy_pct": 10.0 + 12 * i, "ctxt_per_s": 2000.0 * (i + 1),
            "irq_per_s": 1500.0 * (i + 1),
            "loads": [{"kind": name, "target": 50, "achieved": 49.5, "unit": "%"}]
            if i else [],
            "placement": {"rule": "split", "load_cpus": "0", "measure_cpus": "1"}})
    store.finish_run(run_id, "ok")
    return run_id


def terminal_text(run: RunDetail) -> str:
    """The summary and load tables as rendered text."""
    console = Console(file=io.StringIO(), width=120, force_terminal=False,
                      color_system=None)
    console.print(summary_table(run))
    loads = load_table(run)
    if loads is not None:
        console.print(loads)
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


CPU_TIMES: dict[int, list[float]] = {}  # id(list of wall times) -> CPU seconds of each call
LOADS: list[float] = []


def cpu_seconds() -> float:
    """CPU time of this process and of its reaped children (the report's workers)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def timed(fn: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    """Seconds of each of repeat calls of fn, and its last value (CPU seconds of each
    call are kept in CPU_TIMES under the returned list's id)."""
    times: list[float] = []
    used: list[float] = []
    value = None
    for _ in range(repeat):
        t, c = time.perf_counter(), cpu_seconds()
        value = fn()
        times.append(time.perf_counter() - t)
        used.append(cpu_seconds() - c)
        LOADS.append(os.getloadavg()[0])
    CPU_TIMES[id(times)] = used
    return times, value


def main(argv: list[str]) -> int:
    """Build the run, time the reports, print a Markdown paragraph."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenarios", type=int, default=7)
    p.add_argument("--tests", type=int, default=7)
    p.add_argument("--series", type=int, default=2)
    p.add_argument("--windows", type=int, default=60)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--profile", type=int, default=0, metavar="N")
    args = p.parse_args(argv)
    for opt in ("scenarios", "tests", "series", "windows", "repeat"):
        if getattr(args, opt) < 1:
            p.error(f"--{opt}: give at least 1")
    with tempfile.TemporaryDirectory(prefix="rtbench-report49-") as tmp:
        store = Store.open(f"sqlite:///{tmp}/results.db")
        t = time.perf_counter()
        run_id = build_run(store, args.scenarios, args.tests, args.series, args.windows)
        build_s = time.perf_counter() - t
        read, run = timed(lambda: store.get_run(run_id), args.repeat)
        html_path = Path(tmp) / "report.html"
        html, _ = timed(lambda: write_html_report(run, html_path), args.repeat)
        html_bytes = html_path.stat().st_size
        term, text = timed(lambda: terminal_text(run), args.repeat)
        if args.profile:
            prof = cProfile.Profile()
            prof.runcall(write_html_report, run, html_path)
            pstats.Stats(prof).sort_stats("cumulative").print_stats(args.profile)
        store.close()
    cells = sum(len(sc.measurements) for sc in run.scenarios)

    def fig(times: list[float]) -> str:
        """best / median wall seconds | median CPU seconds."""
        s = sorted(times)
        c = sorted(CPU_TIMES[id(times)])
        return f"{s[0]:.2f} / {s[len(s) // 2]:.2f} | {c[len(c) // 2]:.2f}"

    print(f"Report of a {cells}-cell suite: `bench/report_49.py` (`python3 "
          f"bench/report_49.py --scenarios {args.scenarios} --tests {args.tests} "
          f"--windows {args.windows} --repeat {args.repeat}`): a synthetic run of "
          f"{args.scenarios} scenarios x {args.tests} tests, {args.series} series "
          f"x {args.windows} one-second windows x 1000 samples each, stored through the "
          f"store API in a temporary SQLite file (not timed: {build_s:.1f} s). Python "
          f"{platform.python_version()}, {os.cpu_count()} CPUs, 1-minute load average "
          f"{min(LOADS):.1f}-{max(LOADS):.1f} while timing; wall best / median of "
          f"{args.repeat} and median CPU seconds (this process and its workers):\n")
    print("| step | wall s | CPU s |\n|---|---:|---:|")
    print(f"| read the run back (`Store.get_run`) | {fig(read)} |")
    print(f"| HTML report (`write_html_report`, {html_bytes / 1e6:.1f} MB) | {fig(html)} |")
    print(f"| terminal summary + load table ({len(text.splitlines())} lines) | {fig(term)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
