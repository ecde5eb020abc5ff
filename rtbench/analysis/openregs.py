"""The regressions open on a board (pure): from its stored checks, per key (board, suite,
cell, metric), whether the newest check holds a regression, its state, the run where it
was first seen and the runs that hold it.

Alerts fire and resolve on changes of this answer between two calls: a key that appears
is new (suspected or confirmed), a key whose state goes from suspected to confirmed is
newly confirmed, a key that disappears is resolved (the newest run of its board, suite,
cell and metric no longer holds it: a later run or kernel brought it back).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

CONFIRMED = "confirmed"
SUSPECTED = "suspected"
STATES = (CONFIRMED, SUSPECTED)


class StoredCheck(Protocol):
    """One stored check (store.regressions.RegressionRow)."""

    run_id: int
    board: str
    suite: str
    kernel: str
    cell: str
    metric: str
    outcome: str
    started_at: datetime


@dataclass(frozen=True)
class OpenRegression:
    """A regression open on a board: the newest run of its key holds it."""

    board: str
    suite: str
    cell: str
    metric: str
    kernel: str  # the kernel of the runs that hold it
    state: str  # CONFIRMED or SUSPECTED: the newest run's
    first_run: int  # the first run of the kernel where it was seen (suspected or more)
    first_seen: datetime
    confirmed_run: int | None  # the first run where it was confirmed (None: not yet)
    runs: tuple[int, ...]  # every run holding it since first_run, oldest first
    newest_run: int

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(board, suite, cell, metric): what an alert is about."""
        return (self.board, self.suite, self.cell, self.metric)


def open_regressions(checks: Iterable[StoredCheck]) -> list[OpenRegression]:
    """Every regression open among checks (any order; one board or many), sorted by
    board, suite, cell and metric.  A key is open when its newest check's outcome is
    confirmed or suspected; its streak is the run of consecutive checks back from the
    newest that hold a state on the same kernel."""
    by_key: dict[tuple[str, str, str, str], list[StoredCheck]] = {}
    for c in checks:
        by_key.setdefault((c.board, c.suite, c.cell, c.metric), []).append(c)
    out = []
    for key in sorted(by_key):
        rows = sorted(by_key[key], key=lambda c: (c.started_at, c.run_id))
        newest = rows[-1]
        if newest.outcome not in STATES:
            continue
        streak = []
        for c in reversed(rows):
            if c.outcome not in STATES or c.kernel != newest.kernel:
                break
            streak.append(c)
        streak.reverse()
        confirmed = next((c.run_id for c in streak if c.outcome == CONFIRMED), None)
        out.append(OpenRegression(
            board=key[0], suite=key[1], cell=key[2], metric=key[3], kernel=newest.kernel,
            state=newest.outcome, first_run=streak[0].run_id,
            first_seen=streak[0].started_at, confirmed_run=confirmed,
            runs=tuple(c.run_id for c in streak), newest_run=newest.run_id))
    return out
