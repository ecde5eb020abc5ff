"""rtprobe periodic: strict input, help, exact simulated drift, and a short real run."""

from __future__ import annotations

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
    (["--bogus"], "--bogus"),
    (["--period", "0"], "--period"),
    (["--period", "soon"], "--period"),
    (["--busy", "5ms"], "--busy"),
    (["--period", "1ms", "--busy", "2ms"], "--busy"),
    (["--criterion", "0"], "--criterion"),
    (["--criterion", "fast"], "--criterion"),
    (["--policy", "deadline"], "--policy"),
    (["--priority", "0"], "--priority"),
]


@pytest.mark.parametrize(("args", "option"), BAD_INPUT)
def test_bad_input_exits_2_naming_the_option(run_probe: RunProbe, args: list[str],
                                              option: str) -> None:
    run = run_probe("periodic", *args, timeout=10, measures=False)
    assert_usage_error(run, option)


def test_help_documents_every_option(run_probe: RunProbe) -> None:
    run = run_probe("periodic", "--help", parse=False)
    assert run.rc == 0
    for option in ("--period", "--busy", "--criterion", "--cpus", "--duration", "--simulate"):
        assert option in run.stdout
    assert "rtprobe periodic --" in run.stdout  # an example


def test_simulated_constant_delay_is_exact(run_probe: RunProbe, validator: Validator) -> None:
    run = run_probe("periodic", "--simulate", "7:const,lat=20us", "--loops", "100",
                    "--warmup", "0")
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    assert run.start["params"] == {"period_ns": 5_000_000, "busy_ns": 0, "criterion_ns": 100_000}
    series = run.result["series"]
    assert len(series) == 1, "one thread by default"
    s = series[0]
    assert (s["count"], s["min_ns"], s["max_ns"], s["sum_ns"]) == (100, 20_000, 20_000, 2_000_000)
    assert s["overruns"] == 0
    assert all(w["t_ns"] % 5_000_000 == 0 for w in s["worst"])
    data = run.result["data"]
    assert data["threads"][0]["start_latency_ns"] == 20_000
    assert data["failed_iterations"] == 0
    assert [v["pass"] for v in run.result["verdicts"]] == [True, True]


def test_warmup_draws_are_kept_out(run_probe: RunProbe, validator: Validator) -> None:
    """1 s warm-up at a 5 ms period holds the first 200 draws of the stream."""
    run = run_probe("periodic", "--simulate", "7:uniform,min=1us,max=9us", "--loops", "50")
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    draws = sim_uniform(7, 0, 1000, 9000, 250)
    s = run.result["series"][0]
    assert s["warmup"]["count"] == 200
    assert s["warmup"]["sum_ns"] == sum(draws[:200])
    assert s["count"] == 50
    assert s["sum_ns"] == sum(draws[200:])
    assert run.result["data"]["threads"][0]["start_latency_ns"] == draws[0]


def test_criterion_fails_every_slow_iteration(run_probe: RunProbe) -> None:
    run = run_probe("periodic", "--simulate", "1:const,lat=150us", "--loops", "20",
                    "--warmup", "0")
    assert run.rc == 1
    assert run.result["status"] == "fail"
    assert run.result["data"]["failed_iterations"] == 20
    names = {v["name"]: v["pass"] for v in run.result["verdicts"]}
    assert names == {"every delay < 100us": False, "start latency < 100us": False}


def test_criterion_off_has_no_verdict(run_probe: RunProbe) -> None:
    run = run_probe("periodic", "--simulate", "1:const,lat=150us", "--loops", "20",
                    "--warmup", "0", "--criterion", "off")
    assert run.rc == 0
    assert run.result["verdicts"] == []
    assert run.start["params"]["criterion_ns"] is None


def test_busy_work_past_the_next_release_counts_missed_periods(run_probe: RunProbe) -> None:
    """2 ms delay + 4 ms work > 5 ms period: every release after a sample is missed."""
    run = run_probe("periodic", "--simulate", "1:const,lat=2ms", "--period", "5ms",
                    "--busy", "4ms", "--loops", "10", "--warmup", "0", "--criterion", "off")
    assert run.rc == 0, run.stderr
    s = run.result["series"][0]
    assert s["count"] == 10
    assert s["overruns"] == 9
    assert run.result["data"]["missed_periods"] == 9
    assert sorted(w["t_ns"] for w in s["worst"]) == [k * 10_000_000 for k in range(10)]


@needs_root
def test_real_run_counts_and_schema(run_probe: RunProbe, validator: Validator) -> None:
    run = run_probe("periodic", "--duration", "2s", "--warmup", "0.5s", "--period", "5ms",
                    "--busy", "500us", "--cpus", "0", timeout=20)
    assert run.rc in (0, 1), run.stderr
    assert_valid(run, validator)
    s = run.result["series"][0]
    assert s["error"] is None
    # Every release is a sample or a missed period; a miss that straddles the
    # warm-up or the end boundary is counted on the side of its sample.
    assert 398 <= s["count"] + s["overruns"] <= 402
    thread = run.result["data"]["threads"][0]
    assert thread["iterations"] == s["count"]
    assert isinstance(thread["start_latency_ns"], int)
    measured = [w for w in run.windows if not w["warmup"]]
    assert sum(w["count"] for w in measured) == s["count"]
    assert run.result["status"] == ("ok" if run.rc == 0 else "fail")
