#!/usr/bin/env python3
"""The check at ingest and the lab pages on a store of 50,000 runs, SQLite and PostgreSQL
(issue 33's goals: the check <= 50 ms p95 per run, the pages <= 300 ms median).

The lab is bench/lab_data.py's (windowed runs, one planted regression), 40 boards x 5
kernels x 250 nights = 50,000 runs by default.  Made in bulk, not timed:

1. every run but the last --sample ones is written into SQLite through the store
   (Store.add_bundles, 2,000 runs a transaction) and checked against its board's
   baseline as at ingest (--jobs processes, board by board, oldest first), so that the
   regression table holds a full lab's checks (8 per run);
2. that SQLite file is copied table by table into a fresh database of a private
   PostgreSQL cluster (initdb/pg_ctl in a temporary directory, as the tests do), and its
   sequences set: both stores then hold the same 50,000 - sample runs and checks.

Timed on each store: the last --sample runs (the last nights of every board, in the
order a lab uploads them) are ingested one by one as `rtbench serve` does with an
upload: the run is stored (not timed), then its check is timed: the stored row read
back, the run's cells taken from the upload, the board's candidate runs and any
baseline or kernel runs not in memory read, the decision model, the checks written
(RunCache kept across the uploads, as the server keeps it).  The server's memory is
warmed first by checking the night before the sample (a server that has been running).
Also timed, for the first night of the sample: the same check with nothing in memory
(the first upload of a board after the server started, or `rtbench import` of one
run), which reads and summarises the baseline's ten runs and the kernel's newest runs.
Then `rtbench serve` on the store and the pages, warm (median and max of --repeat; the
server's CPU time per request beside them; with --before CHECKOUT the same pages served
by that checkout's rtbench too, request by request in turn: before and after on one
store under one load).

The bench exits 1 when a goal is missed (check p95 <= 50 ms with the server's memory;
each page's median <= its target), 0 otherwise, and always prints the tables.

    python3 bench/lab_ingest.py [--boards 40 --kernels 5 --runs 250] [--sample 200]
                                [--jobs 2] [--repeat 7] [--only sqlite|postgresql]
                                [--keep DIR] [--before CHECKOUT]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import timezone
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, insert, select, text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "host"))

from pg_cluster import cluster  # noqa: E402
from server_helpers import free_port  # noqa: E402

from bench.lab_data import Lab, make_lab, make_run  # noqa: E402
from bench.server_bench import serve  # noqa: E402
from rtbench.bundle import RunDetail  # noqa: E402
from rtbench.regress.board import RunCache, check_stored_run, checks_of  # noqa: E402
from rtbench.store import Store  # noqa: E402
from rtbench.store import schema as t  # noqa: E402
from rtbench.store.regressions import outcome_counts, replace_checks, run_ids  # noqa: E402

CHECK_P95_MS = 50.0
# (what, path template, target ms; None: shown, no goal)
PAGES = (("GET /matrix (HTML)", "/matrix", 300),
         ("GET /api/v1/matrix", "/api/v1/matrix", 300),
         ("GET /boards/NAME (history page, open regressions)", "/boards/{board}", 300),
         ("GET /api/v1/boards/NAME/history", "/api/v1/boards/{board}/history", 300),
         ("GET /regressions", "/regressions", 300),
         ("GET /api/v1/regressions", "/api/v1/regressions", 300),
         ("GET /metrics", "/metrics", None))
COPY_BATCH = 5_000


def lab_order(lab: Lab) -> list[tuple[int, int, int]]:
    """Every (board, kernel, run) of the lab in the order it ran: night by night, every
    board each night."""
    return [(b, k, r) for k in range(lab.kernels) for r in range(lab.runs)
            for b in range(lab.boards)]


def write_runs(store: Store, lab: Lab, order: list[tuple[int, int, int]],
               batch: int = 2_000) -> int:
    """Write the runs of order through the store (batch runs a transaction)."""
    written = 0
    for start in range(0, len(order), batch):
        runs = [make_run(lab, b, k, r) for b, k, r in order[start:start + batch]]
        written += len(store.add_bundles(runs))
    return written


def check_boards(url: str, boards: list[str]) -> int:
    """Check every stored run of boards as at ingest (oldest first, one run cache)."""
    checked = 0
    with Store.open(url) as store:
        cache = RunCache(store)
        for board in boards:
            for run_id in run_ids(store, board=board):
                check_stored_run(store, run_id, cache)
                checked += 1
    return checked


def copy_store(source: str, target: str) -> int:
    """Copy every table of the SQLite store source into the empty store target (its
    schema made by Store.open), then set target's sequences; rows copied."""
    copied = 0
    with Store.open(source) as src, Store.open(target) as dst:
        with dst.transaction("empty the new store") as conn:
            for table in reversed(t.metadata.sorted_tables):
                conn.execute(table.delete())
        for table in t.metadata.sorted_tables:
            key = list(table.primary_key.columns)
            dates = [c.name for c in table.columns
                     if getattr(c.type, "timezone", False)]
            with src.engine.connect() as reading:
                result = reading.execution_options(stream_results=True).execute(
                    select(table).order_by(*key))
                while rows := result.fetchmany(COPY_BATCH):
                    values = [_aware(dict(row._mapping), dates) for row in rows]
                    with dst.transaction(f"copy {table.name}") as conn:
                        conn.execute(insert(table), values)
                    copied += len(values)
        if dst.engine.dialect.name == "postgresql":
            with dst.transaction("set the sequences") as conn:
                for table in t.metadata.sorted_tables:
                    if "id" in table.c and table.c.id.primary_key:
                        top = conn.execute(select(func.max(table.c.id))).scalar()
                        if top:
                            conn.execute(text("SELECT setval(pg_get_serial_sequence("
                                              f"'{table.name}', 'id'), {int(top)})"))
            with dst.engine.connect() as conn:
                conn.execution_options(isolation_level="AUTOCOMMIT").execute(
                    text("ANALYZE"))
    return copied


def _aware(row: dict[str, Any], dates: list[str]) -> dict[str, Any]:
    """row with its naive datetimes (as SQLite gives them back) marked UTC."""
    for name in dates:
        value = row.get(name)
        if value is not None and value.tzinfo is None:
            row[name] = value.replace(tzinfo=timezone.utc)
    return row


def ingest(store: Store, run: RunDetail, cache: RunCache | None) -> tuple[float, float, int]:
    """Store run (not timed), then check it as the server checks an upload (cache: the
    server's memory; None: nothing in memory, the run read back from the store);
    (wall ms, CPU ms, checks) of the check."""
    run_id = store.add_bundles([run])[0]
    t0, c0 = time.perf_counter(), time.process_time()
    if cache is None:
        rows = checks_of(store, run_id, RunCache(store))
    else:
        stored = store.get_run(run_id, parts={})
        cache.put(replace(stored, scenarios=run.scenarios))
        rows = checks_of(store, run_id, cache)
    replace_checks(store, run_id, rows)
    return (1000 * (time.perf_counter() - t0), 1000 * (time.process_time() - c0),
            len(rows))


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank below)."""
    ordered = sorted(values)
    return ordered[int(0.95 * (len(ordered) - 1))]


def time_checks(label: str, url: str, lab: Lab, sample: list[tuple[int, int, int]]
                ) -> tuple[list[str], bool]:
    """Ingest the sample into url and time each check; Markdown rows, goal met."""
    night = lab.boards
    with Store.open(url) as store:
        cache = RunCache(store)
        # untimed: each board's newest run checked again puts its baseline and its
        # kernel's runs in memory (a server that has been running)
        for board in range(lab.boards):
            for run_id in run_ids(store, board=lab.board_name(board))[-1:]:
                check_stored_run(store, run_id, cache)
        cold = [ingest(store, make_run(lab, *key), None) for key in sample[:night]]
        warm = [ingest(store, make_run(lab, *key), cache) for key in sample[night:]]
    rows = []
    for what, got in (("with the server's memory", warm),
                      ("nothing in memory (first upload after a restart, or an import)",
                       cold)):
        walls, cpus = [w for w, _, _ in got], [c for _, c, _ in got]
        rows.append(f"| {label} | {what} | {len(got)} | {statistics.median(walls):.1f} / "
                    f"{p95(walls):.1f} | {statistics.median(cpus):.1f} / {p95(cpus):.1f} |")
    met = p95([w for w, _, _ in warm]) <= CHECK_P95_MS
    print(f"{label}: check at ingest (server's memory) p95 "
          f"{p95([w for w, _, _ in warm]):.1f} ms, goal <= {CHECK_P95_MS:.0f}", flush=True)
    return rows, met


def serve_checkout(url: str, root: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start `rtbench serve` on url with the rtbench of the checkout root (python -m
    imports the package of its working directory first); (process, base URL)."""
    if root.resolve() == ROOT:
        return serve(url)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rtbench", "serve", "--db", url,
                             "--bind", f"127.0.0.1:{port}"], cwd=root)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"rtbench serve of {root} did not start")


def cpu_ms(pid: int) -> float:
    """CPU time (user + system) process pid has used so far, ms (Linux; clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def time_pages(label: str, url: str, lab: Lab, repeat: int, before: Path | None = None
               ) -> tuple[list[str], bool]:
    """Serve url and time each page warm; Markdown rows, every goal met.  With before (a
    checkout, e.g. a worktree of main), the same pages served by its rtbench are timed
    too, each request of one server followed by the same request of the other, so
    that both see the same store and the same load.  Beside the wall times: the
    server's CPU time per request (its mean over the timed requests), which a loaded
    machine does not inflate as it does the wall time."""
    roots = [ROOT] if before is None else [before, ROOT]
    servers = [serve_checkout(url, root) for root in roots]
    rows, met = [], True
    try:
        client = httpx.Client(timeout=300)
        for what, template, target in PAGES:
            path = template.format(board=lab.planted_board)
            times: list[list[float]] = [[] for _ in servers]
            cpus = [0.0 for _ in servers]
            for n in range(repeat + 1):
                for i, (proc, base) in enumerate(servers):
                    t0, c0 = time.perf_counter(), cpu_ms(proc.pid)
                    answer = client.get(base + path)
                    if answer.status_code != 200:
                        raise SystemExit(f"{label}: {path} answered {answer.status_code}")
                    if n:  # the first is the warm-up
                        times[i].append(1000 * (time.perf_counter() - t0))
                        cpus[i] += (cpu_ms(proc.pid) - c0) / repeat
            median = statistics.median(times[-1])
            ok = target is None or median <= target
            met = met and ok
            was = (f"{statistics.median(times[0]):.1f} ({cpus[0]:.0f}) | "
                   if before is not None else "")
            rows.append(f"| {label} | {what} | {was}{median:.1f} ({cpus[-1]:.0f}) | "
                        f"{max(times[-1]):.1f} | "
                        f"{target or ''} | {'' if target is None else 'met' if ok else 'MISSED'} |")
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait(30)
    return rows, met


def build(path: Path, lab: Lab, stored: list[tuple[int, int, int]], jobs: int) -> None:
    """Write and check the stored part of the lab into the SQLite file path (a file of
    another session's that holds the runs but not yet every check: only checked)."""
    url = f"sqlite:///{path}"
    t0 = time.perf_counter()
    with Store.open(url) as store:
        held = len(run_ids(store))
        written = held if held == len(stored) else write_runs(store, lab, stored[held:])
    print(f"SQLite: {written} runs written in {time.perf_counter() - t0:.0f} s", flush=True)
    t0 = time.perf_counter()
    names = [lab.board_name(i) for i in range(lab.boards)]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        checked = sum(pool.starmap(check_boards,
                                   [(url, names[i::jobs]) for i in range(jobs)]))
    with Store.open(url) as store:
        counts = outcome_counts(store)
        planted = outcome_counts(store, board=lab.planted_board)
    print(f"SQLite: {checked} runs checked in {time.perf_counter() - t0:.0f} s by {jobs} "
          f"processes; checks: {counts}", flush=True)
    if not (planted.get("confirmed") or planted.get("suspected")):
        raise SystemExit(f"the check found no regression on {lab.planted_board}")


def main() -> None:
    """Build the lab, time the check at ingest and the pages on each backend, print the
    tables and exit 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=40)
    parser.add_argument("--kernels", type=int, default=5)
    parser.add_argument("--runs", type=int, default=250, help="nights per kernel")
    parser.add_argument("--sample", type=int, default=200,
                        help="runs ingested and timed at the end (whole nights)")
    parser.add_argument("--jobs", type=int, default=2, help="processes checking the lab")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--keep", type=Path,
                        help="directory for the SQLite file (kept; reused when there)")
    parser.add_argument("--before", type=Path,
                        help="a checkout whose rtbench serves the same pages too (before)")
    args = parser.parse_args()
    lab = make_lab(args.boards, args.kernels, args.runs)
    order = lab_order(lab)
    sample_size = max(2, args.sample // lab.boards) * lab.boards
    stored, sample = order[:-sample_size], order[-sample_size:]
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="rtbench-ingest-") as tmp:
        folder = args.keep or Path(tmp)
        built = folder / "lab-built.db"
        done = folder / "lab-built.done"
        if not done.exists():
            build(built, lab, stored, args.jobs)
            done.touch()
        loads.append(os.getloadavg()[0])
        urls = []
        if args.only != "sqlite":
            pg = cluster().fresh_database()
            t0 = time.perf_counter()
            rows = copy_store(f"sqlite:///{built}", pg)
            print(f"PostgreSQL: {rows} rows copied in {time.perf_counter() - t0:.0f} s",
                  flush=True)
            urls.append(("PostgreSQL", pg))
        if args.only != "postgresql":
            work = folder / "lab.db"
            work.write_bytes(built.read_bytes())
            urls.append(("SQLite", f"sqlite:///{work}"))
        check_rows, page_rows, met = [], [], True
        for label, url in urls:
            rows, ok = time_checks(label, url, lab, sample)
            check_rows += rows
            met = met and ok
            loads.append(os.getloadavg()[0])
            rows, ok = time_pages(label, url, lab, args.repeat, args.before)
            page_rows += rows
            met = met and ok
            loads.append(os.getloadavg()[0])
    print(f"\n{len(order)} runs ({args.boards} boards x {args.kernels} kernels x "
          f"{args.runs} nights), the last {sample_size} ingested and timed; "
          f"{os.cpu_count()} CPUs, 1-minute load average {min(loads):.1f}-{max(loads):.1f}")
    print("\n| database | check at ingest | runs | wall ms median / p95 (goal p95 <= 50) "
          "| CPU ms median / p95 |\n|---|---|---:|---:|---:|")
    print("\n".join(check_rows))
    was = "before: median ms (server CPU ms) | " if args.before else ""
    print(f"\n| database | request | {was}median ms (server CPU ms) | max ms | goal ms | |\n"
          f"|---|---|{'---:|' if args.before else ''}---:|---:|---:|---|")
    print("\n".join(page_rows))
    if not met:
        print("a goal was missed (see the tables)")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
