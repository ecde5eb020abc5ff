#!/usr/bin/env python3
"""Time the results server: the runs list over 10 000 stored runs, and the upload of
a one-hour, two-thread run (3600 windows per thread, rtbench-run/1 JSON).

A live `rtbench serve` on a free loopback port over PostgreSQL (a private cluster
made with initdb/pg_ctl in a temporary directory, as the tests do; or --db URL) and
over SQLite.  The 10 000 runs are written with bulk INSERTs (one scenario, one
cyclic measurement, two series each) -- seeding is not timed.  Timed: GET
/api/v1/runs and GET /runs (first page of 50, and filtered by host), and POST
/api/v1/runs of the one-hour run (each a fresh uid), as the client sees them.

    python3 bench/server_bench.py [--runs 10000] [--repeat 7] [--db URL]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "host"))

from pg_cluster import cluster  # noqa: E402
from server_helpers import bundle, free_port  # noqa: E402
from sqlalchemy import insert  # noqa: E402

from rtbench.interop.runjson import dumps  # noqa: E402
from rtbench.store import Store  # noqa: E402
from rtbench.store import schema as t  # noqa: E402
from rtbench.store.tokens import create_token  # noqa: E402


def seed(url: str, runs: int) -> str:
    """Write runs small runs in bulk (20 hosts, 4 kernels); return an upload token."""
    with Store.open(url) as store:
        token = create_token(store, f"bench-{uuid.uuid4().hex[:6]}")
        now = datetime.now(timezone.utc)
        with store.engine.begin() as conn:
            host_ids = [conn.execute(insert(t.hosts).values(
                hostname=f"board-{h:02d}", arch="x86_64", cpu_model="bench",
                first_seen=now)).inserted_primary_key[0] for h in range(20)]
            common = dict(suite_source="", scale=1.0, target="local", simulated=True,
                          tool_versions="{}", sysinfo="{}", preflight="[]", command_line="[]",
                          tags="{}", source="{}", finished_at=now)
            conn.execute(insert(t.runs), [dict(
                common, host_id=host_ids[i % 20], suite=f"suite-{i % 5}",
                status="ok" if i % 7 else "fail", kernel=f"6.{i % 4}.0-rt",
                started_at=now - timedelta(minutes=runs - i), uid=uuid.uuid4().hex)
                for i in range(runs)])
            run_ids = [r[0] for r in conn.exec_driver_sql(
                "SELECT id FROM runs ORDER BY id")]
            conn.execute(insert(t.scenarios), [dict(
                run_id=r, position=0, name="idle", loads="[]") for r in run_ids])
            sc_ids = [r[0] for r in conn.exec_driver_sql(
                "SELECT id FROM scenarios ORDER BY id")]
            conn.execute(insert(t.measurements), [dict(
                scenario_id=s, position=0, name="cyclic", test="cyclic", params="{}",
                command="[]", status="ok", thresholds_ns="[]", simulated=True,
                probe_version="0.1.0", verdicts="[]", data="{}", start="{}",
                created_at=now) for s in sc_ids])
            m_ids = [r[0] for r in conn.exec_driver_sql(
                "SELECT id FROM measurements ORDER BY id")]
            conn.execute(insert(t.series), [dict(
                measurement_id=m, series_index=k, label=f"cpu{k}", cpu=k, count=1000,
                min_ns=1000, max_ns=5000 + (m * 37 + k) % 900, sum_ns=2_000_000,
                overruns=0, early=0, exceed="[]", worst="[]", warmup="{}",
                spikes_dropped=0, raw_dropped=0) for m in m_ids for k in (0, 1)])
    return token


def serve(url: str, root: Path = ROOT) -> tuple[subprocess.Popen[bytes], str]:
    """Start rtbench serve on a free port with the rtbench of the checkout root (python -m
    imports the package of its working directory first); return (process, base URL)."""
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


def timed(fn: object, repeat: int) -> tuple[float, float]:
    """(median, max) wall time in ms of repeat calls of fn (after one warm-up call)."""
    fn()  # type: ignore[operator]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


def bench(label: str, url: str, runs: int, repeat: int, hour_run: str) -> list[str]:
    """Seed url, serve it, time the list and the upload; Markdown table rows."""
    token = seed(url, runs)
    proc, base = serve(url)
    rows = []
    try:
        client = httpx.Client(timeout=60)
        for name, path in (("GET /api/v1/runs (page 1 of 50)", "/api/v1/runs"),
                           ("GET /api/v1/runs?host=board-07&status=ok",
                            "/api/v1/runs?host=board-07&status=ok"),
                           ("GET /runs (HTML page)", "/runs"),
                           ("GET /api/v1/runs?page=150", "/api/v1/runs?page=150")):
            def get(path: str = path) -> None:
                answer = client.get(base + path)
                assert answer.status_code == 200, answer.text
            med, worst = timed(get, repeat)
            rows.append(f"| {label} | {name} | {med:.1f} | {worst:.1f} |")
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        doc = json.loads(hour_run)
        uploads = max(3, repeat // 2)
        bodies = []  # serialised before timing, compact as `rtbench push` sends them
        for _ in range(uploads + 1):
            doc["uid"] = uuid.uuid4().hex
            bodies.append(json.dumps(doc, separators=(",", ":")).encode())

        def upload() -> None:
            answer = client.post(f"{base}/api/v1/runs", content=bodies.pop(), headers=headers)
            assert answer.status_code == 201, answer.text
        med, worst = timed(upload, uploads)
        rows.append(f"| {label} | POST /api/v1/runs, one-hour 2-thread run "
                    f"({len(hour_run) / 1e6:.1f} MB) | {med:.1f} | {worst:.1f} |")
    finally:
        proc.terminate()
        proc.wait(30)
    return rows


def main() -> None:
    """Run both backends and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--db", help="PostgreSQL URL to use instead of a private cluster")
    args = parser.parse_args()
    hour = dumps(bundle(windows=3601, per_window=1000))  # 1 s warm-up + 3600 s
    rows = []
    rows += bench("PostgreSQL", args.db or cluster().fresh_database(), args.runs,
                  args.repeat, hour)
    with tempfile.TemporaryDirectory(prefix="rtbench-bench-") as tmp:
        rows += bench("SQLite", f"sqlite:///{Path(tmp) / 'r.db'}", args.runs, args.repeat,
                      hour)
    load = " / ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"{args.runs} stored runs; median and max of {args.repeat} requests (ms), "
          f"client-side wall time; {os.cpu_count()} CPUs, load average now {load}")
    print("| database | request | median ms | max ms |")
    print("|---|---|---:|---:|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
