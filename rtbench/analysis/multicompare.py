"""The summary of a comparison of any number of runs: runs as columns, cells as rows,
each metric's value per run and the gate's decision for every step (pure).

A step is a run against the run before it (``previous``) or against the first measured
run (``first``); its decision is the regression gate's (analysis/gate.py): regression,
no regression, or inconclusive with the reason.  A run without the cell, or a published
run, has no distribution to decide with: its step is inconclusive, never a pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rtbench.analysis.bootstrap import REPLICATES
from rtbench.analysis.compare import (
    QUANTILE,
    CellComparison,
    CellData,
    Comparison,
    diff_metric,
)
from rtbench.analysis.gate import INCONCLUSIVE, GateCheck, gate
from rtbench.analysis.select import CellKey

AGAINST = ("previous", "first")
DEFAULT_LIMIT = 0.10  # a jump: a change the gate calls a regression beyond +10 %
SEED_STEP = 17  # as analysis.compare: run i's bootstrap seed is seed + 17 i


@dataclass
class SummaryRow:
    """One cell: per metric the value in every run, and the step's check per run."""

    key: CellKey
    values: dict[str, list[float | None]]  # metric -> per run (ns; per million for
    # exceedance-rate); None: the run lacks the cell or the figure
    steps: dict[str, list[GateCheck | None]]  # metric -> per run; None: no step there


@dataclass
class Summary:
    """The whole summary table of a comparison."""

    against: str  # "previous" or "first"
    metrics: tuple[str, ...]
    limit: float
    runs: list[str]  # run labels, the columns
    reference: list[int | None]  # per run: the index of the run its step compares with
    rows: list[SummaryRow] = field(default_factory=list)

    def jumps(self) -> list[GateCheck]:
        """Every step the gate calls a regression, in table order."""
        return [c for row in self.rows for m in self.metrics for c in row.steps[m]
                if c is not None and c.outcome == "regression"]

    def inconclusive(self) -> list[GateCheck]:
        """Every step the gate cannot decide, in table order."""
        return [c for row in self.rows for m in self.metrics for c in row.steps[m]
                if c is not None and c.outcome == INCONCLUSIVE]


def step_references(comp: Comparison, against: str) -> list[int | None]:
    """Per run the index of the measured run its step compares with (None: no step)."""
    measured = [i for i, v in enumerate(comp.runs) if not v.published]
    out: list[int | None] = [None] * len(comp.runs)
    for n, i in enumerate(measured[1:], start=1):
        out[i] = measured[0] if against == "first" else measured[n - 1]
    return out


def pair(comp: Comparison, a: int, b: int, reps: int, seed: int) -> Comparison:
    """The comparison of run b against run a, built from comp's cells (each run keeps
    its bootstrap seed, so its replicates are drawn once for every step)."""
    quantiles = tuple(m for m in comp.metrics if m in QUANTILE)
    rows = []
    for row in comp.rows:
        ca, cb = row.cells[a], row.cells[b]
        if ca is None and cb is None:
            continue
        diffs = [] if ca is None or cb is None else [
            diff_metric(ca, cb, m, reps, (seed + SEED_STEP * a, seed + SEED_STEP * b))
            for m in quantiles]
        rows.append(CellComparison(row.key, [ca, cb], [[], diffs]))
    return Comparison([comp.runs[a], comp.runs[b]], rows, [], [], list(comp.metrics))


def _value(cell: CellData | None, metric: str, rate: float | None) -> float | None:
    """A cell's figure of metric; the exceedance rate is the gate's count (rate)."""
    if cell is None:
        return None
    return rate if metric == "exceedance-rate" else cell.figures.get(metric)


def summarize(comp: Comparison, against: str = "previous",
              metrics: Sequence[str] = ("p50", "p99", "max"), limit: float = DEFAULT_LIMIT,
              reps: int = REPLICATES, seed: int = 0) -> Summary:
    """The summary table of comp: every step decided by the gate beyond limit."""
    if against not in AGAINST:
        raise ValueError(f"against must be one of {', '.join(AGAINST)}, not {against!r}")
    missing = [m for m in metrics if m in QUANTILE and m not in comp.metrics]
    if missing:
        raise ValueError(f"metrics {', '.join(missing)} were not compared")
    refs = step_references(comp, against)
    found: dict[tuple[str, int, str], GateCheck] = {}
    for b, a in enumerate(refs):
        if a is None:
            continue
        for check in gate(pair(comp, a, b, reps, seed), metrics, limit):
            for metric in check.metric.split(","):  # "different cells" names them all
                found.setdefault((check.cell, b, metric), _for_metric(check, metric))
    out = Summary(against, tuple(metrics), limit, [v.label for v in comp.runs], refs)
    for row in comp.rows:
        label = row.key.label()
        values: dict[str, list[float | None]] = {}
        steps: dict[str, list[GateCheck | None]] = {}
        for metric in metrics:
            checks = [found.get((label, i, metric)) for i in range(len(comp.runs))]
            steps[metric] = checks
            values[metric] = [_value(cell, metric, _own_rate(checks, refs, i, label,
                                                             metric, found))
                              for i, cell in enumerate(row.cells)]
        out.rows.append(SummaryRow(row.key, values, steps))
    return out


def _for_metric(check: GateCheck, metric: str) -> GateCheck:
    """A check of several metrics (a missing cell) as the check of one of them."""
    if check.metric == metric:
        return check
    return GateCheck(check.cell, check.run, metric, check.outcome, check.reason)


def _own_rate(checks: list[GateCheck | None], refs: list[int | None], i: int, label: str,
              metric: str, found: dict[tuple[str, int, str], GateCheck]) -> float | None:
    """Run i's exceedance rate as the gate counted it: its own step's value, else the
    baseline figure of a step that compares another run with it."""
    own = checks[i]
    if own is not None and own.value is not None:
        return own.value
    for b, a in enumerate(refs):
        if a == i and (c := found.get((label, b, metric))) is not None \
                and c.baseline is not None:
            return c.baseline
    return None
