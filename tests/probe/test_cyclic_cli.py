"""rtprobe cyclic: strict input (exit 2), help, and the schema of simulated output."""

from __future__ import annotations

import os

import pytest
from jsonschema.protocols import Validator
from probe_support import RunProbe, assert_usage_error

BAD_INPUT = [
    (["--bogus"], "--bogus"),
    (["--interval", "0"], "--interval"),
    (["--interval", "-5"], "--interval"),
    (["--priority", "200"], "--priority"),
    (["--cpus", "0-99"], "--cpus"),
    (["--duration", "5parsecs"], "--duration"),
    (["--mode", "sometimes"], "--mode"),
    (["--interval"], "--interval"),
    (["--simulate", "x"], "--simulate"),
    (["--threshold", "fast"], "--threshold"),
    (["--dur", "1s"], "--duration"),  # abbreviations are refused, naming the full option
]


@pytest.mark.parametrize(("args", "option"), BAD_INPUT)
def test_bad_input_exits_2_with_one_line(run_probe: RunProbe, args: list[str],
                                          option: str) -> None:
    run = run_probe("cyclic", *args, timeout=10, measures=False)
    assert_usage_error(run, option)


@pytest.mark.skipif((os.cpu_count() or 1) > 99,  # not a part: CPUs
                    reason="--cpus 0-99 is valid here")
def test_cpus_beyond_machine_names_allowed(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--cpus", "0-99", timeout=10, measures=False)
    assert run.rc == 2
    assert "allowed" in run.stderr


def test_help_has_examples_and_exit_codes(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--help", timeout=10, parse=False)
    assert run.rc == 0
    text = run.stdout
    for word in ("--interval", "--mode", "timerfd", "Examples:", "Exit codes", "--simulate"):
        assert word in text


def test_simulated_records_validate(run_probe: RunProbe, validator: Validator) -> None:
    run = run_probe("cyclic", "--simulate", "5:expo,min=2us,mean=30us,spike=400us,every=250",
                    "--loops", "2500", "--threshold", "100us,300us", "--worst", "5", timeout=20)
    assert run.rc == 1
    kinds = {rec["type"] for rec in run.records}
    assert kinds == {"start", "window", "spike", "result"}
    for rec in run.records:
        errors = [e.message for e in validator.iter_errors(rec)]
        assert not errors, (rec["type"], errors[:3])
    assert run.start["simulated"] is True
    assert run.start["simulate"] == "5:expo,min=2us,mean=30us,spike=400us,every=250"
    assert run.start["params"] == {"interval_ns": 1_000_000, "mode": "abs"}
    assert run.result["simulated"] is True
    for series in run.result["series"]:
        worst = series["worst"]
        assert len(worst) == 5
        lat = [w["latency_ns"] for w in worst]
        assert lat == sorted(lat, reverse=True)
        assert lat[0] == series["max_ns"]


def test_schema_rejects_float_latency(validator: Validator) -> None:
    bad = {"schema": "rtprobe/1", "type": "spike", "series": 0, "t_ns": 5,
           "latency_ns": 1.5, "threshold_ns": 1}
    assert list(validator.iter_errors(bad))
    unknown_ok = dict(bad, latency_ns=2, future_member={"x": 1})
    assert not list(validator.iter_errors(unknown_ok))


@pytest.mark.parametrize("command", [["cyclic"], ["wakeup"], ["load", "cpu"], ["hackbench"],
                                     ["ctx"], ["sysinfo"]])
def test_abbreviated_options_are_refused(run_probe: RunProbe, command: list[str]) -> None:
    run = run_probe(*command, "--he", timeout=10, measures=False)
    assert run.rc == 2
    assert "'--he'" in run.stderr and "'--help'" in run.stderr
    assert run.stdout == ""
