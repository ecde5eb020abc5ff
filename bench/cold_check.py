#!/usr/bin/env python3
"""The board check with nothing in memory (the first upload of a board after the server
started, or `rtbench import` of one run), timed on a stored lab without writing to it.

Checks the newest --runs runs of every --step-th board of the store one by one, each
with a fresh RunCache (so each reads and summarises its baseline's runs and its
kernel's newest runs), and prints the wall and CPU time per check; --decisions FILE
writes every check's outcome, reason and figures as JSON, to compare two versions of
the code (--code CHECKOUT: the rtbench of that checkout is imported instead of this
one's).  A store kept by bench/lab_ingest.py --keep DIR is DIR/lab.db.

    python3 bench/cold_check.py sqlite:///DIR/lab.db [--code CHECKOUT]
                                [--boards 40 --step 5 --runs 5] [--decisions FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    """Time the cold checks and print their medians and p95."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose rtbench checks (default: this one)")
    parser.add_argument("--boards", type=int, default=40)
    parser.add_argument("--step", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--decisions", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(args.code.resolve()))
    from rtbench.regress.board import RunCache, checks_of
    from rtbench.store import Store
    from rtbench.store.regressions import run_ids

    with Store.open(args.url) as store:
        ids = [i for b in range(0, args.boards, args.step)
               for i in run_ids(store, board=f"board-{b:04d}")[-args.runs:]]
        for run_id in ids[:3]:  # untimed: the process's imports and first queries
            checks_of(store, run_id, RunCache(store))
        walls, cpus, decisions = [], [], []
        for run_id in ids:
            t0, c0 = time.perf_counter(), time.process_time()
            rows = checks_of(store, run_id, RunCache(store))
            walls.append(1000 * (time.perf_counter() - t0))
            cpus.append(1000 * (time.process_time() - c0))
            decisions.append([[r.cell, r.metric, r.outcome, r.reason, r.value,
                               r.baseline_value, r.rel] for r in rows])
    if args.decisions:
        args.decisions.write_text(json.dumps(decisions))
    p95 = int(0.95 * (len(ids) - 1))
    print(f"{len(ids)} cold checks with {args.code}: wall median "
          f"{statistics.median(walls):.1f} ms, p95 {sorted(walls)[p95]:.1f} ms; CPU median "
          f"{statistics.median(cpus):.1f} ms, p95 {sorted(cpus)[p95]:.1f} ms")


if __name__ == "__main__":
    main()
