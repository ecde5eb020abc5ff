#!/usr/bin/env python3
"""Time the lab pages over a big lab: 1,000 boards x 5 kernels x 10 runs (50,000 runs,
two cells each) written by bench/lab_data.py through the store, on PostgreSQL (a private
cluster made with initdb/pg_ctl in a temporary directory, as the tests do; or --pg URL)
and on SQLite.  Generation is not timed.

Timed on a live `rtbench serve` on a free loopback port, warm (one untimed request
first), as the client sees them: GET /matrix and /api/v1/matrix, the planted board's
/boards/NAME and /api/v1/boards/NAME/history, /boards; and /regressions and /metrics
where this build has them (otherwise the row says so).  Targets (issue 26): matrix,
history and regressions <= 300 ms, /metrics <= 500 ms.

    python3 bench/lab_scale.py [--boards 1000 --kernels 5 --runs 10] [--repeat 7]
                               [--only sqlite|postgresql] [--pg URL]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "host"))

from pg_cluster import cluster  # noqa: E402

from bench.lab_data import REGRESSED_MAX_NS, Lab, make_lab, write_lab  # noqa: E402
from bench.server_bench import serve  # noqa: E402
from rtbench.store import Store  # noqa: E402

# (what, path template, target ms)
PAGES = (("GET /matrix (HTML, page 1 of 100 boards)", "/matrix", 300),
         ("GET /matrix?page=6 (HTML, the planted board's page)", "/matrix?page=6", 300),
         ("GET /api/v1/matrix (page 1 of 100 boards)", "/api/v1/matrix", 300),
         ("GET /api/v1/matrix?per_page=1000 (every board)", "/api/v1/matrix?per_page=1000",
          None),
         ("GET /boards/NAME (history page)", "/boards/{board}", 300),
         ("GET /api/v1/boards/NAME/history", "/api/v1/boards/{board}/history", 300),
         ("GET /boards (boards list)", "/boards", None),
         ("GET /regressions", "/regressions", 300),
         ("GET /metrics", "/metrics", 500))


def timed(fn: Callable[[], None], repeat: int) -> tuple[float, float]:
    """(median, max) wall time in ms of repeat calls of fn (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


def bench(label: str, url: str, lab: Lab, repeat: int, filled: bool = False) -> list[str]:
    """Fill url with the lab (unless filled), serve it, time each page; Markdown rows."""
    if not filled:
        t0 = time.perf_counter()
        with Store.open(url) as store:
            runs = write_lab(store, lab)
        print(f"{label}: {runs} runs written in {time.perf_counter() - t0:.0f} s",
              flush=True)
    proc, base = serve(url)
    rows = []
    try:
        client = httpx.Client(timeout=120)
        matrix = client.get(f"{base}/api/v1/matrix?board={lab.planted_board}").json()
        red = [(c["board"], c["kernel"]) for s in matrix["suites"] for c in s["cells"]
               if c["state"] == "over threshold" and c["worst_max_ns"] == REGRESSED_MAX_NS]
        expected = [(lab.planted_board, k) for k in lab.kernel_names[lab.regressed_from:]]
        if sorted(red) != sorted(expected):
            raise SystemExit(f"{label}: the matrix does not show the planted regression "
                             f"({red[:5]} instead of {expected})")
        for what, template, target in PAGES:
            path = template.format(board=lab.planted_board)
            status = client.get(base + path).status_code
            if status == 404:
                rows.append(f"| {label} | {what} | not in this build | | "
                            f"{target or ''} |")
                continue

            def get(path: str = path) -> None:
                answer = client.get(base + path)
                assert answer.status_code == 200, answer.text[:200]
            med, worst = timed(get, repeat)
            rows.append(f"| {label} | {what} | {med:.1f} | {worst:.1f} | "
                        f"{'' if target is None else target} |")
    finally:
        proc.terminate()
        proc.wait(30)
    return rows


def main() -> None:
    """Run the backends asked for and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=1000)
    parser.add_argument("--kernels", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--pg", help="PostgreSQL URL to use instead of a private cluster")
    parser.add_argument("--filled", action="store_true",
                        help="--pg already holds this lab (written by an earlier run)")
    args = parser.parse_args()
    lab = make_lab(args.boards, args.kernels, args.runs)
    rows = []
    if args.only != "sqlite":
        rows += bench("PostgreSQL", args.pg or cluster().fresh_database(), lab, args.repeat,
                      filled=args.filled and args.pg is not None)
    if args.only != "postgresql":
        with tempfile.TemporaryDirectory(prefix="rtbench-lab-") as tmp:
            rows += bench("SQLite", f"sqlite:///{Path(tmp) / 'lab.db'}", lab, args.repeat)
    load = " / ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"{args.boards} boards x {args.kernels} kernels x {args.runs} runs; median and "
          f"max of {args.repeat} warm requests (ms), client-side wall time; "
          f"{os.cpu_count()} CPUs, load average now {load}")
    print("| database | request | median ms | max ms | target ms |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
