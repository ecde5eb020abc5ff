#!/usr/bin/env python3
"""Time `rtbench export --format openmetrics-history` and its backfill by promtool over a
generated lab (bench/lab_data.py: N boards x K kernels x R runs, two series each), on
SQLite.  Generation is not timed.  Reports the export's wall time and peak RSS, the
file's size and sample lines, and `promtool tsdb create-blocks-from openmetrics`'s wall
time, and checks with `promtool tsdb dump` that every run's rtbench_cell_run_id sample
reached the TSDB (exit 1 if not).

    python3 bench/history_export.py [--boards 200 --kernels 5 --runs 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.lab_data import make_lab, write_lab  # noqa: E402
from rtbench.store import Store  # noqa: E402


def main() -> None:
    """Generate, export, backfill, check; print one line per figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=200)
    parser.add_argument("--kernels", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    promtool = shutil.which("promtool")
    with tempfile.TemporaryDirectory(prefix="rtbench-history-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'lab.db'}"
        lab = make_lab(args.boards, args.kernels, args.runs)
        start = time.monotonic()
        with Store.open(url) as store:
            runs = write_lab(store, lab)
        print(f"lab: {runs} runs ({2 * runs} cell rows) seeded in "
              f"{time.monotonic() - start:.0f} s")
        out = Path(tmp) / "lab.om"
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "rtbench", "export", "--format",
                        "openmetrics-history", "-o", str(out), "--db", url], check=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
        took = time.monotonic() - start
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        text = out.read_text()
        samples = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
        print(f"export: {took:.2f} s wall, peak RSS {rss:.0f} MiB, "
              f"{out.stat().st_size / 2**20:.1f} MiB, {samples} samples")
        if promtool is None:
            print("promtool: not installed (Debian package prometheus); no backfill")
            return
        blocks = Path(tmp) / "tsdb"
        start = time.monotonic()
        subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(out),
                        str(blocks)], check=True, stdout=subprocess.DEVNULL)
        took = time.monotonic() - start
        (blocks / "wal").mkdir(exist_ok=True)
        dump = subprocess.run([promtool, "tsdb", "dump", "--match",
                               '{__name__="rtbench_cell_run_id"}', str(blocks)],
                              check=True, capture_output=True, text=True).stdout
        found = sum(1 for line in dump.splitlines() if line.strip())
        print(f"promtool create-blocks-from: {took:.2f} s wall; run-id samples in the "
              f"TSDB: {found} of {2 * runs}")
        if found != 2 * runs:
            sys.exit(1)


if __name__ == "__main__":
    main()
