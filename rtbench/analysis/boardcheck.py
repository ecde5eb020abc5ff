"""The regression board's decision for one new run of a board (pure): which runs are its
baseline, and the regression gate's checks of the new run against them.

The baseline of a board x suite is the runs tagged ``baseline`` for it, when there are
any; else the runs of the previous kernel (the highest kernel below the new run's, in
version order).  The new run, together with the runs of its kernel checked before it, is
decided against the baseline runs (each kept apart: their spread is the point) by the
decision model of analysis/runmodel.py: confirmed or suspected regression, no
regression, or inconclusive with the reason, never a pass on missing evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from rtbench.analysis.compare import view_of_run
from rtbench.analysis.kernelver import kernel_sort_key
from rtbench.analysis.runmodel import (
    BOARD_ALPHA,
    CONFIRM_RUNS,
    MAX_SERIES,
    BaselineCells,
    CellRun,
    Decision,
    cell_run,
    decide,
)
from rtbench.bundle import RunDetail

BASELINE_TAG = "baseline"
LIMIT = 0.10  # a regression: the metric worse by more than 10 % and the run-to-run spread
MAX_BASELINE_RUNS = 10  # the newest runs of the baseline kernel
BOARD_METRICS = ("p50", "p99", "p99.9", "max")
TAGGED = "tagged"
PREVIOUS_KERNEL = "previous kernel"


@dataclass(frozen=True)
class Candidate:
    """A stored run of the same board and suite that may serve as baseline."""

    run_id: int
    kernel: str
    started_at: datetime
    tags: dict[str, str]
    simulated: bool


@dataclass(frozen=True)
class BaselineChoice:
    """The runs a new run is checked against, and why these."""

    kind: str  # TAGGED or PREVIOUS_KERNEL
    kernel: str | None  # the previous kernel (None for a tagged baseline of several)
    run_ids: tuple[int, ...]


def choose_baseline(kernel: str, simulated: bool, candidates: Sequence[Candidate]
                    ) -> BaselineChoice | None:
    """The baseline of a new run on kernel among the board's other runs (None: none).

    Simulated runs are only checked against simulated ones and measured against
    measured ones."""
    same = [c for c in candidates if c.simulated == simulated]
    tagged = sorted((c for c in same if BASELINE_TAG in c.tags), key=lambda c: c.started_at)
    if tagged:
        chosen = tagged[-MAX_BASELINE_RUNS:]
        kernels = {c.kernel for c in chosen}
        return BaselineChoice(TAGGED, kernels.pop() if len(kernels) == 1 else None,
                        tuple(c.run_id for c in chosen))
    previous = previous_kernel(kernel, [c.kernel for c in same])
    if previous is None:
        return None
    runs = sorted((c for c in same if c.kernel == previous), key=lambda c: c.started_at)
    return BaselineChoice(PREVIOUS_KERNEL, previous,
                    tuple(c.run_id for c in runs[-MAX_BASELINE_RUNS:]))


def previous_kernel(kernel: str, kernels: Sequence[str]) -> str | None:
    """The newest of kernels older than kernel in version order (the first of equals as
    listed), or None."""
    key = kernel_sort_key(kernel)
    older = [k for k in kernels if k and kernel_sort_key(k) < key]
    return max(older, key=kernel_sort_key) if older else None


def run_cells(run: RunDetail, *, within: bool = False) -> dict[str, CellRun]:
    """A run's cells as the decision model reads them, by cell label; within: with each
    cell's own bootstrap spread (needed against a one-run baseline)."""
    return {c.key.label(): cell_run(c, within=within) for c in view_of_run(run).cells}


def baselines(runs: Sequence[Mapping[str, CellRun]]) -> dict[str, BaselineCells]:
    """The baseline runs' cells gathered per cell label (each run kept apart)."""
    out: dict[str, BaselineCells] = {}
    for cells in runs:
        for label, cell in cells.items():
            out.setdefault(label, BaselineCells([])).runs.append(cell)
    return out


def check_series(series: Sequence[Mapping[str, CellRun]], base: Mapping[str, BaselineCells],
                 metrics: Sequence[str] = BOARD_METRICS, limit: float = LIMIT,
                 confirm_runs: int = CONFIRM_RUNS) -> list[Decision]:
    """The decision model's answer for every cell and metric of the newest run of series
    (the runs of its kernel checked against the same baseline, oldest first)."""
    if not series:
        raise ValueError("check_series needs at least the run checked")
    return decide(base, series, metrics, limit, alpha=BOARD_ALPHA,
                  confirm_runs=confirm_runs)


def series_of(run_id: int, kernel: str, started_at: datetime,
              candidates: Sequence[Candidate], baseline: BaselineChoice) -> list[int]:
    """The ids of the runs of kernel up to run_id (oldest first, the newest MAX_SERIES,
    run_id last) that are not baseline runs: the new kernel's runs taken together."""
    mine = sorted((c for c in candidates if c.kernel == kernel and c.run_id != run_id
                   and c.run_id not in baseline.run_ids
                   and (c.started_at, c.run_id) < (started_at, run_id)),
                  key=lambda c: (c.started_at, c.run_id))
    return [c.run_id for c in mine][-(MAX_SERIES - 1):] + [run_id]
