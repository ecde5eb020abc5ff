"""Each verdict outcome of a run and its exit code (docs/commands.md "Exit codes and
errors"): PASS only for what was tested as defined, NOT AS DEFINED exits 6 unless
--accept-undefined, a short run says so wherever the run is shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from explain_helpers import exp_windows, synthetic_measurement, synthetic_run

from rtbench import (
    EXIT_ENV,
    EXIT_FAIL,
    EXIT_INTERRUPTED,
    EXIT_NOT_AS_DEFINED,
    EXIT_OK,
)
from rtbench.analysis.fleet import fleet_exit_code
from rtbench.analysis.verdict import list_verdict, run_verdict, short_run_text, verdict_of
from rtbench.bundle import RunSummary
from rtbench.report.run_markers import run_markers
from rtbench.store import Store
from tests.conftest import RunCli

# a load no machine reaches (1 TB/s of memcpy): its scenario is never as defined
UNREACHABLE = """
[suite]
name = "unreachable"
[defaults]
duration = "1s"
warmup = "0s"
settle = "0s"
thresholds = ["50ms"]
[[scenarios]]
name = "mem"
load_cpus = "0"
measure_cpus = "1"
loads = [{ kind = "mem", rate = 999999, options = { buffer = "1MiB" } }]
[[tests]]
name = "cyclic-1ms"
test = "cyclic"
params = { interval = "1ms" }
"""
# no loads, one threshold: its outcome is the threshold's
PLAIN = """
[suite]
name = "plain"
[defaults]
duration = "2s"
warmup = "0s"
thresholds = ["{threshold}"]
[[scenarios]]
name = "idle"
[[tests]]
name = "cyclic-1ms"
test = "cyclic"
params = {{ interval = "1ms" }}
"""
SIMULATE = "1:const,lat=5us"


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({}, ("ok", EXIT_OK)),
    ({"not_as_defined": True}, ("ok", EXIT_NOT_AS_DEFINED)),
    ({"not_as_defined": True, "accept_undefined": True}, ("ok", EXIT_OK)),
    ({"statuses": ["ok", "fail"], "not_as_defined": True}, ("fail", EXIT_FAIL)),
    ({"statuses": ["error"], "not_as_defined": True}, ("error", EXIT_ENV)),
    ({"lost": True, "not_as_defined": True}, ("lost", EXIT_ENV)),
    ({"interrupted": True, "not_as_defined": True}, ("interrupted", EXIT_INTERRUPTED)),
])
def test_exit_code_precedence(kwargs: dict, expected: tuple[str, int]) -> None:
    statuses = kwargs.pop("statuses", ["ok"])
    assert run_verdict(statuses, **kwargs) == expected


def test_fleet_exit_is_the_most_severe_board() -> None:
    # 6 (not as defined) is milder than a failed threshold, an error or an interrupt
    assert fleet_exit_code([0, 6, 0]) == 6
    assert fleet_exit_code([6, 1]) == 1 and fleet_exit_code([4, 6]) == 4
    assert fleet_exit_code([]) == 0


def test_short_run_text() -> None:
    assert short_run_text(0.1) == "SHORT RUN (10 % of the suite's length)"
    assert short_run_text(0.005) == "SHORT RUN (0.5 % of the suite's length)"
    assert short_run_text(1.0) is None and short_run_text(2.0) is None
    assert short_run_text(float("nan")) is None


def test_list_verdict_words() -> None:
    assert list_verdict("ok", 2, 2, scale=0.1) == "PASS (short run)"
    assert list_verdict("ok", 2, 2, undefined=1) == "NOT AS DEFINED"
    assert list_verdict("ok", 2, 0, undefined=1) == "NOT AS DEFINED"
    assert list_verdict("fail", 2, 2, undefined=1) == "FAIL"
    assert list_verdict("ok", 2, 1, scale=0.5) == "PASS (short run) (1 of 2 with thresholds)"
    row = RunSummary(1, None, "h", "k", "s", "ok", None, False, scale=0.25)  # type: ignore
    assert run_markers(row) == ["SHORT RUN (25 % of the suite's length)"]  # not simulated
    assert run_markers(RunSummary(1, None, "h", "k", "s", "ok", None, False)) == []  # type: ignore


def test_verdict_of_each_outcome() -> None:
    m = synthetic_measurement(exp_windows(1))
    m.thresholds_ns = [50_000_000]
    run = synthetic_run([m])
    run.status = "ok"
    assert verdict_of(run).headline.startswith("PASS: 1 measurement within every threshold")
    run.scale = 0.1
    verdict = verdict_of(run)
    assert verdict.headline.startswith("PASS (short run): 1 measurement")
    assert verdict.headline.endswith("; SHORT RUN (10 % of the suite's length)")
    assert verdict.short_run and any("short run" in n for n in verdict.notes)
    loads = [{"kind": "cpu", "target": 80, "achieved": 20.0, "unit": "%"}]
    run.scenarios[0].loads = loads
    run.scenarios[0].intensity = {"loads": loads}
    verdict = verdict_of(run)
    assert verdict.status == "not_as_defined" and "PASS" not in verdict.headline
    assert verdict.headline.startswith("NOT AS DEFINED in 1 case (below)")
    run.status = m.status = "fail"
    verdict = verdict_of(run)
    assert verdict.headline.startswith("FAIL: 1 of 1 measurement crossed")
    assert "SCENARIO NOT AS DEFINED in 1 case" in verdict.headline


@pytest.fixture(autouse=True)
def _undefined_not_accepted(rtbench_env: dict[str, str]) -> None:
    """Exit 6 itself is tested here: no RTBENCH_ACCEPT_UNDEFINED (tests/conftest.py)."""
    rtbench_env.pop("RTBENCH_ACCEPT_UNDEFINED", None)


def _run(run_cli: RunCli, tmp_path: Path, body: str, *args: str) -> tuple[int, str]:
    """rtbench run of suite text; (exit code, stdout)."""
    suite = tmp_path / "suite.toml"
    suite.write_text(body)
    done = run_cli("run", str(suite), "--db", f"sqlite:///{tmp_path / 'r.db'}",
                   "--simulate", SIMULATE, "--no-report", *args, timeout=120)
    assert not done.stderr.strip() or done.returncode != 0, done.stderr
    return done.returncode, re.sub(r"\s+", " ", done.stdout)


def test_a_load_short_of_its_target_exits_6_unless_accepted(run_cli: RunCli,
                                                            tmp_path: Path) -> None:
    code, out = _run(run_cli, tmp_path, UNREACHABLE)
    assert code == EXIT_NOT_AS_DEFINED, out
    assert "verdict: NOT AS DEFINED in 1 case" in out and "PASS" not in out
    assert "load mem reached" in out and "exit 6" in out
    code, out = _run(run_cli, tmp_path, UNREACHABLE, "--accept-undefined")
    assert code == EXIT_OK, out
    assert "verdict: NOT AS DEFINED" in out and "accepted with --accept-undefined" in out
    listed = run_cli("ls", "--db", f"sqlite:///{tmp_path / 'r.db'}").stdout
    assert listed.count("NOT AS DEFINED") == 2, listed
    from fastapi.testclient import TestClient

    from rtbench.server.app import create_app

    with Store.open(f"sqlite:///{tmp_path / 'r.db'}") as store, \
            TestClient(create_app(store=store)) as client:
        rows = client.get("/api/v1/runs").json()["runs"]
        assert [r["verdict"] for r in rows] == ["NOT AS DEFINED"] * 2
        assert client.get("/runs").text.count(">NOT AS DEFINED</td>") == 2


def test_a_short_pass_and_a_failed_threshold(run_cli: RunCli, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    code, out = _run(run_cli, tmp_path, PLAIN.format(threshold="50ms"), "--scale", "0.1")
    assert code == EXIT_OK, out
    assert "verdict: PASS (short run): 1 measurement within every threshold" in out
    assert "SHORT RUN (10 % of the suite's length)" in out
    code, out = _run(run_cli, tmp_path, PLAIN.format(threshold="1us"), "--scale", "0.5")
    assert code == EXIT_FAIL, out
    assert "verdict: FAIL: 1 of 1 measurement" in out and "SHORT RUN (50 %" in out
    listed = re.sub(r"\s+", " ", run_cli("ls", "--db", db).stdout)
    assert "SHORT RUN (10 % of the suite's length)" in listed
    assert "SHORT RUN (50 % of the suite's length)" in listed
    shown = re.sub(r"\s+", " ", run_cli("show", "1", "--db", db).stdout)
    assert "PASS (short run)" in shown
    assert "plain (scale 0.1) · SHORT RUN (10 % of the suite's length)" in shown
    from rtbench.report.html import render_html

    with Store.open(db) as store:
        page = render_html(store.get_run(1))
    assert "Verdict: PASS (short run)" in page
    assert "0.1 — <b>SHORT RUN (10 % of the suite&#39;s length)</b>" in page
    _server_runs_list(db)


def _server_runs_list(db: str) -> None:
    """The dashboard's runs list and its API mark the short run and its short pass."""
    from fastapi.testclient import TestClient

    from rtbench.server.app import create_app

    with Store.open(db) as store, \
            TestClient(create_app(store=store)) as client:
        page = client.get("/runs").text
        assert "SHORT RUN (10 % of the suite&#39;s length)" in page, page
        assert "PASS (short run)" in page
        rows = {r["id"]: r for r in client.get("/api/v1/runs").json()["runs"]}
        assert rows[1]["verdict"] == "PASS (short run)" and rows[2]["verdict"] == "FAIL"
        assert rows[1]["markers"] == ["SHORT RUN (10 % of the suite's length)", "simulated"]
