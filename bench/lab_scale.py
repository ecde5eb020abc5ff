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

With --check, every written run is then checked against its board's baseline as at
ingest (rtbench.regress.board.check_stored_run, board by board in --check-jobs
processes, oldest first with one run cache per process as the server keeps; median and
p95 per run, target p95 <= 50 ms), so that /regressions lists a full lab's checks rather than none;
the bench stops unless the planted regression is among them.  With --uploads N, after
the pages, 8 writer processes upload N typical runs each at once (target p95 <= 100 ms),
then 8 threads of one process (the earlier method, whose writers also wait for each
other's client-side work), and one writer N alone (the peer); the server checks each
upload as at ingest (bench/upload_concurrency.py).

    python3 bench/lab_scale.py [--boards 1000 --kernels 5 --runs 10] [--repeat 7]
                               [--only sqlite|postgresql] [--pg URL] [--sqlite PATH]
                               [--filled] [--check [--check-jobs 2]] [--uploads 25]
"""

from __future__ import annotations

import argparse
import multiprocessing
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

from bench.lab_data import REGRESSED_MAX_NS, Lab, make_lab, make_run, write_lab  # noqa: E402
from bench.server_bench import serve  # noqa: E402
from bench.upload_concurrency import (  # noqa: E402
    WRITERS,
    p95,
    uploads,
    uploads_in_processes,
)
from rtbench.interop.runjson import dumps  # noqa: E402
from rtbench.regress.board import RunCache, check_stored_run  # noqa: E402
from rtbench.store import Store  # noqa: E402
from rtbench.store.regressions import outcome_counts, run_ids  # noqa: E402
from rtbench.store.tokens import create_token  # noqa: E402

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


def check_boards(url: str, boards: list[str]) -> list[float]:
    """Check every run of boards against its board's baseline, as at ingest (oldest
    first, the server's run cache kept); the ms each run took."""
    took = []
    with Store.open(url) as store:
        cache = RunCache(store)
        for board in boards:
            for run_id in run_ids(store, board=board):
                t0 = time.perf_counter()
                check_stored_run(store, run_id, cache)
                took.append(1000 * (time.perf_counter() - t0))
    return took


def check_lab(label: str, url: str, lab: Lab, jobs: int) -> None:
    """Check every run of the lab in jobs processes (boards dealt out in turn), print the
    time per run, and stop unless the planted regression was found."""
    names = [lab.board_name(i) for i in range(lab.boards)]
    t0 = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        times = sorted(t for part in pool.starmap(
            check_boards, [(url, names[i::jobs]) for i in range(jobs)]) for t in part)
    checked = len(times)
    took = time.perf_counter() - t0
    with Store.open(url) as store:
        counts = outcome_counts(store)
        planted = outcome_counts(store, board=lab.planted_board)
    print(f"{label}: {checked} runs checked in {took:.0f} s by {jobs} processes "
          f"(per run: median {statistics.median(times):.1f} ms, p95 "
          f"{times[int(0.95 * (checked - 1))]:.1f} ms, target p95 <= 50 ms); "
          f"checks: {counts}", flush=True)
    if not (planted.get("confirmed") or planted.get("suspected")):
        raise SystemExit(f"{label}: the check found no regression on "
                         f"{lab.planted_board} ({planted})")


def upload_rows(label: str, url: str, base: str, lab: Lab, per_writer: int) -> list[str]:
    """Upload a typical run (of the lab's last kernel) from WRITERS processes at once,
    from WRITERS threads of one process (the earlier method), and from one writer alone
    (the peer); the table rows."""
    with Store.open(url) as store:
        token = create_token(store, "lab-scale")
    template = dumps(make_run(lab, 0, lab.kernels - 1, 0))
    alone = uploads(base, token, template, 1, per_writer)
    apart = uploads_in_processes(base, token, template, WRITERS, per_writer)
    threads = uploads(base, token, template, WRITERS, per_writer)
    return [f"| {label} | upload, {WRITERS} writer processes x {per_writer} (p95; median "
            f"{statistics.median(apart):.0f}) | {p95(apart):.1f} | {max(apart):.1f} | 100 |",
            f"| {label} | upload, {WRITERS} writer threads of one process x {per_writer} "
            f"(p95; median {statistics.median(threads):.0f}) | {p95(threads):.1f} | "
            f"{max(threads):.1f} | |",
            f"| {label} | upload, 1 writer x {per_writer} (the peer: p95; median "
            f"{statistics.median(alone):.0f}) | {p95(alone):.1f} | {max(alone):.1f} | |"]


def bench(label: str, url: str, lab: Lab, args: argparse.Namespace,
          filled: bool = False) -> list[str]:
    """Fill url with the lab (unless filled) and check it (--check), serve it, time each
    page and then the uploads (--uploads); Markdown rows."""
    if not filled:
        t0 = time.perf_counter()
        with Store.open(url) as store:
            runs = write_lab(store, lab)
        print(f"{label}: {runs} runs written in {time.perf_counter() - t0:.0f} s",
              flush=True)
    if args.check:
        check_lab(label, url, lab, args.check_jobs)
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
            med, worst = timed(get, args.repeat)
            rows.append(f"| {label} | {what} | {med:.1f} | {worst:.1f} | "
                        f"{'' if target is None else target} |")
        if args.uploads:
            rows += upload_rows(label, url, base, lab, args.uploads)
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
    parser.add_argument("--sqlite", type=Path,
                        help="SQLite file to write (or, with --filled, to read) instead of "
                             "a temporary one")
    parser.add_argument("--filled", action="store_true",
                        help="--pg or --sqlite already holds this lab (an earlier run's)")
    parser.add_argument("--check", action="store_true",
                        help="check every run against its board's baseline first")
    parser.add_argument("--check-jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--uploads", type=int, default=0,
                        help="uploads per writer after the pages (0: none)")
    args = parser.parse_args()
    lab = make_lab(args.boards, args.kernels, args.runs)
    rows = []
    if args.only != "sqlite":
        rows += bench("PostgreSQL", args.pg or cluster().fresh_database(), lab, args,
                      filled=args.filled and args.pg is not None)
    if args.only != "postgresql":
        with tempfile.TemporaryDirectory(prefix="rtbench-lab-") as tmp:
            path = args.sqlite or Path(tmp) / "lab.db"
            rows += bench("SQLite", f"sqlite:///{path}", lab, args,
                          filled=args.filled and args.sqlite is not None)
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
