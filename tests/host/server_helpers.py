"""Run bundles for the server and store tests, built from synthetic probe output."""

from __future__ import annotations

import copy
import hashlib
import json
import socket
import tempfile
import uuid
from functools import lru_cache
from pathlib import Path

from synth_probe import synth_lines

from rtbench.bundle import RunDetail
from rtbench.interop.runjson import dumps, loads
from rtbench.rtprobe.wire.records import ProbeOutput
from rtbench.store import Store

SYSINFO = {"uname": {"release": "6.1.0-test", "machine": "x86_64"}, "cpu_model": "Test CPU"}


def store_synthetic(store: Store, *, suite: str = "smoke", hostname: str = "box",
                    seed: int = 1, windows: int = 3, per_window: int = 500,
                    measurements: int = 1, status: str = "ok") -> int:
    """Store one run made of synthetic cyclic measurements; return its id."""
    run_id = store.create_run(
        suite=suite, suite_source="[suite]\nname='smoke'\n", scale=0.5, hostname=hostname,
        target="local", sysinfo=SYSINFO, preflight=[], command_line=["rtbench", "run"],
        tool_versions={"rtbench": "0.1.0"}, simulated=True)
    sc = store.add_scenario(run_id, name="idle", loads=[], load_cpus=None, measure_cpus=None)
    for i in range(measurements):
        lines, _ = synth_lines(seed=seed + i, series=2, windows=windows, per_window=per_window)
        store.add_measurement(sc, name=f"cyclic-{i}", test="cyclic",
                              params={"interval_ns": 10**6}, command=["rtprobe", "cyclic"],
                              output=ProbeOutput.from_lines(lines), status="ok",
                              thresholds_ns=[50_000])
    store.finish_run(run_id, status)
    return run_id


@lru_cache(maxsize=8)
def _base_json(windows: int, per_window: int) -> str:
    """A stored-and-exported synthetic run as rtbench-run/1 text (cached)."""
    with tempfile.TemporaryDirectory(prefix="rtbench-bundle-") as tmp, \
            Store.open(f"sqlite:///{Path(tmp) / 'b.db'}") as store:
        run_id = store_synthetic(store, windows=windows, per_window=per_window)
        return dumps(store.get_run(run_id))


def bundle(*, suite: str = "smoke", hostname: str = "box", kernel: str = "6.1.0-test",
           windows: int = 3, per_window: int = 500, tags: dict[str, str] | None = None
           ) -> RunDetail:
    """A fresh run bundle (new uid) with the given labels."""
    run = loads(_base_json(windows, per_window))
    run = copy.deepcopy(run)
    run.uid = uuid.uuid4().hex
    run.suite, run.hostname, run.kernel = suite, hostname, kernel
    run.board = ""  # the store names it after the new host name
    run.tags = dict(tags or {})
    return run


def bundle_text(**kw: object) -> str:
    """bundle(**kw) as rtbench-run/1 JSON."""
    return dumps(bundle(**kw))  # type: ignore[arg-type]


def checksum(run: RunDetail) -> str:
    """SHA-256 of a run's JSON without its database ids (equal runs, equal sums)."""
    data = json.loads(dumps(run))
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
