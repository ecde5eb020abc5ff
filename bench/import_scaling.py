#!/usr/bin/env python3
"""Time `rtbench import` of lmbench files of growing size: is it linear?

Files of lmbench result lines (latency and bandwidth lines, as lat_pipe, lat_unix and
bw_pipe print them) of --sizes KiB each, made with a fixed seed.  Timed per file: the
importer alone (parse into a run) and the whole import (parse and store into a fresh
SQLite database, as `rtbench import` does).  The peer, timed in the same run: rtbench's
own JSON import of the same run (`export --format json` of what was stored), which stores
exactly the same measurements.  Printed: seconds and seconds per MiB for each size; a
linear importer keeps seconds per MiB flat as the size grows.

    python3 bench/import_scaling.py [--sizes 256,512,1024,2048] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rtbench.interop.lmbench import LmbenchImporter  # noqa: E402
from rtbench.interop.runjson import dumps, loads  # noqa: E402
from rtbench.store import Store  # noqa: E402


def lmbench_text(size_bytes: int, seed: int = 7) -> bytes:
    """lmbench result lines adding up to about size_bytes."""
    rng = random.Random(seed)
    lines: list[str] = []
    total = 0
    while total < size_bytes:
        for line in (f"Pipe latency: {rng.uniform(1, 20):.4f} microseconds",
                     f"AF_UNIX sock stream latency: {rng.uniform(1, 20):.4f} microseconds",
                     f"Pipe bandwidth: {rng.uniform(100, 2000):.2f} MB/sec"):
            lines.append(line)
            total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def timed(action: object, repeat: int) -> float:
    """The median wall time of repeat calls of action, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def store_once(runs: list[object]) -> None:
    """Store runs into a fresh SQLite database."""
    with tempfile.TemporaryDirectory() as tmp, Store.open(f"sqlite:///{tmp}/b.db") as store:
        for run in runs:
            store.add_bundle(run)  # type: ignore[arg-type]


def main() -> None:
    """Time every size and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,512,1024,2048", help="file sizes in KiB")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    lmbench = LmbenchImporter()
    print(f"{'KiB':>6} {'measurements':>12} {'parse s':>8} {'s/MiB':>6} {'import s':>8} "
          f"{'s/MiB':>6} {'peer json import s':>18} {'ratio':>6}")
    for kib in (int(k) for k in args.sizes.split(",")):
        data = lmbench_text(kib * 1024)
        mib = len(data) / (1 << 20)
        parse_s = timed(lambda d=data: lmbench.read(d, "lm.txt"), args.repeat)
        runs = lmbench.read(data, "lm.txt")
        import_s = timed(lambda d=data: store_once(lmbench.read(d, "lm.txt")), args.repeat)
        as_json = dumps(runs[0]).encode()
        peer_s = timed(lambda d=as_json: store_once([loads(d)]), args.repeat)
        count = len(runs[0].scenarios[0].measurements)
        print(f"{kib:>6} {count:>12} {parse_s:>8.3f} {parse_s / mib:>6.2f} {import_s:>8.2f} "
              f"{import_s / mib:>6.2f} {peer_s:>18.2f} {import_s / peer_s:>6.2f}")


if __name__ == "__main__":
    main()
