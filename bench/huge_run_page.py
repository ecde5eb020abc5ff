#!/usr/bin/env python3
"""Time the page of a run with 20,000 scenarios (one cyclic measurement of two series
each, from bench/lab_data.py), served in parts of PAGE_MEASUREMENTS measurements.

The run is stored through the store (not timed), then GET /runs/ID?page=1, ?page=2 and
the last page are timed cold (the first request of each part, as a user opening it) with
the FastAPI test client on SQLite.  Issue 26's target: <= 2 s a page (27 s before paging).

    python3 bench/huge_run_page.py [--scenarios 20000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402

from bench.lab_data import make_lab, make_run  # noqa: E402
from rtbench.server.app import create_app  # noqa: E402
from rtbench.server.views.paging import PAGE_MEASUREMENTS  # noqa: E402
from rtbench.store import Store  # noqa: E402


def main() -> None:
    """Store the huge run and time its pages."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=20_000)
    args = parser.parse_args()
    run = make_run(make_lab(1, 2, 1), 0, 0, 0)
    first = run.scenarios[0]
    run.scenarios = [replace(first, name=f"s{i:05d}") for i in range(args.scenarios)]
    with tempfile.TemporaryDirectory(prefix="rtbench-huge-") as tmp, \
            Store.open(f"sqlite:///{Path(tmp) / 'h.db'}") as store:
        t0 = time.perf_counter()
        run_id, _ = store.add_bundle(run)
        print(f"stored {args.scenarios} scenarios in {time.perf_counter() - t0:.1f} s")
        client = TestClient(create_app(store=store))
        client.get("/runs")  # the application's own start-up, not the page
        last = -(-args.scenarios // PAGE_MEASUREMENTS)
        load = " / ".join(f"{v:.1f}" for v in os.getloadavg())
        print(f"{os.cpu_count()} CPUs, load average {load}")
        print("| request | status | size | seconds |")
        print("|---|---|---:|---:|")
        for page in (1, 2, last):
            t0 = time.perf_counter()
            answer = client.get(f"/runs/{run_id}?page={page}")
            took = time.perf_counter() - t0
            print(f"| GET /runs/ID?page={page} (of {last}) | {answer.status_code} | "
                  f"{len(answer.content) / 1e6:.1f} MB | {took:.2f} |")


if __name__ == "__main__":
    main()
