"""A run's verdict: its status and exit code from its measurements' statuses (no I/O)."""

from __future__ import annotations

from collections.abc import Sequence

from rtbench import EXIT_ENV, EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE


def run_verdict(statuses: Sequence[str], *, interrupted: bool = False, lost: bool = False,
                usage_error: bool = False) -> tuple[str, int]:
    """(status, exit code) of a run whose measurements ended with statuses.

    Interrupted wins (4), then a lost target (3), then any error (2 when rtprobe called
    it bad usage, else 3), then a failed threshold or criterion (1), else ok (0).
    """
    if interrupted:
        return "interrupted", EXIT_INTERRUPTED
    if lost:
        return "lost", EXIT_ENV
    if "error" in statuses:
        return "error", EXIT_USAGE if usage_error else EXIT_ENV
    if "fail" in statuses or "break" in statuses:
        return "fail", EXIT_FAIL
    return "ok", EXIT_OK
