"""Helpers of the core commands in rtbench/cli.py: run's checks before anything starts
(RT permission, --policy), and small text helpers of run, suites and ls.

The leading underscore keeps rtbench.commands.register_all from taking this module for a
command family.
"""

from __future__ import annotations

from typing import Any

from rtbench import EXIT_ENV, EXIT_USAGE
from rtbench.cli import fail
from rtbench.suites import Suite, TestSpec


def plural(n: int, word: str) -> str:
    """'1 test', '2 tests'."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def fmt_seconds(seconds: float) -> str:
    """An expected length: '45 s', '3 min 20 s'."""
    total = int(round(seconds))
    if total < 120:
        return f"{total} s"
    return f"{total // 60} min {total % 60} s" if total % 60 else f"{total // 60} min"


def expected_text(test: TestSpec) -> str:
    """A test's expected length per scenario, saying when it runs several times."""
    runs = test.runs()
    total = f"{test.expected_seconds():g}"
    if runs > 1:
        return f"{total} ({runs} mechanisms x {test.expected_seconds() / runs:g})"
    return total


def check_policy(suite: Suite, policy: str | None) -> None:
    """--policy other cannot run a test that needs RT priorities (pi): refuse it up front."""
    if policy is None:
        return
    for test in suite.tests:
        if test.traits().policy == "rt":
            fail(f"--policy {policy}: test {test.name!r} ({test.test}) needs SCHED_FIFO or "
                 f"SCHED_RR (priorities are what it measures); remove it from "
                 f"{suite.source} or run without --policy", EXIT_USAGE)


# Priority rtprobe's tests use unless their params say otherwise.
DEFAULT_PRIORITY = 80


def check_rt_permission(suite: Suite, target: Any, policy: str | None) -> None:
    """Once, before anything starts or is stored: may this user use the RT priority the
    suite's tests need?  A short `rtprobe cyclic` asks the kernel (exit 3 if not)."""
    needs_rt = [t for t in suite.tests if t.traits().policy == "rt"
                or (policy is None and t.traits().policy == "any")]
    if not needs_rt:
        return
    priorities = [p for p in (t.params.get("priority", DEFAULT_PRIORITY) for t in needs_rt)
                  if isinstance(p, int) and not isinstance(p, bool)]
    priority = max(priorities, default=DEFAULT_PRIORITY)
    done = target.run_probe(["cyclic", "--duration", "10ms", "--warmup", "0",
                             "--threads", "1", "--priority", str(priority), "--no-pmqos"],
                            timeout_s=30.0)
    if done.returncode != EXIT_ENV:
        return
    why = (done.stderr.strip().splitlines() or ["no message"])[-1].removeprefix("rtprobe: ")
    if "not permitted" not in why:
        fail(f"real-time scheduling does not work here: {why}", EXIT_ENV)
    fail(f"SCHED_FIFO priority {priority} is not permitted for this user, so no test can "
         f"run: run as root, grant CAP_SYS_NICE (setcap cap_sys_nice+ep on rtprobe) or an "
         f"rtprio limit (ulimit -r {priority}; /etc/security/limits.conf), or pass "
         "--policy other to measure without real-time scheduling (the results are then "
         "not real-time)", EXIT_ENV)



def run_summary_json(r: Any) -> dict[str, Any]:
    """One line of `ls --json`: a stored run's summary (documented in docs/commands.md)."""
    return {"id": r.id, "started_at": r.started_at.isoformat(), "hostname": r.hostname,
            "kernel": r.kernel, "suite": r.suite, "status": r.status,
            "worst_max_ns": r.worst_max_ns, "simulated": r.simulated, "tags": r.tags}
