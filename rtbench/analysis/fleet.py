"""The fleet summary: per board and scenario the worst p99.9 and max (no I/O).

"Worst" is over every latency series (one per measuring thread) of every test of the
scenario: the highest p99.9 of any one series, and the highest sample.  A p99.9 needs
10 000 samples in a series (docs/statistics.md); with fewer it is None.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rtbench import (
    EXIT_ENV,
    EXIT_FAIL,
    EXIT_INCONCLUSIVE,
    EXIT_INTERRUPTED,
    EXIT_NOT_AS_DEFINED,
    EXIT_OK,
    EXIT_USAGE,
)
from rtbench.analysis.measurement import run_stats
from rtbench.bundle import RunDetail

# statuses from best to worst (a scenario shows the worst of its measurements)
STATUS_ORDER = ("ok", "inconclusive", "fail", "break", "interrupted", "error", "lost",
                "unreachable")


@dataclass
class ScenarioWorst:
    """One scenario of one board: its worst figures over all series of all tests."""

    scenario: str
    status: str
    p999_ns: int | None
    max_ns: int | None
    samples: int
    measurements: int


@dataclass
class BoardSummary:
    """One board of a fleet: how it ended and its scenarios."""

    board: str
    status: str
    exit_code: int
    message: str | None
    run_id: int | None
    hostname: str | None = None
    kernel: str | None = None
    arch: str | None = None
    simulated: bool = False
    scenarios: list[ScenarioWorst] = field(default_factory=list)


def worst_status(statuses: list[str]) -> str:
    """The worst of some statuses (STATUS_ORDER; an unknown one counts as error)."""
    rank = {s: i for i, s in enumerate(STATUS_ORDER)}
    if not statuses:
        return "ok"
    return max(statuses, key=lambda s: rank.get(s, rank["error"]))


def board_summary(board: str, status: str, exit_code: int, message: str | None,
                  run: RunDetail | None) -> BoardSummary:
    """The summary of one board from how it ended and its stored run (None: none)."""
    summary = BoardSummary(board, status, exit_code, message, run.id if run else None)
    if run is None:
        return summary
    summary.hostname, summary.kernel, summary.simulated = run.hostname, run.kernel, \
        run.simulated
    uname = run.sysinfo.get("uname") if isinstance(run.sysinfo, dict) else None
    summary.arch = str(uname.get("machine")) if isinstance(uname, dict) else None
    by_scenario: dict[int, ScenarioWorst] = {}
    for ms in run_stats(run):
        sc = by_scenario.setdefault(ms.scenario.id, ScenarioWorst(
            ms.scenario.name, "ok", None, None, 0, 0))
        sc.measurements += 1
        sc.status = worst_status([sc.status, ms.measurement.status])
        for _, stats in ms.per_series:
            sc.samples += stats.samples
            sc.p999_ns = _higher(sc.p999_ns, stats.pct("p99.9"))
            sc.max_ns = _higher(sc.max_ns, stats.max_ns)
    for scenario in run.scenarios:
        summary.scenarios.append(by_scenario.get(scenario.id) or ScenarioWorst(
            scenario.name, "error" if status == "ok" else status, None, None, 0, 0))
    return summary


# Board exit codes from the least to the most severe: ok, a measurement without the
# evidence to decide it (5), a scenario not as defined (6), a failed threshold, bad
# usage, the environment, interrupted.
EXIT_SEVERITY = (EXIT_OK, EXIT_INCONCLUSIVE, EXIT_NOT_AS_DEFINED, EXIT_FAIL, EXIT_USAGE,
                 EXIT_ENV, EXIT_INTERRUPTED)


def fleet_exit_code(codes: list[int]) -> int:
    """The fleet's exit code: the worst of its boards' (0 ok, 5 inconclusive, 6 a
    scenario not as defined, 1 a threshold failed, 2, 3, 4 interrupted; an unknown code
    is the worst)."""
    return max(codes, default=0,
               key=lambda c: EXIT_SEVERITY.index(c) if c in EXIT_SEVERITY else len(
                   EXIT_SEVERITY))


def _higher(a: int | None, b: int | None) -> int | None:
    """The larger of two optional values."""
    if a is None:
        return b
    return a if b is None else max(a, b)
