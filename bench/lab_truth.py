#!/usr/bin/env python3
"""How right is the regression board through the store?  The lab of bench/lab_noisy.py
(a real lab's noise, planted regressions of every size of issue 33) written into a
store and every run checked as at ingest (rtbench/regress/board.py, the code the
server, the runner and `rtbench import` run), then the correctness table of
bench/lab_decisions.py computed from the stored checks (the store's list_checks: each
check's outcome, "confirmed" and "suspected" apart), on SQLite and PostgreSQL.

1. SQLite: every run of the lab (40 boards x 2 suites x 625 nights = 50,000 by default)
   written through Store.add_bundles and checked board by board, oldest first, by
   --jobs processes (bench/lab_ingest.py's build: a board's decisions depend only on its
   own earlier runs, so this is the order of ingest for each board).
2. PostgreSQL (a private cluster, as the tests make it): the runs of --pg-boards boards
   (every (40 / N)th board: each kind of planted regression among them) written through
   the store and checked there, the decisions taken on PostgreSQL; each check compared
   one by one with SQLite's of the same run (outcome and reason: they must be the same).
3. In memory: the same boards decided by bench/lab_decisions.py's simulate (no database)
   and compared with SQLite's, check by check (--memory-boards; 0: not done).

The tables: false suspected and confirmed runs per 1,000 runs, false confirmed
regressions per board-month, per planted size its detection and delay; the bench exits
1 when a goal of issue 33 is missed on a backend or two backends disagree on a check.

    python3 bench/lab_truth.py [--boards 40 --suites 2 --nights 625 --kernels 10]
                               [--seed 0] [--jobs 2] [--pg-boards 8] [--memory-boards 8]
                               [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "host"))

from pg_cluster import cluster  # noqa: E402

from bench.lab_decisions import Outcome, cell_name, goals_met, report, simulate, tally  # noqa: E402
from bench.lab_ingest import build, check_boards, write_runs  # noqa: E402
from bench.lab_noisy import Lab, lab_order, plan, where_run  # noqa: E402
from rtbench.analysis.runmodel import STATES  # noqa: E402
from rtbench.store import Store  # noqa: E402
from rtbench.store.regressions import list_checks  # noqa: E402

# (board, suite, night, cell, metric) -> (outcome, reason)
Checks = dict[tuple[int, int, int, str, str], tuple[str, str]]


def stored_checks(url: str, lab: Lab, boards: list[int]) -> Checks:
    """Every stored check of boards, by where its run sits in the lab."""
    out: Checks = {}
    with Store.open(url) as store:
        for board in boards:
            for row in list_checks(store, board=lab.board_name(board), outcome=None,
                                   limit=10**9):
                b, s, night = where_run(lab, row.board, row.suite, row.started_at)
                if row.kernel != lab.kernel_name(lab.kernel_of(b, night)):
                    raise SystemExit(f"run {row.run_id}: kernel {row.kernel}, the lab has "
                                     f"{lab.kernel_name(lab.kernel_of(b, night))} there")
                out[(b, s, night, cell_name(row.cell), row.metric)] = (row.outcome,
                                                                     row.reason)
    return out


def outcome_of(lab: Lab, checks: Checks) -> Outcome:
    """The correctness figures of stored checks (as lab_decisions counts them)."""
    runs: dict[tuple[int, int, int], list[tuple[str, str, str | None]]] = defaultdict(list)
    for (b, s, night, cell, metric), (outcome, _) in checks.items():
        runs[(b, s, night)].append((cell, metric, outcome if outcome in STATES else None))
    out = Outcome()
    for (b, s, night), states in sorted(runs.items(), key=lambda kv: kv[0][2]):
        kernel = lab.kernel_of(b, night)
        tally(out, lab, b, s, kernel, night - lab.first_night(b, kernel) + 1, states)
    return out


def differences(a: Checks, b: Checks, what: str) -> list[str]:
    """How checks a and b differ (outcome; reason when both are given), first few."""
    out = [f"{what}: {len(a)} checks against {len(b)}"] if len(a) != len(b) else []
    for key in sorted(a.keys() | b.keys()):
        x, y = a.get(key), b.get(key)
        if x is None or y is None or x[0] != y[0] or (x[1] and y[1] and x[1] != y[1]):
            out.append(f"{what}: {key}: {x} against {y}")
    return out


def table(title: str, lab: Lab, boards: list[int], out: Outcome) -> list[str]:
    """The Markdown table of out, titled."""
    return [f"\n{title}", *report(replace(lab, boards=len(boards)), [out])]


def save(path: Path, checks: Checks, how: str) -> None:
    """Keep checks (and how they were made) in the JSON file path."""
    rows = [[*key, *value] for key, value in sorted(checks.items())]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"how": how, "checks": rows}))
    tmp.rename(path)


def load(path: Path) -> tuple[Checks, str]:
    """The checks save kept in path, and how they were made."""
    data = json.loads(path.read_text())
    return {(b, s, n, c, m): (o, r) for b, s, n, c, m, o, r in data["checks"]}, data["how"]


def pg_decisions(lab: Lab, boards: list[int], jobs: int) -> tuple[Checks, float, float]:
    """Write and check boards' runs on a fresh PostgreSQL database; their checks, the
    seconds writing and checking took."""
    url = cluster().fresh_database()
    keys = [k for k in lab_order(lab) if k[0] in set(boards)]
    t0 = time.perf_counter()
    with Store.open(url) as store:
        write_runs(store, lab, keys)
    wrote = time.perf_counter() - t0
    t0 = time.perf_counter()
    names = [lab.board_name(b) for b in boards]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        pool.starmap(check_boards, [(url, names[i::jobs]) for i in range(jobs)])
    return stored_checks(url, lab, boards), wrote, time.perf_counter() - t0


def main() -> None:
    """Build the lab on each backend, print the tables, exit 1 on a missed goal or a
    difference between backends."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=40)
    ap.add_argument("--suites", type=int, default=2)
    ap.add_argument("--nights", type=int, default=625)
    ap.add_argument("--kernels", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2, help="processes checking the lab")
    ap.add_argument("--pg-boards", type=int, default=8,
                    help="boards written and checked on PostgreSQL (0: none)")
    ap.add_argument("--memory-boards", type=int, default=8,
                    help="boards decided in memory and compared (0: none)")
    ap.add_argument("--keep", type=Path,
                    help="directory for the SQLite file and the other backends' checks "
                    "(kept; reused when there)")
    ap.add_argument("--part", choices=["sqlite", "postgresql", "memory"],
                    help="only build this part into --keep (parts run at once, each in "
                    "its own process); then a run without --part reports")
    args = ap.parse_args()
    if args.part and not args.keep:
        ap.error("--part needs --keep DIR")
    lab = plan(args.boards, args.suites, args.nights, args.kernels, args.seed)
    every = list(range(lab.boards))
    loads = [os.getloadavg()[0]]
    lines: list[str] = []
    missed: list[str] = []
    t_start = time.perf_counter()
    tmp = tempfile.TemporaryDirectory(prefix="rtbench-truth-")
    folder = args.keep or Path(tmp.name)
    subsets = {what: every[::max(1, lab.boards // n)][:n] for what, n in
               (("PostgreSQL", args.pg_boards), ("in memory", args.memory_boards)) if n}
    if args.part == "postgresql":
        theirs, wrote, checked = pg_decisions(lab, subsets["PostgreSQL"], args.jobs)
        save(folder / "postgresql.json", theirs,
             f"written in {wrote:.0f} s, checked in {checked:.0f} s by {args.jobs} "
             f"processes, load average {os.getloadavg()[0]:.1f}")
        return
    if args.part == "memory":
        t0 = time.perf_counter()
        states: dict[tuple[int, int, int, str, str], str | None] = {}
        simulate(lab, boards=subsets["in memory"], record=states)
        save(folder / "memory.json", {k: (s or "", "") for k, s in states.items()},
             f"decided in {time.perf_counter() - t0:.0f} s, load average "
             f"{os.getloadavg()[0]:.1f}")
        return
    built, done = folder / "lab-truth.db", folder / "lab-truth.done"
    if not done.exists():
        build(built, lab, lab_order(lab), args.jobs)
        done.touch()
    if args.part == "sqlite":
        return
    loads.append(os.getloadavg()[0])
    sqlite = stored_checks(f"sqlite:///{built}", lab, every)
    tmp.cleanup()
    out = outcome_of(lab, sqlite)
    lines += table(f"SQLite, every board ({len(sqlite)} stored checks)", lab, every, out)
    missed += [f"SQLite: {m}" for m in goals_met([out])]
    for what, boards in subsets.items():
        mine = {k: v for k, v in sqlite.items() if k[0] in set(boards)}
        kept = folder / ("postgresql.json" if what == "PostgreSQL" else "memory.json")
        if kept.exists():
            theirs, how = load(kept)
        elif what == "PostgreSQL":
            theirs, wrote, checked = pg_decisions(lab, boards, args.jobs)
            how = (f"written in {wrote:.0f} s, checked in {checked:.0f} s by {args.jobs} "
                   "processes")
        else:
            t0 = time.perf_counter()
            states = {}
            simulate(lab, boards=boards, record=states)
            theirs = {k: (s or "", "") for k, s in states.items()}
            how = f"decided in {time.perf_counter() - t0:.0f} s"
        if what == "in memory":
            mine = {k: (v[0] if v[0] in STATES else "", "") for k, v in mine.items()}
        loads.append(os.getloadavg()[0])
        diff = differences(mine, theirs, f"SQLite against {what}")
        same = len(mine) - len(diff)
        lines.append(f"\n{what}: boards {', '.join(map(str, boards))} ({how}): "
                     f"{len(theirs)} checks, {same} of SQLite's {len(mine)} the same "
                     "(outcome" + (" and reason)" if what == "PostgreSQL" else ")"))
        lines += diff[:20]
        if diff:
            missed.append(f"{what} differs from SQLite on {len(diff)} checks")
        if what == "PostgreSQL":
            pg_out = outcome_of(lab, theirs)
            lines += table(f"PostgreSQL, boards {', '.join(map(str, boards))} "
                           f"({len(theirs)} checks decided on PostgreSQL)", lab, boards,
                           pg_out)
            lines += table("SQLite, the same boards", lab, boards,
                           outcome_of(lab, mine))
            missed += [f"PostgreSQL: {m}" for m in goals_met([pg_out])]
    print(f"\n{len(lab_order(lab))} runs ({lab.boards} boards x {lab.suites} suites x "
          f"{lab.nights} nights, {lab.kernels} kernels staggered, seed {lab.seed}); "
          f"{os.cpu_count()} CPUs, 1-minute load average {min(loads):.1f}-{max(loads):.1f}"
          f"; {time.perf_counter() - t_start:.0f} s")
    print("\n".join(lines))
    print("goals: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))
    if missed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
