"""rtprobe pi: strict input, help, simulated verdicts, and the real inversion test."""

from __future__ import annotations

import os

import pytest
from jsonschema.protocols import Validator
from probe_support import RunProbe, assert_usage_error, assert_valid, needs_root

BAD_INPUT = [
    (["--bogus"], "--bogus"),
    (["--cpu", "4096"], "--cpu"),
    (["--cpus", "0"], "--cpus"),
    (["--duration", "3s"], "--duration"),
    (["--loops", "3"], "--loops"),
    (["--threads", "2"], "--threads"),
    (["--hold", "0"], "--hold"),
    (["--hold", "1s"], "--hold"),
    (["--hogs", "0"], "--hogs"),
    (["--hogs", "99"], "--hogs"),
    (["--hog-time", "1s"], "--hog-time"),
    (["--iterations", "0"], "--iterations"),
    (["--max-excess", "soon"], "--max-excess"),
    (["--policy", "other"], "--policy"),
    (["--priority", "20"], "--priority"),
]


def test_help_documents_every_option(run_probe: RunProbe) -> None:
    run = run_probe("pi", "--help", parse=False)
    assert run.rc == 0
    for option in ("--cpu", "--hold", "--hogs", "--hog-time", "--iterations", "--max-excess",
                   "--no-pi", "--force", "--priority", "--simulate"):
        assert option in run.stdout
    assert "rtprobe pi --cpu 1 --no-pi" in run.stdout


@pytest.mark.parametrize(("args", "option"), BAD_INPUT)
def test_bad_input_exits_2_naming_the_option(run_probe: RunProbe, args: list[str],
                                              option: str) -> None:
    run = run_probe("pi", *args, timeout=10, measures=False)
    assert_usage_error(run, option)


@pytest.mark.parametrize(("lat", "rc"), [("50us", 0), ("2ms", 0), ("2001us", 1)])
def test_simulated_excess_against_default_criterion(run_probe: RunProbe, validator: Validator,
                                                    lat: str, rc: int) -> None:
    # default --hold 1ms: the limit is 2 x hold = 2ms, inclusive
    run = run_probe("pi", "--simulate", f"4:const,lat={lat}", "--iterations", "12")
    assert run.rc == rc, run.stderr
    assert_valid(run, validator)
    s = run.result["series"][0]
    assert s["count"] == 12
    assert run.result["data"]["iterations"] == 12
    assert run.result["data"]["limit_ns"] == 2_000_000
    assert run.result["verdicts"][0]["pass"] is (rc == 0)
    params = run.start["params"]
    assert (params["waiter_priority"], params["hog_priority"], params["holder_priority"]) == \
        (80, 70, 60)


def test_default_limit_is_at_least_100us(run_probe: RunProbe) -> None:
    run = run_probe("pi", "--simulate", "4:const,lat=1us", "--iterations", "2", "--hold",
                    "20us")
    assert run.rc == 0, run.stderr
    assert run.start["params"]["max_excess_ns"] == 100_000


def last_allowed_cpu() -> int:
    """The CPU the real test shares: the last allowed one (keeps CPU 0 free for the rest)."""
    return max(os.sched_getaffinity(0))


@needs_root
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,  # not a part: CPUs
                    reason="needs two CPUs")
def test_inheritance_passes_and_plain_mutex_fails(run_probe: RunProbe,
                                                  validator: Validator) -> None:
    # Huge margin: hogs hold the CPU 50 ms, the limit is 10 ms, the hold 1 ms.
    common = ["--cpu", str(last_allowed_cpu()), "--hog-time", "50ms", "--max-excess", "10ms",
              "--iterations", "10"]
    with_pi = run_probe("pi", *common, timeout=30)
    assert_valid(with_pi, validator)
    assert with_pi.rc == 0, with_pi.result["verdicts"]
    assert with_pi.result["data"]["pi"] is True
    without = run_probe("pi", "--no-pi", *common, timeout=30)
    assert_valid(without, validator)
    assert without.rc == 1, without.result["verdicts"]
    assert without.result["status"] == "fail"
    assert without.result["data"]["pi"] is False
    assert without.result["data"]["max_excess_ns"] > 10_000_000
    assert without.result["series"][0]["count"] == 10


def test_one_allowed_cpu_is_not_applicable_exit_3(run_probe: RunProbe) -> None:
    """The hogs would take the only CPU: exit 3 with the "not applicable here" words
    rtbench stores as an inconclusive cell (rtbench.run.runner), naming the count."""
    run = run_probe("pi", "--iterations", "2", prefix=("taskset", "-c", "0"),
                    measures=False, parse=False)
    assert run.rc == 3 and run.stdout == ""
    line = run.stderr.strip()
    assert line.count("\n") == 0, line
    assert line.startswith("rtprobe: pi: not applicable here: needs 2 CPUs, "), line
    online = os.cpu_count() or 1
    assert ("the board has 1" if online == 1 else f"allows 1 of the board's {online}") \
        in line, line
    assert "--force" in line
