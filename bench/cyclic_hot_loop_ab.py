#!/usr/bin/env python3
"""Compare the cyclic hot loop of two rtprobe builds: user instructions per sample.

callgrind with --toggle-collect=cyclic_thread_main counts only the measuring thread (the
sleep/clock/series_add loop), not the collector's once-a-second window record, whose cost
varies from try to try; (count(3000 loops) - count(1000 loops)) / 2000, so start-up and
warm-up cancel out.  Builds are measured alternately, `--tries` times each; prints the
sorted values and the median.

Usage: python3 bench/cyclic_hot_loop_ab.py BEFORE_RTPROBE AFTER_RTPROBE [--tries 3]
Run as root (SCHED_FIFO 80 on CPU 1, as bench/cyclic_vs_cyclictest.py).
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path


def thread_ir(binary: str, loops: int, cpu: int) -> int:
    """Instructions of cyclic_thread_main (inclusive) for a run of `loops` samples."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=cyclic_thread_main",
                        f"--callgrind-out-file={out}", binary, "cyclic", "--threads", "1",
                        "--cpus", str(cpu), "--priority", "80", "--interval", "1000us",
                        "--loops", str(loops)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        for line in out.read_text().splitlines():
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise RuntimeError(f"no callgrind totals for {binary}")


def main() -> None:
    """Measure both builds alternately and print the per-sample figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--tries", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1)
    args = ap.parse_args()
    res: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(args.tries):
        for name in ("before", "after"):
            binary = getattr(args, name)
            res[name].append((thread_ir(binary, 3000, args.cpu) -
                              thread_ir(binary, 1000, args.cpu)) / 2000)
    for name, values in res.items():
        values.sort()
        print(f"{name}: {values} median {values[len(values) // 2]:.1f}")


if __name__ == "__main__":
    main()
