"""The regression board's decision for one new run of a board (pure): which runs are its
baseline, and the regression gate's checks of the new run against them.

The baseline of a board x suite is the runs tagged ``baseline`` for it, when there are
any; else the runs of the previous kernel (the highest kernel below the new run's, in
version order).  The baseline runs' cells are pooled (their windows side by side) and
compared with the new run's by analysis/gate.py: regression, no regression, or
inconclusive with the reason, never a pass on missing evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from rtbench.analysis.compare import (
    CellData,
    RunView,
    compare,
    env_facts,
    measured_cell,
    view_of_run,
)
from rtbench.analysis.gate import DEFAULT_METRICS, GateCheck, gate
from rtbench.analysis.kernelver import kernel_sort_key
from rtbench.analysis.select import CellKey, cell_key
from rtbench.bundle import MeasurementDetail, RunDetail, SeriesDetail
from rtbench.rtprobe.records import WindowRecord

BASELINE_TAG = "baseline"
LIMIT = 0.10  # a regression: the gate finds the metric surely worse by more than 10 %
MAX_BASELINE_RUNS = 10  # the newest runs of the baseline kernel that are pooled
TAGGED = "tagged"
PREVIOUS_KERNEL = "previous kernel"
WINDOW_STRIDE = 1 << 32  # the pooled runs' window indices kept apart


@dataclass(frozen=True)
class Candidate:
    """A stored run of the same board and suite that may serve as baseline."""

    run_id: int
    kernel: str
    started_at: datetime
    tags: dict[str, str]
    simulated: bool


@dataclass(frozen=True)
class Baseline:
    """The runs a new run is checked against, and why these."""

    kind: str  # TAGGED or PREVIOUS_KERNEL
    kernel: str | None  # the previous kernel (None for a tagged baseline of several)
    run_ids: tuple[int, ...]


def choose_baseline(kernel: str, simulated: bool, candidates: Sequence[Candidate]
                    ) -> Baseline | None:
    """The baseline of a new run on kernel among the board's other runs (None: none).

    Simulated runs are only checked against simulated ones and measured against
    measured ones."""
    same = [c for c in candidates if c.simulated == simulated]
    tagged = sorted((c for c in same if BASELINE_TAG in c.tags), key=lambda c: c.started_at)
    if tagged:
        chosen = tagged[-MAX_BASELINE_RUNS:]
        kernels = {c.kernel for c in chosen}
        return Baseline(TAGGED, kernels.pop() if len(kernels) == 1 else None,
                        tuple(c.run_id for c in chosen))
    previous = previous_kernel(kernel, [c.kernel for c in same])
    if previous is None:
        return None
    runs = sorted((c for c in same if c.kernel == previous), key=lambda c: c.started_at)
    return Baseline(PREVIOUS_KERNEL, previous,
                    tuple(c.run_id for c in runs[-MAX_BASELINE_RUNS:]))


def previous_kernel(kernel: str, kernels: Sequence[str]) -> str | None:
    """The newest of kernels older than kernel in version order (the first of equals as
    listed), or None."""
    key = kernel_sort_key(kernel)
    older = [k for k in kernels if k and kernel_sort_key(k) < key]
    return max(older, key=kernel_sort_key) if older else None


def pooled_measurement(parts: Sequence[MeasurementDetail]) -> MeasurementDetail:
    """One cell's measurements of several runs as one: their threads side by side,
    their windows kept apart (each run's indices shifted), measured times added."""
    first = parts[0]
    series: list[SeriesDetail] = []
    windows: list[WindowRecord] = []
    for n, m in enumerate(parts):
        series += [replace(s, index=len(series) + k) for k, s in enumerate(m.series)]
        windows += [replace(w, index=w.index + n * WINDOW_STRIDE) for w in m.windows]
    measured = [m.measured_ns for m in parts]
    return replace(first, series=series, windows=windows, spikes=[], traces=[],
                   measured_ns=None if None in measured else sum(x or 0 for x in measured))


def pooled_view(runs: Sequence[RunDetail], label: str) -> RunView:
    """The baseline runs as one run: each cell pooled over the runs that have it."""
    parts: dict[CellKey, tuple[str, list[MeasurementDetail]]] = {}
    for run in runs:
        for sc in run.scenarios:
            for m in sc.measurements:
                # the cells measured_cell makes (a series with samples), without computing
                # each run's statistics only to pool them afterwards
                if any(s.count for s in m.series):
                    key = cell_key(sc.name, m.test, m.params)
                    parts.setdefault(key, (sc.name, []))[1].append(m)
    cells: list[CellData] = []
    for key, (scenario, ms) in parts.items():
        pooled = measured_cell(scenario, pooled_measurement(ms))
        if pooled is not None:
            cells.append(replace(pooled, key=key))
    newest = runs[-1]
    return RunView(label=label, published=False, hostname=newest.hostname,
                   kernel=newest.kernel, env=env_facts(newest), cells=cells, run=newest)


def check_run(new: RunDetail, baseline_runs: Sequence[RunDetail],
              metrics: Sequence[str] = DEFAULT_METRICS, limit: float = LIMIT,
              reps: int = 400, base: RunView | None = None) -> list[GateCheck]:
    """The gate's checks of every cell and metric of new against the pooled baseline
    (cells only one side has: inconclusive, "different cells"); base: the baseline runs
    already pooled (pooled_view(baseline_runs, "baseline")), to pool them once for many
    runs."""
    if base is None:
        if not baseline_runs:
            raise ValueError("check_run needs at least one baseline run")
        base = pooled_view(baseline_runs, "baseline")
    comp = compare([base, view_of_run(new)], reps=reps)
    return gate(comp, metrics, limit)
