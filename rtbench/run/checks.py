"""A suite checked against its target before anything runs or is stored: the probe's
catalogue, the CPUs, the loads the target can run, the policy, RT permission."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rtbench import EXIT_ENV, EXIT_USAGE
from rtbench.rtprobe.catalogue import ProbeMismatch, target_catalogue
from rtbench.run.outcome import RunError
from rtbench.suites.compat import check_param_values, validate_for_probe
from rtbench.suites.model import Suite
from rtbench.suites.placement import check_placement
from rtbench.targets.base import Target
from rtbench.util.cpulist import parse_cpulist

# Priority rtprobe's tests use unless their params say otherwise.
DEFAULT_PRIORITY = 80


def allowed_cpus(sysinfo: dict[str, Any]) -> set[int]:
    """The CPUs rtprobe may use on the target (sysinfo cpus_allowed, else online)."""
    for key in ("cpus_allowed", "cpus_online"):
        text = sysinfo.get(key)
        if isinstance(text, str) and text.strip():
            try:
                return parse_cpulist(text.strip())
            except ValueError:
                continue
    count = sysinfo.get("cpus_configured")
    return set(range(count)) if isinstance(count, int) and count > 0 else {0}


def validate_suite(target: Target, suite: Suite, simulate: str | None,
                   policy: str | None, sysinfo: Callable[[], dict[str, Any]]) -> None:
    """Before anything runs: the target's rtprobe (its `describe --json`) has every test
    kind, option and load kind the suite uses (and --simulate for every test of a
    simulated run, whose value rtprobe accepts), and the CPUs the suite names exist on
    the target.  RunError or SuiteError say what is wrong."""
    try:
        validate_for_probe(suite, target_catalogue(target), simulate is not None)
    except ProbeMismatch as exc:
        raise RunError(str(exc), exc.exit_code) from None
    check_param_values(suite, target)
    if simulate is not None:
        # one simulated sample: rtprobe parses SEED[:DIST] the same way for every
        # test, and refuses a bad one with exit 2 before anything runs
        done = target.run_probe(["cyclic", "--simulate", simulate, "--loops",
                                      "1", "--warmup", "0", "--threads", "1"],
                                     timeout_s=10.0)
        if done.returncode == EXIT_USAGE:
            why = (done.stderr.strip().splitlines() or ["refused by rtprobe"])[-1]
            raise RunError(f"--simulate {simulate!r}: "
                           f"{why.removeprefix('rtprobe: ')}", EXIT_USAGE)
    check_placement(suite, allowed_cpus(sysinfo()))
    check_loads(target, suite)
    check_policy(suite, policy)
    if simulate is None:
        check_rt_permission(target, suite, policy)


def check_loads(target: Target, suite: Suite) -> None:
    """Refuse, before anything runs, loads this target cannot run: host-side loads
    toward a target without a network address, any load where the target says so."""
    if target.name == "local":
        return
    for scenario in suite.scenarios:
        if any(load.on == "host" for load in scenario.loads) \
                and target.address() is None:
            raise RunError(
                f"scenario {scenario.name!r} of {suite.source} has a host-side load "
                f"(on = \"host\"), which floods the target's network address, and "
                f"target {target.name} has none: remove that load or measure the "
                "board over ssh", EXIT_USAGE)
    if any(s.loads for s in suite.scenarios):
        why = target.loads_unsupported()
        if why is not None:
            raise RunError(why, EXIT_ENV)


def check_policy(suite: Suite, policy: str | None) -> None:
    """--policy other cannot run a test that needs RT priorities (pi): refuse it."""
    if policy is None:
        return
    for test in suite.tests:
        if test.policy_use() == "rt":
            raise RunError(
                f"--policy {policy}: test {test.name!r} ({test.test}) needs "
                f"SCHED_FIFO or SCHED_RR (priorities are what it measures); remove it "
                f"from {suite.source} or run without --policy", EXIT_USAGE)


def check_rt_permission(target: Target, suite: Suite, policy: str | None) -> None:
    """Once, before anything starts or is stored: may this user use the RT priority
    the suite's tests need?  A 10 ms `rtprobe cyclic` asks the kernel (exit 3 if not)."""
    needs_rt = [t for t in suite.tests if t.policy_use() == "rt"
                or (policy is None and t.policy_use() == "any")]
    if not needs_rt:
        return
    priorities = [p for p in (t.params.get("priority", DEFAULT_PRIORITY)
                              for t in needs_rt)
                  if isinstance(p, int) and not isinstance(p, bool)]
    priority = max(priorities, default=DEFAULT_PRIORITY)
    done = target.run_probe(["cyclic", "--duration", "10ms", "--warmup", "0",
                                  "--threads", "1", "--priority", str(priority),
                                  "--no-pmqos"], timeout_s=30.0)
    if done.returncode != EXIT_ENV:
        return
    why = (done.stderr.strip().splitlines() or ["no message"])[-1]
    why = why.removeprefix("rtprobe: ")
    if "not permitted" not in why:
        raise RunError(f"real-time scheduling does not work on target "
                       f"{target.name}: {why}", EXIT_ENV)
    raise RunError(
        f"SCHED_FIFO priority {priority} is not permitted for this user, so no test can "
        f"run: run as root, grant CAP_SYS_NICE (setcap cap_sys_nice+ep on rtprobe) or "
        f"an rtprio limit (ulimit -r {priority}; /etc/security/limits.conf), or pass "
        "--policy other to measure without real-time scheduling (the results are then "
        "not real-time)", EXIT_ENV)
