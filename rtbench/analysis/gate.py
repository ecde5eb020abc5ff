"""The regression gate of `compare --baseline`: for each cell, run and metric one of
regression / no regression / inconclusive with its reason (pure: takes a Comparison).

Percentiles use the bootstrap interval of the difference (analysis/bootstrap.py).  The
max and the exceedance rate use counts of samples above a level, compared with an exact
conditional binomial test (docs/statistics.md, "The regression gate").  Missing evidence
is never "no regression": it is "inconclusive" and says what was missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from rtbench.analysis.bootstrap import MIN_WINDOWS, WindowMatrix
from rtbench.analysis.compare import QUANTILE, CellData, Comparison, MetricDiff
from rtbench.analysis.runmodel import (
    GATE_ALPHA,
    BaselineCells,
    CellRun,
    Test,
    cell_run,
    holm,
    metric_test,
)
from rtbench.analysis.stats import min_samples
from rtbench.rtprobe.wire import loglin7 as hist

GATE_METRICS = ("p50", "p99", "p99.9", "max", "exceedance-rate")
DEFAULT_METRICS = ("p50", "p99", "max")
REGRESSION = "regression"
NO_REGRESSION = "no regression"
INCONCLUSIVE = "inconclusive"
ALPHA = 0.025  # each one-sided count test: the two together make a 95 % decision
FAR_FACTOR = 2.0  # without an interval: a regression when rel > max(2 x limit, limit + 50 %)
FAR_MARGIN = 0.5
TAIL_COUNT = 10  # the baseline's level for the tail checks: its 10th-largest sample
SAMPLES_SHARE = 0.9  # "no regression" of the max needs this share of the baseline's samples
# "no regression" of the max also needs the tail level at or above the baseline's p99: with
# fewer samples its 10 largest are not a tail, and a 2x slower run can pass the count test
MIN_TAIL_SAMPLES = 100 * TAIL_COUNT


@dataclass
class GateCheck:
    """One decision of the gate."""

    cell: str
    run: str
    metric: str
    outcome: str  # REGRESSION, NO_REGRESSION or INCONCLUSIVE
    reason: str
    baseline: float | None = None  # the figure compared (ns, or samples per million)
    value: float | None = None
    rel: float | None = None  # relative change of the figure
    rel_lo: float | None = None  # its 95 % interval, when there is one
    rel_hi: float | None = None


def far_beyond(rel: float, limit: float) -> bool:
    """A point change so far past the limit that no interval is needed to call it."""
    return rel > max(FAR_FACTOR * limit, limit + FAR_MARGIN)


def samples_above(m: WindowMatrix, level_ns: float) -> int:
    """Samples of a cell in buckets whose lower bound is at or above level_ns."""
    if m.buckets.size == 0:
        return 0
    mask = hist.lower(m.buckets).astype(np.float64) >= level_ns
    return int(m.counts[:, mask].sum())


def count_tests(k_a: int, n_a: int, k_b: int, n_b: int, ratio: float) -> tuple[float, float]:
    """One-sided p-values of "b's rate above the level is more than ratio x a's" and of
    "it is less": given k_a + k_b exceedances, k_b is binomial with p0 = ratio n_b /
    (n_a + ratio n_b) when b's rate is exactly ratio x a's (exact, conditional)."""
    total = k_a + k_b
    if n_a + ratio * n_b <= 0:  # no counted samples (no per-window data): no evidence
        return 1.0, 1.0
    p0 = ratio * n_b / (n_a + ratio * n_b)
    above = float(sps.binom.sf(k_b - 1, total, p0))  # P(X >= k_b)
    below = float(sps.binom.cdf(k_b, total, p0))  # P(X <= k_b)
    return above, below


def _fmt_pct(rel: float) -> str:
    """A relative change as '+12.3%'."""
    return f"{rel:+.1%}"


def check_quantile(cell: str, run: str, d: MetricDiff, a: CellData, b: CellData,
                   limit: float) -> GateCheck:
    """A percentile: its bootstrap interval against the limit."""
    q = QUANTILE[d.metric]
    base = GateCheck(cell, run, d.metric, INCONCLUSIVE, "", d.a, d.b)
    if a.published or b.published:
        base.reason = "a published figure has no distribution to resample"
        return base
    for label, c in (("baseline", a), (run, b)):
        if c.figures.get(d.metric) is None:
            base.reason = (f"too few samples for {d.metric} in {label} ({c.samples or 0}; "
                           f"it needs {min_samples(q)})")
            return base
    if not d.a:
        base.reason = f"the baseline's {d.metric} is 0: no relative change"
        return base
    base.rel = d.rel
    windows = min(a.matrix.windows if a.matrix else 0, b.matrix.windows if b.matrix else 0)
    if d.lo is None or d.hi is None:
        if base.rel is not None and far_beyond(base.rel, limit):
            base.outcome = REGRESSION
            base.reason = f"{_fmt_pct(base.rel)} without an interval ({windows} windows)"
        else:
            base.reason = (f"no interval: {windows} windows, an interval needs {MIN_WINDOWS}"
                           if windows < MIN_WINDOWS else f"no interval: {d.note}")
        return base
    base.rel_lo, base.rel_hi = d.lo / d.a, d.hi / d.a
    span = f"95 % interval {_fmt_pct(base.rel_lo)} .. {_fmt_pct(base.rel_hi)}"
    if base.rel_lo > limit:
        base.outcome, base.reason = REGRESSION, f"{span}, wholly above the limit"
    elif base.rel_hi <= limit:
        base.outcome, base.reason = NO_REGRESSION, f"{span}, wholly at or below the limit"
    else:
        base.reason = f"{span} contains the limit: the runs cannot tell"
    return base


def tail_level(m: WindowMatrix) -> float | None:
    """The lower bound of the bucket holding the baseline's TAIL_COUNT-th largest sample."""
    if m.samples < TAIL_COUNT or m.buckets.size == 0:
        return None
    from_top = np.cumsum(m.counts.sum(axis=0)[::-1])
    k = int(np.searchsorted(from_top, TAIL_COUNT))
    return float(hist.lower(m.buckets[::-1][k])[0])


def check_max(cell: str, run: str, a: CellData, b: CellData, limit: float) -> GateCheck:
    """The max: b's samples above (1 + limit) x a's max, and b's tail at a's level."""
    va, vb = a.figures.get("max"), b.figures.get("max")
    out = GateCheck(cell, run, "max", INCONCLUSIVE, "", va, vb)
    if va is None or vb is None or a.matrix is None or b.matrix is None:
        out.reason = "a published or missing max has no samples to count"
        return out
    if not va:
        out.reason = "the baseline's max is 0: no relative change"
        return out
    out.rel = vb / va - 1.0
    level = (1.0 + limit) * va
    n_a, n_b = a.matrix.samples, b.matrix.samples
    k_b = samples_above(b.matrix, level) if n_b else 0
    if vb > level:
        above, _ = count_tests(0, n_a, k_b, n_b, 1.0)
        if k_b and above < ALPHA:
            out.outcome = REGRESSION
            out.reason = (f"{k_b} samples above {level / 1000:.4g} us (the baseline had none "
                          f"in {n_a}); count test p = {above:.2g}")
        elif far_beyond(out.rel, limit):
            out.outcome = REGRESSION
            out.reason = (f"{_fmt_pct(out.rel)} without an interval ({k_b} samples above "
                          f"the limit; one sample decides a max)")
        else:
            out.reason = (f"{k_b} samples above the limit: too few to tell a worse tail "
                          "from chance")
        return out
    if n_b < SAMPLES_SHARE * n_a:
        out.reason = (f"{run} has {n_b} samples against the baseline's {n_a}: its max had "
                      "fewer chances to show")
        return out
    if n_a < MIN_TAIL_SAMPLES:
        out.reason = (f"the baseline has {n_a} samples; telling its max from chance needs "
                      f"{MIN_TAIL_SAMPLES} (its {TAIL_COUNT} largest then lie above its p99)")
        return out
    tail = tail_level(a.matrix)
    if tail is None:
        out.reason = f"the baseline has fewer than {TAIL_COUNT} samples"
        return out
    above, _ = count_tests(samples_above(a.matrix, tail), n_a, samples_above(b.matrix, tail),
                           n_b, 1.0 + limit)
    if above < ALPHA:
        out.reason = (f"max within the limit, but more samples than the baseline above its "
                      f"tail level {tail / 1000:.4g} us (p = {above:.2g})")
        return out
    out.outcome = NO_REGRESSION
    out.reason = (f"max {_fmt_pct(out.rel)} with {n_b} samples against {n_a}; the tail above "
                  f"{tail / 1000:.4g} us is not surely heavier")
    return out


def exceedance_level(a: CellData) -> float | None:
    """The level the exceedance rate is counted above: the cell's smallest threshold,
    else the baseline's p99."""
    thresholds = [t for t, _ in a.exceed_rates if t]
    if thresholds:
        return float(min(thresholds))
    return a.figures.get("p99")


def check_exceedance(cell: str, run: str, a: CellData, b: CellData,
                     limit: float) -> GateCheck:
    """The share of samples above a level: exact count tests against (1 + limit) x a's."""
    out = GateCheck(cell, run, "exceedance-rate", INCONCLUSIVE, "")
    level = exceedance_level(a)
    if a.matrix is None or b.matrix is None or level is None:
        out.reason = ("no level to count above (no threshold and too few samples for p99)"
                      if level is None else "a published cell has no samples to count")
        return out
    n_a, n_b = a.matrix.samples, b.matrix.samples
    k_a, k_b = samples_above(a.matrix, level), samples_above(b.matrix, level)
    out.baseline, out.value = 1e6 * k_a / n_a, 1e6 * k_b / n_b
    where = f"above {level / 1000:.4g} us: {k_a} of {n_a} against {k_b} of {n_b}"
    if k_a + k_b == 0:
        out.reason = f"no sample {where.split(':')[0]} in either run"
        return out
    if k_a:
        out.rel = out.value / out.baseline - 1.0
    above, below = count_tests(k_a, n_a, k_b, n_b, 1.0 + limit)
    if above < ALPHA:
        out.outcome, out.reason = REGRESSION, f"{where} (p = {above:.2g})"
    elif below < ALPHA:
        out.outcome, out.reason = NO_REGRESSION, f"{where} (p = {below:.2g})"
    else:
        out.reason = f"{where}: too few to tell"
    return out


def gate(comp: Comparison, metrics: Sequence[str], limit: float,
         alpha: float = GATE_ALPHA) -> list[GateCheck]:
    """Every decision for every matched cell, run and metric, plus one inconclusive
    check for each baseline cell another run lacks (and each cell the baseline lacks).

    A regression is the decision model's (analysis/runmodel.py: beyond the limit and the
    run-to-run spread, a max judged by its tail), Holm-corrected at alpha over every
    check of the same run; "no regression" keeps the within-run rules below."""
    base = next((i for i, v in enumerate(comp.runs) if not v.published), 0)
    out: list[GateCheck] = []
    tests: dict[int, Test] = {}  # position in out -> the model's test
    models: dict[int, CellRun] = {}
    for row in comp.rows:
        a = row.cells[base]
        label = row.key.label()
        for i, b in enumerate(row.cells):
            if i == base or comp.runs[i].published:
                continue
            run = comp.runs[i].label
            if a is None or b is None:
                missing = comp.runs[base].label if a is None else run
                out.append(GateCheck(label, run, ",".join(metrics), INCONCLUSIVE,
                                     f"different cells: {missing} has no {label}"))
                continue
            diffs = {d.metric: d for d in row.diffs[i]}
            measured = not a.published and not b.published
            if measured:
                ma = models.setdefault(id(a), cell_run(a, within=True))
                mb = models.setdefault(id(b), cell_run(b, within=True))
            for metric in metrics:
                if measured:
                    tests[len(out)] = metric_test(metric, BaselineCells([ma]), [mb], limit)
                out.append(_check(label, run, metric, a, b, diffs, limit))
    _decide(out, tests, limit, alpha)
    for i, key in comp.unmatched:
        lacking = [j for j, v in enumerate(comp.runs) if j != i and not v.published] \
            if i == base else ([] if comp.runs[i].published else [base])
        for j in lacking:
            other = comp.runs[i if i != base else j].label
            out.append(GateCheck(key.label(), other, ",".join(metrics), INCONCLUSIVE,
                                 f"different cells: {comp.runs[j].label} has no "
                                 f"{key.label()}"))
    return out


def _decide(checks: list[GateCheck], tests: dict[int, Test], limit: float,
            alpha: float) -> None:
    """Set each check's outcome: regression where the model's test is significant after
    Holm's correction over the checks of the same run; else the within-run check's "no
    regression"; else inconclusive, saying why."""
    for run in {c.run for c in checks}:
        where = [n for n, c in enumerate(checks) if c.run == run and n in tests]
        significant = holm([tests[n].p for n in where], alpha)
        for n, sig in zip(where, significant, strict=True):
            check, test = checks[n], tests[n]
            if sig:
                check.outcome, check.reason = REGRESSION, test.reason
                check.rel = test.rel if check.rel is None else check.rel
            elif check.outcome == REGRESSION or (check.outcome == INCONCLUSIVE
                                                  and test.p is not None):
                check.outcome = INCONCLUSIVE
                check.reason = (f"{test.reason}: not beyond the limit and the run-to-run "
                                f"spread at {alpha:g} over the run's {len(where)} checks "
                                f"(Holm)")
            elif check.outcome == INCONCLUSIVE and check.metric == "max" \
                    and test.rel is not None and test.rel > limit:
                check.reason = test.reason


def _check(cell: str, run: str, metric: str, a: CellData, b: CellData,
           diffs: dict[str, MetricDiff], limit: float) -> GateCheck:
    """One metric of one cell of one run."""
    if metric in QUANTILE:
        if metric not in diffs:
            raise ValueError(f"metric {metric} was not compared")
        return check_quantile(cell, run, diffs[metric], a, b, limit)
    if metric == "max":
        return check_max(cell, run, a, b, limit)
    if metric == "exceedance-rate":
        return check_exceedance(cell, run, a, b, limit)
    raise ValueError(f"unknown gate metric {metric}")


def overall(checks: Sequence[GateCheck]) -> str:
    """REGRESSION if any check is one, else INCONCLUSIVE if any is, else NO_REGRESSION."""
    outcomes = {c.outcome for c in checks}
    if REGRESSION in outcomes:
        return REGRESSION
    if INCONCLUSIVE in outcomes or not checks:
        return INCONCLUSIVE
    return NO_REGRESSION
