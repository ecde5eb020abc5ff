"""The lab views of boards over kernels and time (pure): the board x kernel matrix with
threshold states and the delta to the previous kernel, and a board's history per cell
with kernel changes.  Works on the store's summaries through the protocols below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from rtbench.analysis.kernelver import kernel_sort_key

# the states of a matrix cell, by the worst max against the smallest threshold
OVER = "over threshold"
UNDER = "under threshold"
NO_THRESHOLD = "no threshold"
INCONCLUSIVE = "inconclusive"


class Group(Protocol):
    """A (board, kernel, suite) aggregate of per-run cell summaries."""

    board: str
    kernel: str
    suite: str
    runs: int
    newest_run_id: int
    worst_max_ns: int | None
    worst_p999_ns: int | None
    over: int
    under: int
    unknown: int
    threshold_ns: int | None


@dataclass
class MatrixCell:
    """One shown cell: figures, threshold state, delta to the previous kernel."""

    board: str
    kernel: str
    suite: str
    runs: int
    newest_run_id: int
    worst_max_ns: int | None
    worst_p999_ns: int | None
    threshold_ns: int | None
    state: str
    why: str
    previous_kernel: str | None = None
    delta_max_ns: int | None = None  # worst max minus the previous kernel's (None: unknown)
    delta_pct: float | None = None
    marks: list[str] = field(default_factory=list)  # e.g. regressions (lab-alert's)


@dataclass
class MatrixTable:
    """The matrix of one suite: boards (rows), kernels in version order (columns)."""

    suite: str
    boards: list[str]
    kernels: list[str]
    cells: dict[tuple[str, str], MatrixCell]


def cell_state(g: Group) -> tuple[str, str]:
    """The threshold state of a group and why, in words."""
    if g.over:
        return OVER, f"{g.over} cell(s) above their threshold"
    if g.unknown:
        return INCONCLUSIVE, (f"{g.unknown} cell(s) with a threshold have no samples: "
                              "cannot tell")
    if g.under:
        return UNDER, "every cell with a threshold stayed at or below it"
    return NO_THRESHOLD, "no threshold set: nothing to judge against"


def matrix_tables(groups: Iterable[Group],
                  marks: Mapping[tuple[str, str, str], list[str]] | None = None
                  ) -> list[MatrixTable]:
    """The matrix per suite (suites sorted), each board's kernels compared in version
    order; marks: extra labels per (board, kernel, suite)."""
    by_suite: dict[str, list[Group]] = {}
    for g in groups:
        by_suite.setdefault(g.suite, []).append(g)
    tables = []
    for suite in sorted(by_suite):
        cells: dict[tuple[str, str], MatrixCell] = {}
        per_board: dict[str, list[Group]] = {}
        for g in by_suite[suite]:
            per_board.setdefault(g.board, []).append(g)
        for board, mine in per_board.items():
            previous: Group | None = None
            for g in sorted(mine, key=lambda x: kernel_sort_key(x.kernel)):
                state, why = cell_state(g)
                cell = MatrixCell(
                    board=board, kernel=g.kernel, suite=suite, runs=g.runs,
                    newest_run_id=g.newest_run_id, worst_max_ns=g.worst_max_ns,
                    worst_p999_ns=g.worst_p999_ns, threshold_ns=g.threshold_ns,
                    state=state, why=why,
                    marks=list((marks or {}).get((board, g.kernel, suite), [])))
                if previous is not None:
                    cell.previous_kernel = previous.kernel
                    if g.worst_max_ns is not None and previous.worst_max_ns is not None:
                        cell.delta_max_ns = g.worst_max_ns - previous.worst_max_ns
                        if previous.worst_max_ns:
                            cell.delta_pct = 100.0 * cell.delta_max_ns / previous.worst_max_ns
                cells[(board, g.kernel)] = cell
                previous = g
        kernels = sorted({k for _, k in cells}, key=kernel_sort_key)
        tables.append(MatrixTable(suite=suite, boards=sorted(per_board), kernels=kernels,
                                  cells=cells))
    return tables


class CellFigures(Protocol):
    """One run's summary of one cell (store.cells.CellRow)."""

    run_id: int
    kernel: str
    suite: str
    started_at: datetime
    simulated: bool
    policy: str | None
    count: int
    max_ns: int | None
    p999_ns: int | None
    threshold_ns: int | None

    @property
    def cell(self) -> str:
        """The cell's name."""

    @property
    def exceedance_rate_per_hour(self) -> float | None:
        """Samples above the smallest threshold per hour."""


@dataclass
class HistoryPoint:
    """One run of a cell on the history."""

    run_id: int
    started_at: datetime
    kernel: str
    max_ns: int | None
    p999_ns: int | None
    exceedance_rate_per_hour: float | None
    simulated: bool
    policy: str | None


@dataclass
class CellHistory:
    """A board's cell over time: its runs, where the kernel changed, its thresholds."""

    suite: str
    cell: str
    points: list[HistoryPoint]
    kernel_changes: list[tuple[datetime, str]]  # (first run on it, kernel)
    thresholds_ns: list[int]


def histories(rows: Sequence[CellFigures]) -> list[CellHistory]:
    """One history per (suite, cell) of a board's rows (rows oldest first)."""
    grouped: dict[tuple[str, str], list[CellFigures]] = {}
    for r in rows:
        grouped.setdefault((r.suite, r.cell), []).append(r)
    out = []
    for (suite, cell), mine in sorted(grouped.items()):
        mine = sorted(mine, key=lambda r: (r.started_at, r.run_id))
        changes: list[tuple[datetime, str]] = []
        for r in mine:
            if not changes or changes[-1][1] != r.kernel:
                changes.append((r.started_at, r.kernel))
        out.append(CellHistory(
            suite=suite, cell=cell,
            points=[HistoryPoint(run_id=r.run_id, started_at=r.started_at, kernel=r.kernel,
                                 max_ns=r.max_ns, p999_ns=r.p999_ns,
                                 exceedance_rate_per_hour=r.exceedance_rate_per_hour,
                                 simulated=r.simulated, policy=r.policy) for r in mine],
            kernel_changes=changes,
            thresholds_ns=sorted({r.threshold_ns for r in mine
                                  if r.threshold_ns is not None})))
    return out
