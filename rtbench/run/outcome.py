"""How a run ends: its outcome, or the one-line error (with its exit code) that stops it."""

from __future__ import annotations

from dataclasses import dataclass, field

from rtbench import EXIT_ENV, EXIT_USAGE
from rtbench.suites.model import SuiteError
from rtbench.targets.base import TargetUsageError


class RunError(Exception):
    """The suite cannot run on this target: one line for the user, with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def stored_run_error(exc: BaseException, run_id: int) -> RunError | None:
    """An error that stopped a run after it was stored, as a RunError of exit 3 where it
    would otherwise exit 2 (a suite, target-name or path error): exit 2 means nothing ran
    and nothing was stored (docs/commands.md), and this run is stored with status error.
    None for every other exception (raised as it is)."""
    usage = isinstance(exc, (SuiteError, TargetUsageError, OSError)) or (
        isinstance(exc, RunError) and exc.code == EXIT_USAGE)
    if not usage:
        return None
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, SuiteError):
        text = f"suite {text}"
    return RunError(f"{text}; run {run_id} is stored with status error", EXIT_ENV)


@dataclass
class RunOutcome:
    """How a run ended."""

    run_id: int
    status: str  # ok | fail | interrupted | error | lost
    exit_code: int
    measurements: int = 0
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # rtprobe's own, each once
