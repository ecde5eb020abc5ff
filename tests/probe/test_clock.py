"""rtprobe clock: strict input, help, exact simulated gaps, and every clock source."""

from __future__ import annotations

import platform

import pytest
from jsonschema.protocols import Validator
from probe_support import (
    RunProbe,
    assert_usage_error,
    assert_valid,
    needs_root,
    sim_uniform,
)

BAD_INPUT = [
    (["--clock-source", "sundial"], "--clock-source"),
    (["--reads", "1"], "--reads"),
    (["--reads", "2000000"], "--reads"),
    (["--reads", "many"], "--reads"),
    (["--interval", "0"], "--interval"),
    (["--policy", "deadline"], "--policy"),
    (["--nonsense"], "--nonsense"),
]
HAS_COUNTER = platform.machine() in ("x86_64", "aarch64", "i686", "i386")


@pytest.mark.parametrize(("args", "option"), BAD_INPUT)
def test_bad_input_exits_2_naming_the_option(run_probe: RunProbe, args: list[str],
                                              option: str) -> None:
    run = run_probe("clock", *args, timeout=10, measures=False)
    assert_usage_error(run, option)


def test_help_documents_every_option(run_probe: RunProbe) -> None:
    run = run_probe("clock", "--help", parse=False)
    assert run.rc == 0
    for text in ("--clock-source", "--reads", "--interval", "counter", "monotonic_raw",
                 "boottime", "realtime", "--threads"):
        assert text in run.stdout
    assert "rtprobe clock --" in run.stdout


def test_simulated_gaps_are_the_stream(run_probe: RunProbe, validator: Validator) -> None:
    """Batches of 101 reads give 100 gaps each; every gap is one draw."""
    run = run_probe("clock", "--simulate", "3:uniform,min=20ns,max=40ns", "--loops", "5000",
                    "--reads", "101", "--warmup", "0", "--threads", "1")
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    draws = sim_uniform(3, 0, 20, 40, 5000)
    s = run.result["series"][0]
    assert (s["count"], s["sum_ns"], s["min_ns"], s["max_ns"]) == (
        5000, sum(draws), min(draws), max(draws))
    assert all(w["t_ns"] % 1_000_000 == 0 for w in s["worst"])  # the batch's due time
    data = run.result["data"]
    assert data["threads"][0]["gaps"] == 5000
    assert data["threads"][0]["batches"] == 50
    assert data["read_cost_ns"] == pytest.approx(sum(draws) / 5000)
    assert run.start["params"] == {"clock_source": "monotonic", "reads": 101,
                                   "interval_ns": 1_000_000}


def test_one_thread_per_cpu_by_default(run_probe: RunProbe) -> None:
    run = run_probe("clock", "--simulate", "1", "--loops", "10", "--warmup", "0")
    assert run.rc == 0, run.stderr
    cpus = [s["cpu"] for s in run.start["series"]]
    assert len(cpus) >= 1 and len(set(cpus)) == len(cpus)
    assert all(s["count"] == 10 for s in run.result["series"])


@needs_root
@pytest.mark.parametrize("source", ["monotonic", "realtime", "monotonic_raw", "boottime",
                                    "counter"])
def test_real_sources_report_read_cost(run_probe: RunProbe, validator: Validator,
                                       source: str) -> None:
    if source == "counter" and not HAS_COUNTER:
        run = run_probe("clock", "--clock-source", "counter", "--duration", "1s")
        assert run.rc == 3 and "counter" in run.stderr
        return
    run = run_probe("clock", "--clock-source", source, "--duration", "1s", "--warmup", "0",
                    "--cpus", "0", "--reads", "500", timeout=20)
    assert run.rc in (0, 1), run.stderr
    assert_valid(run, validator)
    s = run.result["series"][0]
    data = run.result["data"]
    assert s["error"] is None
    assert data["clock_source"] == source
    assert data["threads"][0]["gaps"] == s["count"]
    assert data["threads"][0]["gaps"] == data["threads"][0]["batches"] * 499
    assert data["read_cost_ns"] > 0
    if source == "counter":
        assert data["counter_hz"] > 0
        assert run.start["params"]["counter"] in ("tsc", "cntvct_el0")
    else:
        assert data["counter_hz"] is None
        assert data["resolution_ns"] >= 1
