"""Helpers of the compare/advise/plot/reference tests: simulated runs stored through the
real CLI, synthetic runs built in memory, and an in-process CLI call."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner, Result

from rtbench.bundle import MeasurementDetail, RunDetail, ScenarioDetail, SeriesDetail
from rtbench.cli import main
from rtbench.rtprobe.wire import loglin7 as hist
from rtbench.rtprobe.wire.records import WindowRecord
from tests.cli_inprocess import run_in_process
from tests.conftest import REPO

SUITE = """
[suite]
name = "cmp"
description = "one idle cyclic cell for compare and advise tests"

[defaults]
duration = "{duration}"
warmup = "1s"
settle = "0s"
thresholds = ["50us"]

[[scenarios]]
name = "idle"

[[tests]]
name = "cyclic-1ms"
test = "cyclic"
params = {{ interval = "1ms" }}
"""


def simulated_runs(tmp: Path, probe: Path, simulate: list[str],
                   duration: str = "40s") -> str:
    """Store one simulated run per --simulate spec (ids 1, 2, ...) and return the DB URL."""
    url = f"sqlite:///{tmp / 'results.db'}"
    suite = tmp / "cmp.toml"
    suite.write_text(SUITE.format(duration=duration))
    env = dict(os.environ, RTBENCH_PROBE=str(probe), XDG_DATA_HOME=str(tmp / "data"))
    env["PYTHONPATH"] = str(REPO)
    for spec in simulate:
        done = run_in_process(["run", str(suite), "--db", url, "--simulate", spec,
                               "--no-report"], env, REPO, timeout=120)
        assert done.returncode in (0, 1), done.stderr  # 1: a threshold was crossed
    return url


def cli(*args: str) -> Result:
    """Run the rtbench CLI in this process, laid out 120 columns wide (these tests read
    content; test_layout.py checks the widths)."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False, env={"COLUMNS": "120"})


def _pairs_json(idx: np.ndarray, cnt: np.ndarray) -> str:
    """[[index,count],...] as the probe writes a window's histogram: one % format of
    the flat list (formatting each NumPy pair in Python took most of the time of the
    statistics tests that build thousands of windows)."""
    flat = np.column_stack((idx, cnt)).ravel().tolist()
    return "[" + ",".join(["[%d,%d]"] * len(idx)) % tuple(flat) + "]"


def synthetic_measurement(latencies: list[np.ndarray], *, test: str = "cyclic",
                          params: dict[str, Any] | None = None,
                          window_ns: int = 10**9, name: str = "cyclic-1ms",
                          probe_version: str = "0.1.0") -> MeasurementDetail:
    """A measurement of one series whose windows hold the given latency arrays (ns)."""
    windows = []
    for k, lat in enumerate(latencies):
        idx, cnt = hist.from_values(lat)
        windows.append(WindowRecord(
            series=0, index=k + 1, warmup=False, start_ns=k * window_ns,
            end_ns=(k + 1) * window_ns, count=int(lat.size), min_ns=int(lat.min()),
            max_ns=int(lat.max()), sum_ns=int(lat.sum()), overruns=0, exceed=[],
            hist_json=_pairs_json(idx, cnt)))
    every = np.concatenate(latencies)
    idx, cnt = hist.from_values(every)
    series = SeriesDetail(
        index=0, label="cpu0", cpu=0, count=int(every.size), min_ns=int(every.min()),
        max_ns=int(every.max()), sum_ns=int(every.sum()), overruns=0, early=0, exceed=[],
        worst=[], warmup={}, hist=[(int(i), int(c)) for i, c in zip(idx, cnt, strict=True)])
    return MeasurementDetail(
        id=0, name=name, test=test, params=params or {"interval_ns": 1_000_000},
        command=["rtprobe", test], status="ok", exit_code=0, reason=None, thresholds_ns=[],
        simulated=True, probe_version=probe_version, t0_unix_ns=None,
        measured_ns=len(latencies) * window_ns, elapsed_ns=None, verdicts=[], data={},
        start={}, series=[series], windows=windows)


def synthetic_run(measurements: list[MeasurementDetail], *, hostname: str = "box",
                  kernel: str = "6.1.0-test", sysinfo: dict[str, Any] | None = None,
                  scenario: str = "idle") -> RunDetail:
    """A run bundle of one scenario holding the measurements."""
    info = {"uname": {"release": kernel, "machine": "x86_64"}, "cpu_model": "Test CPU",
            "preempt_model": "full", "clocksource": "tsc", "smt_active": False,
            "cmdline": "quiet", "cpus_isolated": ""}
    info.update(sysinfo or {})
    return RunDetail(
        id=0, suite="synthetic", suite_source="", scale=1.0, status="ok",
        started_at=datetime(2026, 1, 1, tzinfo=timezone.utc), finished_at=None,
        hostname=hostname, target="local", kernel=kernel, arch="x86_64", sysinfo=info,
        preflight=[], tool_versions={"rtprobe": "0.1.0"}, command_line=["rtbench"],
        simulated=True, scenarios=[ScenarioDetail(id=0, name=scenario, loads=[],
                                                  load_cpus=None, measure_cpus=None,
                                                  intensity=None,
                                                  measurements=measurements)])


def exp_windows(seed: int, windows: int = 40, per_window: int = 1000,
                shift_ns: float = 0.0, scale_ns: float = 5000.0) -> list[np.ndarray]:
    """Windows of exponential latencies (ns) with a known distribution."""
    rng = np.random.default_rng(seed)
    return [(2000 + shift_ns + rng.exponential(scale_ns, per_window)).astype(np.int64)
            for _ in range(windows)]
