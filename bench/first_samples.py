#!/usr/bin/env python3
"""The first 100 samples of `rtbench cyclictest` (rtprobe cyclic) against rt-tests'
cyclictest: is the first sample as honest as the rest?

Each round runs, alternating which goes first, the same cyclictest command line
`-m -p80 -t1 -a1 -i1000 -l100 -v -q` through real cyclictest and through `rtbench
cyclictest` (which runs `rtprobe cyclic`), and, with --before, through `rtbench cyclictest`
with an older rtprobe (RTBENCH_PROBE) for the figures before a change.  From each run's
`-v` samples (whole µs) it keeps the first sample and the median of samples 2-100.
Prints, per tool, the median and the largest first sample over the rounds, the median of the
rest, and each tool's ratio to cyclictest's.

Usage: python3 bench/first_samples.py [--rounds 10] [--before OLD_RTPROBE] [--stress N]
Run as root.  --stress N keeps N busy loops running meanwhile (a busy machine is where a
slow thread set-up showed: the issue saw first samples of 4-79 ms).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ARGS = ["-m", "-p80", "-t1", "-a1", "-i1000", "-l100", "-v", "-q"]
SAMPLE = re.compile(r"^\s*0:\s*(\d+):\s*(\d+)\s*$", re.M)


def samples(out: str) -> list[int]:
    """The -v samples (µs) of thread 0, in order of their cycle number."""
    pairs = sorted((int(c), int(v)) for c, v in SAMPLE.findall(out))
    return [v for _, v in pairs]


def run_tool(tool: str, probe: Path | None, db: Path) -> list[int]:
    """One run of a tool; its first 100 samples."""
    if tool == "cyclictest":
        cmd = ["cyclictest", *ARGS]
        env = dict(os.environ)
    else:
        cmd = [sys.executable, "-m", "rtbench", "cyclictest", "--db", str(db), *ARGS]
        env = dict(os.environ, PYTHONPATH=str(REPO), RTBENCH_PROBE=str(probe))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    got = samples(done.stdout)
    if done.returncode not in (0, 1) or len(got) < 100:
        raise SystemExit(f"{' '.join(cmd)}: exit {done.returncode}, {len(got)} samples\n"
                         f"{done.stderr[-2000:]}")
    return got[:100]


def main() -> None:
    """Run the rounds and print the Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--before", type=Path, help="an older rtprobe to measure as well")
    ap.add_argument("--stress", type=int, default=0, help="busy loops to run meanwhile")
    opts = ap.parse_args()
    subprocess.run(["make", "-s", "-C", str(REPO / "probe")], check=True)
    tools: dict[str, Path | None] = {"cyclictest": None,
                                     "rtbench cyclictest": REPO / "probe/build/rtprobe"}
    if opts.before:
        tools["rtbench cyclictest, before"] = opts.before.resolve()
    busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
            for _ in range(opts.stress)]
    first: dict[str, list[int]] = {t: [] for t in tools}
    rest: dict[str, list[float]] = {t: [] for t in tools}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(opts.rounds):
                order = list(tools) if r % 2 == 0 else list(reversed(tools))
                for tool in order:
                    got = run_tool(tool, tools[tool], Path(tmp) / "b.db")
                    first[tool].append(got[0])
                    rest[tool].append(statistics.median(got[1:]))
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    peer_first = statistics.median(first["cyclictest"])
    print(f"Machine: {platform.node()}, {os.cpu_count()} CPUs, Linux {platform.release()}; "
          f"{opts.rounds} rounds, {opts.stress} busy loops\n")
    print("| tool | first sample, median (µs) | first sample, largest (µs) | "
          "samples 2-100, median of medians (µs) | first sample / cyclictest's |")
    print("|---|---:|---:|---:|---:|")
    for tool in tools:
        med = statistics.median(first[tool])
        ratio = med / peer_first if peer_first else float("nan")
        print(f"| {tool} | {med:g} | {max(first[tool])} | {statistics.median(rest[tool]):g} "
              f"| {ratio:.2f} |")
    print("\nfirst samples per round (µs):")
    for tool in tools:
        print(f"  {tool}: {first[tool]}")


if __name__ == "__main__":
    main()
