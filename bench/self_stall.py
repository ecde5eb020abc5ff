#!/usr/bin/env python3
"""Does rtbench's own waiting become latency?  Two stalls of the probe's output side, each
across the end of the warm-up, against one or more rtprobe builds:

  pipe     stdout on a 4 KiB pipe that nobody reads for --stall seconds (a slow ssh link
           or serial console), then read to the end;
  hog      a SCHED_FIFO 10 busy loop on the collector's CPU for --stall seconds (the
           collector is SCHED_OTHER, pinned away from the measured CPU).

`cyclic --cpus LAST --warmup 500ms --window 100ms --duration 1500ms --priority 95`; prints
per build and stall the largest stored sample (measured and warm-up), the overruns, the
windows merged and the records dropped.  A build whose measuring thread waits for its
collector stores the stall itself as a sample.

Usage: python3 bench/self_stall.py RTPROBE [RTPROBE...] [--stall 1.2] [--tries 3]
Run as root on a machine with two CPUs or more.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
import time
from typing import Any

F_SETPIPE_SZ = 1031
CPUS = sorted(os.sched_getaffinity(0))
HOG = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    pass
"""


def args(binary: str) -> list[str]:
    """The run both stalls use."""
    return [binary, "cyclic", "--cpus", str(CPUS[-1]), "--warmup", "500ms", "--window",
            "100ms", "--duration", "1500ms", "--priority", "95"]


def pipe_stall(binary: str, stall_s: float) -> bytes:
    """Run with stdout on an unread 4 KiB pipe for stall_s, then read it all."""
    read_fd, write_fd = os.pipe()
    fcntl.fcntl(write_fd, F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen(args(binary), stdout=write_fd)
    os.close(write_fd)
    time.sleep(stall_s)
    chunks = []
    while chunk := os.read(read_fd, 1 << 16):
        chunks.append(chunk)
    os.close(read_fd)
    proc.wait()
    return b"".join(chunks)


def hog_stall(binary: str, stall_s: float) -> bytes:
    """Run with a SCHED_FIFO hog on the collector's CPU for stall_s after the start."""
    proc = subprocess.Popen(args(binary), stdout=subprocess.PIPE)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    subprocess.run([sys.executable, "-c", HOG, str(CPUS[0]), str(stall_s)], check=True)
    out, _ = proc.communicate()
    return first + out


def summary(out: bytes) -> dict[str, Any]:
    """Largest samples, overruns, merges and drops of the run's result record."""
    result = [json.loads(line) for line in out.splitlines()][-1]
    series = result["series"]
    return {
        "max_us": max(s["max_ns"] or 0 for s in series) / 1e3,
        "warmup_max_us": max(s["warmup"]["max_ns"] or 0 for s in series) / 1e3,
        "overruns": sum(s["overruns"] + s["warmup"]["overruns"] for s in series),
        "merged": sum(s.get("windows_merged", 0) for s in series),
        "dropped": (result.get("output") or {}).get("dropped_records", 0),
    }


def main() -> None:
    """Each build, each stall, --tries times."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--stall", type=float, default=1.2)
    ap.add_argument("--tries", type=int, default=3)
    opts = ap.parse_args()
    if len(CPUS) < 2:
        sys.exit("self_stall: needs two CPUs")
    for _ in range(opts.tries):
        for binary in opts.binaries:
            for name, stall in (("pipe", pipe_stall), ("hog", hog_stall)):
                print(f"{binary} {name}: {summary(stall(binary, opts.stall))}", flush=True)


if __name__ == "__main__":
    main()
