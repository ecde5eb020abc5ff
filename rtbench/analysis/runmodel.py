"""The regression decision model over runs (pure): does a new run, or the runs of a new
kernel, show a metric of a cell worse than its baseline runs by more than the limit *and*
more than the baseline's run-to-run spread?  docs/statistics.md ("Regressions over runs")
states the model and what it guarantees; in short:

- percentiles (p50, p99, p99.9) and the exceedance rate are compared as one figure per
  run, on a log scale, against the baseline runs' mean, with a prediction interval whose
  spread is the baseline runs' between-run spread (a prior of PRIOR_SD with PRIOR_DF
  pseudo-runs where the baseline has few runs; a one-run baseline has only the prior),
  plus the run's own window-bootstrap spread (exceedances: quasi-Poisson over windows);
- the max is never decided from one to three samples: the baseline's per-window maxima
  are fitted with a GEV (analysis/evt.py) and the new runs' windows above
  (1 + limit) x the baseline's max are counted against that tail, the count deflated by
  the over-dispersion of window exceedances in the baseline; fewer than MIN_EVENTS such
  windows (or samples, without enough windows to fit) are inconclusive;
- the checks of one run (every cell and metric) are one family: Holm's step-down method
  at alpha keeps the chance of any false regression in a run at or below alpha;
- persistence: one run's significant check makes it *suspected*; it is *confirmed* when
  the runs of the new kernel (at least confirm_runs of them) are significant together
  (the same test on their mean, Holm again), or when the last two runs are each
  significant beyond STRICT_P.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from rtbench.analysis import evt
from rtbench.analysis.bootstrap import MIN_WINDOWS, WindowMatrix, replicates
from rtbench.analysis.compare import QUANTILE, CellData
from rtbench.rtprobe.wire import loglin7 as hist

F64 = npt.NDArray[np.float64]
# the between-run spread (sd of the log figure) assumed before any run says otherwise,
# and its weight in pseudo-runs: a baseline of n runs estimates it with n - 1 degrees of
# freedom, added to these
PRIOR_SD = {"p50": 0.05, "p99": 0.05, "p99.9": 0.10, "exceedance-rate": 0.30}
PRIOR_DF = 4
BOARD_ALPHA = 0.01  # the board: P(any false regression among a run's checks) <= 1 %
GATE_ALPHA = 0.05  # compare's gate: <= 5 % per compared run
CONFIRM_RUNS = 3  # runs of the new kernel a confirmed regression needs (per lab)
STRICT_P = 1e-6  # two runs each beyond this: confirmed without waiting for the third
MIN_EVENTS = 4  # windows (or samples) above the level a max regression needs
SIDE = 0.025  # "surely within the limit": one-sided 2.5 %
SHARE = 0.9  # a max is "no regression" only from a run of this share of the baseline's
TAIL_Q = 0.9  # the over-dispersion of the baseline's windows above their own 90 % point
CHUNK_WINDOWS = 6  # consecutive windows per chunk when the over-dispersion is estimated
TAIL_DEPTH = 100  # samples above a percentile it needs to be compared across runs
MAX_SERIES = 10  # runs of the new kernel taken together at most (the newest)
WITHIN_REPS = 200  # bootstrap replicates of a run's own spread
STATES = ("confirmed", "suspected")
# a one-run change without an interval of its own is tested only this far past the limit
FAR_FACTOR = 2.0
FAR_MARGIN = 0.5


@dataclass
class CellRun:
    """One cell of one run as the model reads it."""

    label: str
    figures: dict[str, float | None]  # p50 p99 p99.9 max (ns)
    samples: int
    matrix: WindowMatrix | None
    thresholds: list[int]
    window_max: F64  # per window: the lower bound of its largest sample's bucket
    within: dict[str, float] = field(default_factory=dict)  # log sd of the run's own figure


def window_maxima(m: WindowMatrix | None) -> F64:
    """Each window's largest sample (its bucket's lower bound), in window order."""
    if m is None or m.windows == 0 or m.buckets.size == 0:
        return np.zeros(0)
    nonzero = m.counts > 0
    last = m.buckets.size - 1 - np.argmax(nonzero[:, ::-1], axis=1)
    out = hist.lower(m.buckets[last]).astype(np.float64)
    return np.asarray(out[nonzero.any(axis=1)], dtype=np.float64)


def cell_run(cell: CellData, *, within: bool = False, seed: int = 0) -> CellRun:
    """A cell of a run for the model; within: also the run's own (window-bootstrap) spread
    of each percentile, needed when the run is judged alone."""
    out = CellRun(label=cell.key.label(), figures=dict(cell.figures),
                  samples=int(cell.samples or 0), matrix=cell.matrix,
                  thresholds=sorted(t for t, _ in cell.exceed_rates if t),
                  window_max=window_maxima(cell.matrix))
    if within and cell.matrix is not None and cell.matrix.windows >= MIN_WINDOWS:
        qs = list(QUANTILE.items())
        # compare's replicates of this cell when it drew them, else a few of our own
        rep = next(iter(cell.replicates.values()), None) if cell.replicates else None
        if rep is None:
            rep = replicates(cell.matrix, [q for _, q in qs], WITHIN_REPS, seed)
        for j, (metric, _) in enumerate(qs):
            col = rep[:, j]
            if cell.figures.get(metric) and np.all(col > 0):
                out.within[metric] = float(np.std(np.log(col)))
    return out


@dataclass
class Test:
    """One metric of one cell of one run (or of a kernel's runs together), before the
    family's correction: the p-value of "worse beyond the limit and the spread"."""

    metric: str
    p: float | None  # None: not testable (the reason says why)
    clear: bool  # surely within the limit ("no regression")
    rel: float | None
    baseline: float | None
    value: float | None
    reason: str


@dataclass
class BaselineCells:
    """One cell's baseline runs with what the model derives from them once (a server
    keeps a board's baseline in memory: each new run against it refits nothing)."""

    runs: list[CellRun]
    _gev: tuple[float, float, float] | None = None
    _gev_done: bool = False
    _derived: dict[str, float] = field(default_factory=dict)

    def gev(self) -> tuple[float, float, float] | None:
        """The GEV fitted to every baseline window's max (None: too few windows)."""
        if not self._gev_done:
            maxima = self.maxima()
            self._gev = evt.fit_gev_params(list(maxima)) if maxima.size >= evt.MIN_BLOCKS \
                and np.ptp(maxima) > 0 else None
            self._gev_done = True
        return self._gev

    def maxima(self) -> F64:
        """Every baseline window's max, run after run."""
        return np.concatenate([r.window_max for r in self.runs]) if self.runs \
            else np.zeros(0)

    def tail_level(self) -> float:
        """The TAIL_Q-quantile of the baseline's window maxima (level_of, once)."""
        if "tail_level" not in self._derived:
            self._derived["tail_level"] = level_of(self, TAIL_Q)
        return self._derived["tail_level"]

    def tail_dispersion(self) -> float:
        """The over-dispersion of the baseline's windows above tail_level (once)."""
        if "tail_dispersion" not in self._derived:
            self._derived["tail_dispersion"] = _dispersion(self.runs, self.tail_level())
        return self._derived["tail_dispersion"]

    def median_samples(self) -> float:
        """The median samples per baseline run (once)."""
        if "median_samples" not in self._derived:
            self._derived["median_samples"] = float(
                np.median([r.samples for r in self.runs]))
        return self._derived["median_samples"]

    def windows_at(self, top: float) -> int:
        """How many baseline windows reach top (its max) within a bucket's width, at
        least one (once per top)."""
        key = f"at {top!r}"
        if key not in self._derived:
            self._derived[key] = max(1, int((self.maxima() >= top * (1.0 - 1.0 / 128))
                                            .sum()))
        return int(self._derived[key])


def _spread(logs: F64, metric: str) -> tuple[float, float]:
    """The between-run sd of a log figure and its degrees of freedom (inf: the prior
    alone, a one-run baseline)."""
    s0 = PRIOR_SD[metric]
    n = logs.size
    if n < 2:
        return s0, math.inf
    df = PRIOR_DF + n - 1
    return math.sqrt((PRIOR_DF * s0 ** 2 + (n - 1) * float(np.var(logs, ddof=1))) / df), df


def _sf(stat: float, df: float) -> float:
    """P(T > stat) for Student's t with df degrees of freedom (normal when infinite).
    The special functions scipy.stats' sf calls, without its argument handling (which
    took most of a check's model time): the same values.  scipy is imported here, not
    at the top: a run whose board has no baseline never needs it (evt.py says why)."""
    from scipy import special

    return float(special.ndtr(-stat) if math.isinf(df) else special.stdtr(df, -stat))


def _log_test(metric: str, base_logs: F64, new_logs: F64, within: float | None,
              limit: float) -> tuple[float, bool, float]:
    """(p of worse beyond limit, surely within it, relative change) of log figures: the
    new runs' mean against the baseline runs' prediction interval; within: the variance
    of the runs' own figures to add (the one-run case)."""
    s, df = _spread(base_logs, metric)
    n, k = base_logs.size, new_logs.size
    var = s ** 2 * (1.0 / k + 1.0 / n) + (within or 0.0)
    diff = float(new_logs.mean() - base_logs.mean())
    stat = (diff - math.log1p(limit)) / math.sqrt(var)
    return _sf(stat, df), _sf(-stat, df) < SIDE, math.expm1(diff)


def quantile_test(metric: str, base: Sequence[CellRun], new: Sequence[CellRun],
                  limit: float) -> Test:
    """A percentile: the new runs' figure against the baseline runs' and their spread."""
    xs = [c.figures.get(metric) for c in base]
    ys = [c.figures.get(metric) for c in new]
    bx = np.log([x for x in xs if x]) if all(xs) else np.zeros(0)
    ny = np.log([y for y in ys if y]) if all(ys) else np.zeros(0)
    bval = float(np.exp(bx.mean())) if bx.size else None
    nval = float(np.exp(ny.mean())) if ny.size else None
    if not bx.size or not ny.size:
        return Test(metric, None, False, None, bval, nval,
                    f"too few samples (or a zero) for {metric} in "
                    f"{'the baseline' if not bx.size else 'the run'}")
    need = math.ceil(TAIL_DEPTH / (1.0 - QUANTILE[metric]))
    short = [c.samples for c in [*base, *new] if c.samples < need]
    if len(base) > 1 and short:
        # across runs a percentile with few samples above it jumps with one burst more
        # or less: it is judged only TAIL_DEPTH samples deep (the max has the tail model)
        return Test(metric, None, False, math.expm1(float(ny.mean() - bx.mean())), bval,
                    nval, f"{metric} of {short[0]} samples lies "
                    f"{short[0] * (1 - QUANTILE[metric]):.0f} samples deep; across runs it "
                    f"is judged from {TAIL_DEPTH} ({need} samples)")
    within = None
    if len(base) == 1 and len(new) == 1:
        wa, wb = base[0].within.get(metric), new[0].within.get(metric)
        if wa is None or wb is None:
            rel = math.expm1(float(ny.mean() - bx.mean()))
            windows = min(c.matrix.windows if c.matrix else 0 for c in (base[0], new[0]))
            if not rel > max(FAR_FACTOR * limit, limit + FAR_MARGIN):
                return Test(metric, None, False, rel, bval, nval,
                            f"no interval: {windows} windows, an interval needs "
                            f"{MIN_WINDOWS}")
            p, _, rel = _log_test(metric, bx, ny, None, limit)
            return Test(metric, p, False, rel, bval, nval,
                        f"{rel:+.1%} without an interval ({windows} windows), beyond the "
                        f"assumed run-to-run spread of {PRIOR_SD[metric]:.0%} (p = {p:.2g})")
        within = wa ** 2 + wb ** 2
    elif len(new) == 1 and metric in new[0].within:
        within = new[0].within[metric] ** 2
    p, clear, rel = _log_test(metric, bx, ny, within, limit)
    spread, _ = _spread(bx, metric)
    return Test(metric, p, clear, rel, bval, nval,
                f"{rel:+.1%} against {len(base)} baseline run(s) with a run-to-run spread "
                f"of {spread:.1%} (p = {p:.2g})")


def _dispersion(base: Sequence[CellRun], level: float) -> float:
    """How much more windows above level vary than independent windows would (>= 1):
    the variance of their counts over chunks of consecutive baseline windows against
    the binomial's."""
    counts, sizes = [], []
    for r in base:
        above = r.window_max > level
        for start in range(0, above.size - CHUNK_WINDOWS + 1, CHUNK_WINDOWS):
            counts.append(float(above[start:start + CHUNK_WINDOWS].sum()))
            sizes.append(CHUNK_WINDOWS)
    if len(counts) < 3:
        return 1.0
    c = np.asarray(counts)
    p = float(c.sum()) / sum(sizes)
    if p <= 0 or p >= 1:
        return 1.0
    return max(1.0, float(np.var(c, ddof=1)) / (CHUNK_WINDOWS * p * (1 - p)))


def _binom_sf(k: float, n: float, p: float) -> float:
    """P(X >= k) for X binomial(n, p), k and n deflated counts (rounded)."""
    k_i, n_i = max(int(math.ceil(k)), 0), max(int(math.floor(n)), 1)
    from scipy import stats as sps

    return float(sps.binom.sf(k_i - 1, n_i, p))


def max_test(base: BaselineCells, new: Sequence[CellRun], limit: float) -> Test:
    """The max: the new runs' windows above (1 + limit) x the baseline's max, against the
    baseline's GEV tail of window maxima (or, with too few windows to fit, samples)."""
    mb = [c.figures.get("max") for c in base.runs]
    mn = [c.figures.get("max") for c in new]
    if not all(mb) or not all(mn) or not base.runs:
        return Test("max", None, False, None, None, None, "a max is missing or 0")
    top, newest = float(max(x or 0.0 for x in mb)), float(max(x or 0.0 for x in mn))
    rel = newest / top - 1.0
    level = (1.0 + limit) * top
    out = Test("max", None, False, rel, top, newest, "")
    windows = np.concatenate([c.window_max for c in new])
    k = int((windows > level).sum())
    base_windows = sum(r.window_max.size for r in base.runs)
    if newest > level:
        if k < MIN_EVENTS:
            out.reason = (f"{k} window(s) above {level / 1000:.4g} us (+{limit:.0%} over "
                          f"the baseline's max): a max is never decided from fewer than "
                          f"{MIN_EVENTS}")
            return out
        # the baseline's own worst windows (at its max; at least the one that set it)
        # against the new runs' windows above the level: exact conditional test of equal
        # rates, which a tail model that misses a rare outlier process cannot fool
        k_a = base.windows_at(top)
        p_count = _binom_sf(k, k + k_a, windows.size / (base_windows + windows.size))
        gev = base.gev()  # fitted only here: a max within the level needs no tail fit
        if gev is None:
            out.p = p_count
            out.reason = (f"{k} of {windows.size} windows above {level / 1000:.4g} us, the "
                          f"baseline {k_a} of {base_windows} at its max (exact count test, "
                          f"p = {out.p:.2g}; too few baseline windows for a tail fit)")
            return out
        p_block = max(evt.gev_sf(level, *gev), 1e-300)
        phi = base.tail_dispersion()
        p_gev = _binom_sf(k / phi, windows.size / phi, p_block)
        out.p = max(p_gev, p_count)
        out.reason = (f"{k} of {windows.size} windows above {level / 1000:.4g} us "
                      f"(+{limit:.0%} over the baseline's max); the baseline's GEV tail "
                      f"gives each {p_block:.2g} (over-dispersion {phi:.2g}, p = "
                      f"{p_gev:.2g}), its {k_a} of {base_windows} windows at its max "
                      f"p = {p_count:.2g}")
        return out
    return _max_within(base, new, limit, out, windows)


def level_of(base: BaselineCells, q: float) -> float:
    """The q-quantile of the baseline's window maxima."""
    maxima = np.concatenate([r.window_max for r in base.runs])
    return float(np.quantile(maxima, q)) if maxima.size else math.inf


def _max_within(base: BaselineCells, new: Sequence[CellRun], limit: float, out: Test,
                windows: F64) -> Test:
    """A max at or below the level: "no regression" when the runs were long enough
    and their windows' tail is not surely heavier than the baseline's."""
    per_run = base.median_samples()
    short = [c for c in new if c.samples < SHARE * per_run]
    base_windows = sum(r.window_max.size for r in base.runs)
    if short:
        out.reason = (f"max within the limit, but a run has {short[0].samples} samples "
                      f"against the baseline's {per_run:.0f}: fewer chances to show")
    elif base_windows < evt.MIN_BLOCKS:
        out.reason = (f"max within the limit; the baseline has {base_windows} windows, a "
                      f"tail needs {evt.MIN_BLOCKS}")
    else:
        q = base.tail_level()
        phi = base.tail_dispersion()
        k = int((windows > q).sum())
        heavy = _binom_sf(k / phi, windows.size / phi, (1 - TAIL_Q) * (1 + limit))
        if heavy < SIDE:
            out.reason = (f"max within the limit, but {k} of {windows.size} windows above "
                          f"the baseline's 90 % window max (p = {heavy:.2g})")
        else:
            out.clear = True
            out.reason = (f"max {out.rel:+.1%}, within +{limit:.0%} of the baseline's, "
                          f"its windows' tail not heavier")
    return out


def _samples_above(m: WindowMatrix | None, level: float) -> int:
    """Samples of a cell in buckets whose lower bound is at or above level."""
    if m is None or m.buckets.size == 0:
        return 0
    mask = hist.lower(m.buckets).astype(np.float64) >= level
    return int(m.counts[:, mask].sum())


def exceedance_level(base: Sequence[CellRun]) -> float | None:
    """The level the exceedance rate counts above: the smallest threshold of the
    baseline's cell, else the median of its runs' p99."""
    thresholds = [t for c in base for t in c.thresholds]
    if thresholds:
        return float(min(thresholds))
    p99 = [c.figures.get("p99") for c in base if c.figures.get("p99")]
    return float(np.median(np.asarray(p99, dtype=np.float64))) if p99 else None


def _rate_log(c: CellRun, level: float) -> tuple[float, float, int]:
    """(log rate above level, its quasi-Poisson variance, count) of one run's cell."""
    k = _samples_above(c.matrix, level)
    rate = (k + 0.5) / max(c.samples, 1)
    phi = 1.0
    if c.matrix is not None and c.matrix.windows >= 3:
        mask = hist.lower(c.matrix.buckets).astype(np.float64) >= level
        per = c.matrix.counts[:, mask].sum(axis=1)
        if per.mean() > 0:
            phi = max(1.0, float(np.var(per, ddof=1) / per.mean()))
    return math.log(rate), phi / (k + 0.5), k


def exceedance_test(base: Sequence[CellRun], new: Sequence[CellRun], limit: float) -> Test:
    """The rate of samples above a level: log rates per run against the baseline runs'
    spread, each run's own count as quasi-Poisson (its windows' over-dispersion)."""
    level = exceedance_level(base)
    if level is None or any(c.matrix is None for c in [*base, *new]):
        return Test("exceedance-rate", None, False, None, None, None,
                    "no level to count above, or a cell without windows")
    b = [_rate_log(c, level) for c in base]
    n = [_rate_log(c, level) for c in new]
    bl, nl = np.asarray([x for x, _, _ in b]), np.asarray([x for x, _, _ in n])
    within = n[0][1] + b[0][1] if len(b) == 1 and len(n) == 1 else \
        (n[0][1] if len(n) == 1 else None)
    p, clear, rel = _log_test("exceedance-rate", bl, nl, within, limit)
    k_new = sum(k for _, _, k in n)
    out = Test("exceedance-rate", p, clear, rel, 1e6 * math.exp(bl.mean()),
               1e6 * math.exp(nl.mean()),
               f"{k_new} samples above {level / 1000:.4g} us; rate {rel:+.1%} (p = {p:.2g})")
    if k_new < MIN_EVENTS:
        out.p = None
        out.reason = (f"{k_new} sample(s) above {level / 1000:.4g} us: a rate is never "
                      f"decided from fewer than {MIN_EVENTS}")
    return out


def metric_test(metric: str, base: BaselineCells, new: Sequence[CellRun], limit: float) -> Test:
    """One metric of one cell: the new runs (one, or a kernel's together) against base."""
    if metric in QUANTILE:
        return quantile_test(metric, base.runs, new, limit)
    if metric == "max":
        return max_test(base, new, limit)
    if metric == "exceedance-rate":
        return exceedance_test(base.runs, new, limit)
    raise ValueError(f"unknown metric {metric}")


def holm(ps: Sequence[float | None], alpha: float) -> list[bool]:
    """Holm's step-down method: which p-values are significant with the chance of any
    false one at or below alpha (None: not a test; never significant)."""
    order = sorted((p, i) for i, p in enumerate(ps) if p is not None)
    m = len(order)
    out = [False] * len(ps)
    for rank, (p, i) in enumerate(order):
        if p > alpha / (m - rank):
            break
        out[i] = True
    return out


@dataclass
class Decision:
    """The model's answer for one cell and metric at the newest run of a series."""

    cell: str
    metric: str
    state: str | None  # "confirmed", "suspected" or None (no open regression)
    outcome: str  # "regression" (the newest run alone), "no regression", "inconclusive"
    reason: str
    baseline: float | None
    value: float | None
    rel: float | None
    p_run: float | None
    p_series: float | None
    series_runs: int


def decide(base: Mapping[str, BaselineCells], series: Sequence[Mapping[str, CellRun]],
           metrics: Sequence[str], limit: float, *, alpha: float = BOARD_ALPHA,
           confirm_runs: int = CONFIRM_RUNS) -> list[Decision]:
    """Every cell and metric of the newest run of series (a new kernel's runs against
    the same baseline, oldest first) against base (per cell label)."""
    newest = series[-1]
    series = list(series)[-MAX_SERIES:]
    keys = [(label, metric) for label in newest if label in base for metric in metrics]
    single = [metric_test(m, base[c], [newest[c]], limit) for c, m in keys]
    together: list[Test | None] = []
    for c, m in keys:
        runs = [s[c] for s in series if c in s]
        together.append(metric_test(m, base[c], runs, limit) if len(runs) > 1 else None)
    previous: list[Test | None] = []
    for c, m in keys:
        before = series[-2][c] if len(series) > 1 and c in series[-2] else None
        previous.append(metric_test(m, base[c], [before], limit)
                        if before is not None and single[len(previous)].p is not None
                        and (single[len(previous)].p or 1.0) < STRICT_P else None)
    run_sig = holm([t.p for t in single], alpha)
    series_sig = holm([t.p if t is not None else None for t in together], alpha)
    out = []
    for n, (cell, metric) in enumerate(keys):
        t, s, prev = single[n], together[n], previous[n]
        count = sum(1 for x in series if cell in x)
        beyond = t.rel is not None and t.rel > limit and not t.clear
        strict = (prev is not None and prev.p is not None and prev.p < STRICT_P
                  and t.p is not None and t.p < STRICT_P)
        state = None
        reason = t.reason
        if beyond and ((series_sig[n] and count >= confirm_runs) or strict):
            state = "confirmed"
            reason = (f"{t.reason}; confirmed over {count} runs of the kernel"
                      + (f" (together p = {s.p:.2g})" if s is not None and s.p is not None
                         else "") + ("" if series_sig[n] and count >= confirm_runs
                                     else "; the last two runs each beyond "
                                     f"p < {STRICT_P:g}"))
        elif run_sig[n]:
            state = "suspected"
            reason = f"{t.reason}; suspected: {count} run(s) of the kernel so far"
        elif t.p is not None and t.p <= alpha:
            reason = (f"{t.reason}; not significant across the run's {len(keys)} checks "
                      f"(Holm at {alpha:g})")
        outcome = "regression" if run_sig[n] else ("no regression" if t.clear
                                                   else "inconclusive")
        out.append(Decision(cell, metric, state, outcome, reason, t.baseline, t.value,
                            t.rel, t.p, None if s is None else s.p, count))
    for label in newest:
        if label not in base:
            out.append(Decision(label, ",".join(metrics), None, "inconclusive",
                                f"different cells: the baseline has no {label}", None,
                                None, None, None, None, 1))
    return out
