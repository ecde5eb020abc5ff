"""rtprobe noise: strict input and safety refusals, help, exact simulation, a real run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from jsonschema.protocols import Validator
from probe_support import RunProbe, assert_usage_error, assert_valid, needs_root

ALLOWED = sorted(os.sched_getaffinity(0))
ONLINE = Path("/sys/devices/system/cpu/online").read_text().strip()
BAD_INPUT = [
    (["--gap-threshold", "0"], "--gap-threshold"),
    (["--gap-threshold", "wide"], "--gap-threshold"),
    (["--gap-threshold", "1ns"], "--gap-threshold"),  # below the cost of a clock read
    (["--loops", "5"], "--loops"),
    (["--duration", "2h"], "--duration"),
    (["--policy", "deadline"], "--policy"),
    (["--force=yes"], "--force"),
]


@pytest.mark.parametrize(("args", "option"), BAD_INPUT)
def test_bad_input_exits_2_naming_the_option(run_probe: RunProbe, args: list[str],
                                              option: str) -> None:
    run = run_probe("noise", *args, timeout=10, measures=False)
    assert_usage_error(run, option)


def test_duration_cap_names_force(run_probe: RunProbe) -> None:
    run = run_probe("noise", "--duration", "61m", timeout=10, measures=False)
    assert run.rc == 2 and "--force" in run.stderr


def test_fifo_on_every_online_cpu_is_refused(run_probe: RunProbe) -> None:
    run = run_probe("noise", "--cpus", ONLINE, "--duration", "1s", timeout=10,
                    measures=False)
    assert run.rc == 2
    assert "--cpus" in run.stderr and "starve" in run.stderr and "--force" in run.stderr
    assert run.stdout == ""


def test_help_documents_every_option(run_probe: RunProbe) -> None:
    run = run_probe("noise", "--help", parse=False)
    assert run.rc == 0
    for text in ("--gap-threshold", "--force", "--cpus", "--duration", "sched_rt_runtime_us"):
        assert text in run.stdout
    assert "rtprobe noise --" in run.stdout


def expected_spikes(end_ns: int, step: int, spike: int, every: int, threshold: int) -> tuple[
        int, int]:
    """(draws, interruptions) of the const+spike stream until end_ns of simulated time."""
    t = draws = hits = 0
    while t < end_ns:
        draws += 1
        gap = spike if draws % every == 0 else step
        hits += gap >= threshold
        t += gap
    return draws, hits


def test_simulated_interruptions_are_exact(run_probe: RunProbe, validator: Validator) -> None:
    run = run_probe("noise", "--simulate", "1:const,lat=500ns,spike=20us,every=1000",
                    "--gap-threshold", "10us", "--duration", "200ms", "--warmup", "0",
                    "--cpus", str(ALLOWED[0]))
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    draws, hits = expected_spikes(200_000_000, 500, 20_000, 1000, 10_000)
    s = run.result["series"][0]
    assert (s["count"], s["min_ns"], s["max_ns"]) == (hits, 20_000, 20_000)
    cpu = run.result["data"]["cpus"][0]
    assert (cpu["gaps"], cpu["stolen_ns"], cpu["loops"]) == (hits, hits * 20_000, draws)
    assert cpu["min_step_ns"] == 500
    assert run.start["params"]["gap_threshold_ns"] == 10_000


def test_default_cpus_leave_the_first_one_out(run_probe: RunProbe) -> None:
    run = run_probe("noise", "--simulate", "1:const,lat=100ns", "--duration", "10ms",
                    "--warmup", "0")
    assert run.rc == 0, run.stderr
    cpus = [s["cpu"] for s in run.start["series"]]
    assert cpus == (ALLOWED[1:] if len(ALLOWED) > 1 else ALLOWED)


@needs_root
@pytest.mark.skipif(len(ALLOWED) < 2,  # not a part: the CPUs this machine has
                    reason="needs a CPU left for the system")
def test_real_run_records_gaps_and_throttling(run_probe: RunProbe,
                                              validator: Validator) -> None:
    run = run_probe("noise", "--cpus", str(ALLOWED[-1]), "--duration", "1s", "--warmup",
                    "0.2s", timeout=20)
    assert run.rc in (0, 1), run.stderr
    assert_valid(run, validator)
    s = run.result["series"][0]
    cpu = run.result["data"]["cpus"][0]
    assert s["error"] is None
    assert cpu["gaps"] == s["count"]
    assert cpu["stolen_ns"] == s["sum_ns"]
    assert cpu["loops"] > 0 and cpu["busy_ns"] > 0
    assert s["count"] == 0 or s["min_ns"] >= 1000
    runtime = int(Path("/proc/sys/kernel/sched_rt_runtime_us").read_text())
    assert run.start["params"]["rt_runtime_us"] == runtime
    assert run.result["data"]["rt_throttling"]["active"] == (runtime >= 0)
    assert ("RT throttling" in run.stderr) == (runtime >= 0)


@needs_root
def test_policy_other_may_use_every_cpu(run_probe: RunProbe) -> None:
    run = run_probe("noise", "--policy", "other", "--cpus", ONLINE, "--duration", "0.3s",
                    "--warmup", "0", timeout=20)
    assert run.rc in (0, 1), run.stderr
    assert len(run.result["series"]) == len(run.start["series"])
    assert "RT throttling" not in run.stderr
