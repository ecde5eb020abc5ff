#!/usr/bin/env python3
"""Time the lab server's ingest and scrape (issue 26): the upload of a typical run by 8
concurrent writers, and a warm `GET /metrics` over a generated lab.

A live `rtbench serve` on a free loopback port over PostgreSQL (a private cluster made
with initdb/pg_ctl, as the tests do) and over SQLite.  The typical run is one night's
run of bench/lab_data.py (one cyclic measurement, two series of 100 000 samples,
loglin7 histograms and a 100 us threshold; about 12 KB of rtbench-run/1 JSON), of the
lab's last kernel, so the server's regression check after each upload compares it with
the previous kernel's runs of its board (the full check, on the server's CPU).  Timed
as the client sees it: each POST /api/v1/runs (a fresh uid each) from 8 writer
processes at once (then from 8 threads of one process, the earlier method, whose
writers also wait for each other's client-side work), and as the peer in the same run
the same upload from one writer alone (the ratio says what concurrency costs).  Then
the lab (default 1,000 boards x 5 kernels x 10 runs = 50,000 runs, written through
the Store, not timed) and GET /metrics: one cold request, then --repeat warm ones
(median, max), with GET /api/v1/health as the peer measured in the same run.

    python3 bench/upload_concurrency.py [--uploads 25] [--boards 1000 --kernels 5 --runs 10]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "host"))
sys.path.insert(0, str(ROOT / "bench"))

from lab_data import make_lab, make_run, write_lab  # noqa: E402
from pg_cluster import cluster  # noqa: E402
from server_helpers import free_port  # noqa: E402

from rtbench.interop.runjson import dumps  # noqa: E402
from rtbench.store import Store  # noqa: E402
from rtbench.store.tokens import create_token  # noqa: E402

WRITERS = 8


def serve(url: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start rtbench serve on a free port; (process, base URL)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rtbench", "serve", "--db", url,
                             "--bind", f"127.0.0.1:{port}"], cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("rtbench serve did not start")


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank) of values."""
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def uploads(base: str, token: str, template: str, writers: int, per_writer: int
            ) -> list[float]:
    """Upload latencies in ms: writers threads, per_writer uploads each, fresh uids."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    old_uid = json.loads(template)["uid"]

    def writer(_: int) -> list[float]:
        took = []
        with httpx.Client(timeout=120) as client:
            for _ in range(per_writer):
                body = template.replace(old_uid, uuid.uuid4().hex, 1)
                start = time.perf_counter()
                answer = client.post(f"{base}/api/v1/runs", content=body, headers=headers)
                took.append((time.perf_counter() - start) * 1000)
                if answer.status_code != 201:
                    raise SystemExit(f"upload answered {answer.status_code}: {answer.text}")
        return took

    with ThreadPoolExecutor(writers) as pool:
        return [ms for part in pool.map(writer, range(writers)) for ms in part]


def _one_writer(args: tuple[str, str, str, int]) -> list[float]:
    """One writer's upload latencies (a process of uploads_in_processes)."""
    base, token, template, per_writer = args
    return uploads(base, token, template, 1, per_writer)


def uploads_in_processes(base: str, token: str, template: str, writers: int,
                         per_writer: int) -> list[float]:
    """Upload latencies in ms from writers processes at once, per_writer uploads each.

    The writers of a lab are separate machines; as threads of one Python process they
    also wait for each other's client-side work (building requests, reading answers)
    under one interpreter lock, which the server is not to blame for."""
    with multiprocessing.get_context("fork").Pool(writers) as pool:
        parts = pool.map(_one_writer, [(base, token, template, per_writer)] * writers)
    return [ms for part in parts for ms in part]


def warm_get(base: str, path: str, repeat: int) -> tuple[float, float, float]:
    """(cold, warm median, warm max) ms of GET path."""
    took = []
    with httpx.Client(timeout=300) as client:
        for _ in range(repeat + 1):
            start = time.perf_counter()
            answer = client.get(f"{base}{path}")
            took.append((time.perf_counter() - start) * 1000)
            answer.raise_for_status()
    return took[0], statistics.median(took[1:]), max(took[1:])


def bench(label: str, url: str, args: argparse.Namespace) -> list[str]:
    """The figures of one backend, as table rows."""
    lab = make_lab(args.boards, args.kernels, args.runs)
    with Store.open(url) as store:
        token = create_token(store, "bench")
        start = time.perf_counter()
        written = write_lab(store, lab)
        seeded_s = time.perf_counter() - start
    template = dumps(make_run(lab, 0, lab.kernels - 1, 0))
    proc, base = serve(url)
    try:
        alone = uploads(base, token, template, 1, args.uploads)
        together = uploads_in_processes(base, token, template, WRITERS, args.uploads)
        threads = uploads(base, token, template, WRITERS, args.uploads)
        metrics = warm_get(base, "/metrics", args.repeat)
        health = warm_get(base, "/api/v1/health", args.repeat)
        size = len(httpx.get(f"{base}/metrics", timeout=300).content)
    finally:
        proc.terminate()
        proc.wait(30)
    return [
        f"| {label} | upload, {WRITERS} writer processes x {args.uploads} | p95 "
        f"{p95(together):.0f} ms (median {statistics.median(together):.0f}, max "
        f"{max(together):.0f}) | 1 writer: p95 {p95(alone):.0f} ms; ratio "
        f"{p95(together) / p95(alone):.1f} |",
        f"| {label} | upload, {WRITERS} writer threads of one process x {args.uploads} | p95 "
        f"{p95(threads):.0f} ms (median {statistics.median(threads):.0f}, max "
        f"{max(threads):.0f}) | 1 writer: p95 {p95(alone):.0f} ms |",
        f"| {label} | GET /metrics, {written:,} runs ({size / 1e6:.1f} MB; seeded in "
        f"{seeded_s:.0f} s) | warm median {metrics[1]:.0f} ms (max {metrics[2]:.0f}; cold "
        f"{metrics[0]:.0f}) | /api/v1/health median {health[1]:.1f} ms; ratio "
        f"{metrics[1] / max(health[1], 0.01):.0f} |"]


def main() -> None:
    """Run the benchmark on PostgreSQL and SQLite and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uploads", type=int, default=25, help="uploads per writer")
    ap.add_argument("--boards", type=int, default=1000)
    ap.add_argument("--kernels", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=7, help="warm GET /metrics requests")
    ap.add_argument("--backend", choices=("postgresql", "sqlite", "both"), default="both")
    args = ap.parse_args()
    rows = ["| backend | what | client-side time | peer in the same run |",
            "|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="rtbench-upload-") as tmp:
        if args.backend in ("postgresql", "both"):
            rows += bench("PostgreSQL", cluster().fresh_database(), args)
        if args.backend in ("sqlite", "both"):
            rows += bench("SQLite", f"sqlite:///{Path(tmp) / 'lab.db'}", args)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
