"""The cycle-time advisor: the 25 % rule on the observed worst case and on an
extreme-value estimate of the latency exceeded once per horizon (pure).

Rule (reference/README.md, the ARM evaluation): a cyclic task's worst-case
latency should stay within a budget (25 %) of its cycle, so the smallest usable
cycle is worst case / budget.  docs/advise.md explains it for control engineers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rtbench.analysis import evt
from rtbench.bundle import MeasurementDetail

MIN_DISTINCT = 10  # window maxima taking fewer distinct values: no tail to fit
# The credibility rule of an extreme-value estimate (docs/advise.md): it is not credible
# when its 95 % interval spans more than CREDIBLE_SPAN (upper / lower end), or when the
# estimate is more than CREDIBLE_REACH times the largest latency measured.
CREDIBLE_SPAN = 10.0
CREDIBLE_REACH = 10.0


@dataclass
class CellAdvice:
    """What the advisor says about one cell."""

    cell: str
    observed_max_ns: int
    observed_cycle_ns: float  # observed max / budget
    windows: int
    measured_s: float
    block_s: float
    horizon_s: float
    budget: float
    fit: evt.GevFit | None
    unsupported: str  # why there is no extreme-value estimate ('' when there is one)
    trend_p: float
    cycle_ns: int | None  # the cycle asked about
    overruns: int

    @property
    def evt_cycle_ns(self) -> float | None:
        """Smallest cycle the upper end of the estimate's interval allows."""
        if self.fit is None or self.unsupported:
            return None
        return self.fit.level_hi * 1000.0 / self.budget

    @property
    def doubts(self) -> list[str]:
        """Why the extreme-value estimate is not credible by the rule above (empty when
        it is, or when there is no estimate)."""
        fit = self.fit
        if fit is None or self.unsupported:
            return []
        found = []
        if fit.level_lo <= 0 or fit.level_hi / fit.level_lo > CREDIBLE_SPAN:
            span = "without a lower bound" if fit.level_lo <= 0 else \
                f"by a factor of {fit.level_hi / fit.level_lo:,.0f}"
            found.append(f"its 95 % interval spans {span} (more than "
                         f"{CREDIBLE_SPAN:g}×)")
        observed_us = self.observed_max_ns / 1000.0
        if observed_us > 0 and fit.level > CREDIBLE_REACH * observed_us:
            found.append(f"it is {fit.level / observed_us:,.0f}× the largest latency "
                         f"measured (more than {CREDIBLE_REACH:g}×)")
        return found

    @property
    def required_cycle_ns(self) -> float:
        """The larger of the two rules (the observed one alone without a fit)."""
        evt_cycle = self.evt_cycle_ns
        return max(self.observed_cycle_ns, evt_cycle or 0.0)

    @property
    def safe(self) -> bool | None:
        """Whether the given cycle meets every rule that could be applied."""
        if self.cycle_ns is None:
            return None
        return self.cycle_ns >= self.required_cycle_ns


def block_maxima(m: MeasurementDetail) -> tuple[list[float], float]:
    """Per measured window index, the largest latency of any thread (us), in time
    order; and the median window length in seconds."""
    by_index: dict[int, int] = {}
    lengths = []
    for w in m.windows:
        if w.warmup or not w.count or w.max_ns is None:
            continue
        by_index[w.index] = max(by_index.get(w.index, 0), int(w.max_ns))
        lengths.append(w.end_ns - w.start_ns)
    block_s = float(np.median(lengths)) / 1e9 if lengths else 1.0
    return [by_index[k] / 1000.0 for k in sorted(by_index)], block_s


def advise_cell(label: str, m: MeasurementDetail, *, budget: float, horizon_s: float,
                cycle_ns: int | None) -> CellAdvice | None:
    """The advice for one measurement with latency series (None without samples)."""
    series = [s for s in m.series if s.count and s.max_ns is not None]
    if not series:
        return None
    observed = max(int(s.max_ns or 0) for s in series)
    overruns = sum(s.overruns for s in series)
    maxima, block_s = block_maxima(m)
    measured_s = (m.measured_ns or 0) / 1e9 or len(maxima) * block_s
    periods = horizon_s / block_s if block_s > 0 else 0.0
    fit = None
    reason = ""
    p = evt.trend_p(maxima) if len(maxima) >= 3 else 1.0
    if len(maxima) < evt.MIN_BLOCKS:
        reason = (f"run too short: {len(maxima)} measured windows, the fit needs at least "
                  f"{evt.MIN_BLOCKS} (measure {evt.MIN_BLOCKS * block_s:.0f} s or more)")
    elif len(set(maxima)) < MIN_DISTINCT:
        reason = (f"the window maxima take only {len(set(maxima))} distinct values: "
                  "no tail to fit")
    elif p < evt.TREND_P:
        reason = (f"load not steady: the window maxima trend over time (Spearman p = "
                  f"{p:.2g}); an extreme-value fit assumes a steady process")
    elif periods <= 1:
        reason = "the horizon is not longer than one window"
    else:
        fit = evt.fit_gev(maxima, periods)
        if fit is None:
            reason = "the GEV likelihood has no maximum for these maxima"
        elif not (math.isfinite(fit.xi_lo) and math.isfinite(fit.xi_hi)) or \
                (fit.xi_hi - fit.xi_lo) / 2 > evt.MAX_SHAPE_HALF_WIDTH:
            reason = (f"shape interval too wide ({fit.xi_lo:.2f} .. {fit.xi_hi:.2f}): "
                      "measure longer")
        elif not math.isfinite(fit.level_hi):
            reason = "the likelihood does not bound the estimate from above: measure longer"
    return CellAdvice(label, observed, observed / budget, len(maxima), measured_s, block_s,
                      horizon_s, budget, fit, reason, p, cycle_ns, overruns)
