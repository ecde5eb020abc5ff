"""The regressions open on a board (pure): from its stored checks, per key (board, suite,
cell, metric), whether a regression is open, its state, the run where it was first seen
and the runs that hold it.

Alerts fire and resolve on changes of this answer between two calls: a key that appears
is new (suspected or confirmed), a key whose state goes from suspected to confirmed is
newly confirmed, a key that disappears is resolved (a later run or kernel brought it
back).
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
    baseline_kernel: str | None
    rel: float | None


@dataclass(frozen=True)
class OpenRegression:
    """A regression open on a board: the newest run of its key holds it."""

    board: str
    suite: str
    cell: str
    metric: str
    kernel: str  # the kernel it started on
    kernels: tuple[str, ...]  # that kernel and the later ones it carried over to
    state: str  # CONFIRMED (once confirmed, it stays so while open) or SUSPECTED
    first_run: int  # the first run where it was seen (suspected or more)
    first_seen: datetime
    confirmed_run: int | None  # the first run where it was confirmed (None: not yet)
    runs: tuple[int, ...]  # every run whose check held it, oldest first
    newest_run: int

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(board, suite, cell, metric): what an alert is about."""
        return (self.board, self.suite, self.cell, self.metric)


@dataclass
class _Open:
    """A regression being followed along a key's checks."""

    first: StoredCheck
    kernels: list[str]  # the kernels it was seen on, then those it carried over to
    seen: list[str]  # the kernels of the checks that held it
    runs: list[int]
    confirmed: int | None


def _resolves(row: StoredCheck, found: _Open, limit: float) -> bool:
    """Whether a check that holds no regression closes found: a later run of a kernel
    holding it that is surely within the limit, a later kernel checked against a
    baseline that does not hold it, or one checked against a kernel that holds it and
    better than it by more than the limit (it came back)."""
    if row.kernel in found.seen:
        return row.outcome == "no regression"
    if row.baseline_kernel in found.kernels:
        return row.rel is not None and row.rel < -limit / (1.0 + limit)
    return row.outcome == "no regression"


def open_regressions(checks: Iterable[StoredCheck], limit: float = 0.10
                     ) -> list[OpenRegression]:
    """Every regression open among checks (any order; one board or many), sorted by
    board, suite, cell and metric.  Along each key's checks in time order, a check in a
    state (confirmed or suspected) opens a regression or adds its run; a check without
    one closes it as _resolves says, else carries it on (a later kernel compared with
    the regressed one is no better: it still holds the regression)."""
    by_key: dict[tuple[str, str, str, str], list[StoredCheck]] = {}
    for c in checks:
        by_key.setdefault((c.board, c.suite, c.cell, c.metric), []).append(c)
    out = []
    for key in sorted(by_key):
        rows = sorted(by_key[key], key=lambda c: (c.started_at, c.run_id))
        found: _Open | None = None
        for row in rows:
            if row.outcome in STATES:
                if found is None:
                    found = _Open(row, [], [], [], None)
                if row.kernel not in found.kernels:
                    found.kernels.append(row.kernel)
                if row.kernel not in found.seen:
                    found.seen.append(row.kernel)
                found.runs.append(row.run_id)
                if row.outcome == CONFIRMED and found.confirmed is None:
                    found.confirmed = row.run_id
            elif found is not None:
                if _resolves(row, found, limit):
                    found = None
                elif row.kernel not in found.kernels:
                    found.kernels.append(row.kernel)
        if found is None:
            continue
        out.append(OpenRegression(
            board=key[0], suite=key[1], cell=key[2], metric=key[3],
            kernel=found.first.kernel, kernels=tuple(found.kernels),
            state=CONFIRMED if found.confirmed is not None else SUSPECTED,
            first_run=found.first.run_id, first_seen=found.first.started_at,
            confirmed_run=found.confirmed, runs=tuple(found.runs),
            newest_run=rows[-1].run_id))
    return out
