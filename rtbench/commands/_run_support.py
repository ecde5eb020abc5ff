"""Small text helpers of the run, suites and ls commands (no command of its own)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rtbench.suites.model import TestSpec


def plural(n: int, word: str) -> str:
    """'1 test', '2 tests'."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def expected_text(test: TestSpec) -> str:
    """A test's expected length per scenario, saying when it runs several times."""
    runs = test.runs()
    total = f"{test.expected_seconds():g}"
    if runs > 1:
        return f"{total} ({runs} mechanisms x {test.expected_seconds() / runs:g})"
    return total


def run_summary_json(r: Any) -> dict[str, Any]:
    """One line of `ls --json`: a stored run's summary (documented in docs/commands.md)."""
    from rtbench.report.run_markers import run_markers

    return {"id": r.id, "started_at": r.started_at.isoformat(), "board": r.board,
            "hostname": r.hostname,
            "target": r.target, "kernel": r.kernel, "suite": r.suite, "status": r.status,
            "worst_max_ns": r.worst_max_ns, "simulated": r.simulated, "tags": r.tags,
            "scale": r.scale, "not_as_defined": r.not_as_defined, "traced": r.traced,
            "emulated": r.emulated, "markers": run_markers(r)}
