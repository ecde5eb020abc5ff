#!/usr/bin/env python3
"""What `rtprobe cyclic --trace` costs: p50 and p99 with and without tracing, in one run.

Each round runs, in an order that rotates from round to round, on the same CPU, interval
and priority:
  - `rtprobe cyclic` untraced,
  - `rtprobe cyclic --trace=on` (trace threshold and spike count as given),
  - cyclictest (rt-tests), the peer, so each figure has a ratio to it from the same run.
p50 and p99 come from each run's histogram (rtprobe's loglin7 result histogram, bucket
lower bounds; cyclictest's 1 us histogram, bucket midpoints); the table gives the median
over the rounds, the traced / untraced ratio and each rtprobe figure's ratio to the peer,
plus rtprobe's own CPU time (the collector reading trace_pipe) and the spikes it traced.

Usage: python3 bench/trace_overhead.py [--rounds 5] [--seconds 10] [--cpu 1]
           [--trace-threshold 100us] [--trace-max-spikes 20]
Run as root on a quiet machine with tracefs mounted.  Prints a Markdown section for
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from rtbench.rtprobe.wire import loglin7

REPO = Path(__file__).resolve().parent.parent
PROBE = REPO / "probe" / "build" / "rtprobe"


def quantile(pairs: list[tuple[float, int]], q: float) -> float:
    """The q-quantile (ns) of a histogram given as (value ns, count) pairs."""
    total = sum(c for _, c in pairs)
    need = max(1, int(np.ceil(q * total)))
    seen = 0
    for value, count in sorted(pairs):
        seen += count
        if seen >= need:
            return value
    raise ValueError("empty histogram")


def timed_run(cmd: list[str]) -> tuple[str, float]:
    """Run cmd; its stdout and the CPU seconds (user + system) it and its children took."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, _, usage = os.wait4(proc.pid, 0)
    return out, usage.ru_utime + usage.ru_stime


def rtprobe_run(args: argparse.Namespace, traced: bool) -> dict[str, float]:
    """One rtprobe cyclic run: p50, p99 (ns), CPU seconds, spikes traced."""
    cmd = [str(PROBE), "cyclic", "--cpus", str(args.cpu), "--priority", "80",
           "--interval", "1000us", "--duration", f"{args.seconds}s", "--warmup", "1s"]
    if traced:
        cmd += ["--trace=on", "--trace-threshold", args.trace_threshold,
                "--trace-max-spikes", str(args.trace_max_spikes)]
    out, cpu_s = timed_run(cmd)
    figures: dict[str, float] = {"cpu_s": cpu_s, "traced": 0.0}
    for line in out.splitlines():
        rec = json.loads(line)
        if rec.get("type") == "trace_summary":
            figures["traced"] = float(rec["spikes_traced"])
            if rec["note"] or not rec["restored"]:
                raise RuntimeError(f"tracing did not work: {rec['note']}")
        if rec.get("type") == "result":
            idx = [i for i, _ in rec["series"][0]["hist"]]
            counts = [c for _, c in rec["series"][0]["hist"]]
            lows = loglin7.lower(np.array(idx, dtype=np.int64))
            pairs = [(float(v), int(c)) for v, c in zip(lows, counts, strict=True)]
            figures["p50"] = quantile(pairs, 0.5)
            figures["p99"] = quantile(pairs, 0.99)
    if "p50" not in figures:
        raise RuntimeError(f"rtprobe gave no result: {' '.join(cmd)}")
    return figures


def peer_run(args: argparse.Namespace) -> dict[str, float]:
    """One cyclictest run: p50, p99 (ns) from its 1 us histogram, CPU seconds."""
    cmd = ["cyclictest", "-m", "-p80", "-t1", "-i1000", "-a", str(args.cpu), "-q",
           "-D", f"{args.seconds + 1}s", "-h", "100000"]
    out, cpu_s = timed_run(cmd)
    pairs = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit() and int(fields[1]):
            pairs.append((int(fields[0]) * 1000 + 500.0, int(fields[1])))
    if not pairs:
        raise RuntimeError("cyclictest gave no histogram")
    return {"p50": quantile(pairs, 0.5), "p99": quantile(pairs, 0.99), "cpu_s": cpu_s}


def main() -> int:
    """Run the rounds and print the Markdown section."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--trace-threshold", default="100us")
    ap.add_argument("--trace-max-spikes", type=int, default=20)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("trace_overhead.py: run as root (SCHED_FIFO, tracefs)", file=sys.stderr)
        return 3
    subprocess.run(["make", "-s", "-C", str(REPO / "probe")], check=True)
    kinds = ["untraced", "traced", "cyclictest"]
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
    for r in range(args.rounds):
        for kind in kinds[r % 3:] + kinds[:r % 3]:
            if kind == "cyclictest":
                runs[kind].append(peer_run(args))
            else:
                runs[kind].append(rtprobe_run(args, kind == "traced"))

    def med(kind: str, key: str) -> float:
        return statistics.median(f[key] for f in runs[kind])

    print(f"`python3 bench/trace_overhead.py --rounds {args.rounds} --seconds {args.seconds} "
          f"--cpu {args.cpu} --trace-threshold {args.trace_threshold} --trace-max-spikes "
          f"{args.trace_max_spikes}` on {platform.node()} ({platform.release()}, "
          f"{os.cpu_count()} CPUs), {time.strftime('%Y-%m-%d')}; medians over the rounds.\n")
    print("| run | p50 us | p99 us | p50 / cyclictest | p99 / cyclictest | CPU s | "
          "spikes traced |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    peer50, peer99 = med("cyclictest", "p50"), med("cyclictest", "p99")
    for kind in kinds:
        traced = f"{med(kind, 'traced'):.0f}" if kind == "traced" else "-"
        print(f"| {kind} | {med(kind, 'p50') / 1e3:.1f} | {med(kind, 'p99') / 1e3:.1f} | "
              f"{med(kind, 'p50') / peer50:.2f} | {med(kind, 'p99') / peer99:.2f} | "
              f"{med(kind, 'cpu_s'):.2f} | {traced} |")
    print(f"\ntraced / untraced: p50 {med('traced', 'p50') / med('untraced', 'p50'):.2f}, "
          f"p99 {med('traced', 'p99') / med('untraced', 'p99'):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
