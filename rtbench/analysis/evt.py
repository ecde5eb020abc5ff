"""Extreme-value estimate of the tail: a GEV fitted to block maxima (pure, scipy).

Block maxima (here: the largest latency of each measured window) of a steady
process follow, for long enough blocks, a generalised extreme value (GEV)
distribution with location mu, scale sigma and shape xi (Coles' convention:
xi > 0 heavy tail, xi = 0 Gumbel, xi < 0 bounded tail).  It is fitted by
maximum likelihood; the latency exceeded on average once per m blocks (the
m-block return level) and its 95 % interval come from the profile likelihood,
which follows the skew of the estimate better than a symmetric interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats

F64 = npt.NDArray[np.float64]
MIN_BLOCKS = 30  # fewer block maxima: no fit
MAX_SHAPE_HALF_WIDTH = 0.5  # shape interval wider than +-0.5: the fit is not supported
TREND_P = 0.01  # Spearman trend of the maxima over time below this p: not steady
CHI2_95 = 3.841458820694124  # chi-square(1) 95 % point
_XI_EPS = 1e-6
_INVALID = 1e300  # nll outside the support (finite, so the simplex stays finite)


def gev_nll(params: Sequence[float], x: F64) -> float:
    """Negative log-likelihood of the GEV (mu, log sigma, xi) for maxima x."""
    mu, log_sigma, xi = params
    sigma = math.exp(log_sigma)
    z = (x - mu) / sigma
    if abs(xi) < _XI_EPS:
        return float(x.size * log_sigma + np.sum(z) + np.sum(np.exp(-z)))
    t = 1.0 + xi * z
    if np.any(t <= 0):
        return _INVALID
    return float(x.size * log_sigma + (1.0 + 1.0 / xi) * np.sum(np.log(t))
                 + np.sum(t ** (-1.0 / xi)))


def return_level(mu: float, sigma: float, xi: float, m: float) -> float:
    """The level exceeded on average once in m blocks."""
    y = -math.log1p(-1.0 / m)  # -log(1 - 1/m)
    if abs(xi) < _XI_EPS:
        return float(mu - sigma * math.log(y))
    return float(mu - sigma / xi * (1.0 - y ** (-xi)))


@dataclass
class GevFit:
    """A GEV fit with the return level of interest and its intervals."""

    mu: float
    sigma: float
    xi: float
    xi_lo: float
    xi_hi: float
    blocks: int
    m: float  # return period in blocks
    level: float  # m-block return level
    level_lo: float
    level_hi: float  # math.inf when the likelihood does not bound it
    nll: float


def _minimize(fun: Callable[[Any], float], start: Sequence[float]) -> optimize.OptimizeResult:
    """Nelder-Mead with tolerances fit for latencies in microseconds."""
    return optimize.minimize(fun, np.asarray(start, dtype=np.float64), method="Nelder-Mead",
                             options={"xatol": 1e-5, "fatol": 1e-6, "maxiter": 2000,
                                      "maxfev": 4000})


def fit_gev(maxima: Sequence[float], m: float) -> GevFit | None:
    """Fit a GEV to block maxima; None when the optimiser finds no finite fit.

    The maxima are standardised (median 0, spread 1) for the optimiser; every
    result is given back in the units of the input."""
    raw = np.asarray(maxima, dtype=np.float64)
    centre = float(np.median(raw))
    spread = float(np.std(raw)) or 1.0
    x = (raw - centre) / spread
    best = None
    for xi0 in (0.1, -0.1, 0.3):
        s0 = math.sqrt(6) / math.pi
        res = _minimize(lambda p: gev_nll(p, x), (float(np.mean(x)) - 0.5772 * s0,
                                                  math.log(s0), xi0))
        if res.fun < _INVALID / 2 and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        return None
    mu, log_sigma, xi = (float(v) for v in best.x)
    nll = float(best.fun)
    xi_lo, xi_hi = _profile_xi(x, mu, log_sigma, xi, nll)
    level = return_level(mu, math.exp(log_sigma), xi, m)
    lo, hi = _profile_level(x, (mu, log_sigma, xi), level, m, nll)
    return GevFit(centre + spread * mu, spread * math.exp(log_sigma), xi, xi_lo, xi_hi,
                  int(x.size), m, centre + spread * level, centre + spread * lo,
                  centre + spread * hi, nll + x.size * math.log(spread))


def _profile_xi(x: F64, mu: float, log_sigma: float, xi: float,
                nll: float) -> tuple[float, float]:
    """95 % profile-likelihood interval of the shape."""

    def prof(xi_fixed: float) -> float:
        res = _minimize(lambda p: gev_nll((p[0], p[1], xi_fixed), x), (mu, log_sigma))
        return float(res.fun) - nll - CHI2_95 / 2.0

    return (_root(prof, xi, -1.0, -2.0), _root(prof, xi, 1.0, 2.0))


def _root(f: Callable[[float], float], at: float, step: float, limit: float) -> float:
    """Where f crosses zero going from at (f(at) < 0) in the direction of step."""
    lo = at
    for k in range(1, 40):
        hi = at + step * (0.05 * 1.6 ** k)
        if (step > 0 and hi > at + abs(limit) * 4) or (step < 0 and hi < at - abs(limit) * 4):
            return math.inf if step > 0 else -math.inf
        if f(hi) > 0:
            return float(optimize.brentq(f, lo, hi, xtol=1e-3))
        lo = hi
    return math.inf if step > 0 else -math.inf


def _profile_level(x: F64, mle: tuple[float, float, float], level: float, m: float,
                   nll: float) -> tuple[float, float]:
    """95 % profile-likelihood interval of the m-block return level.

    The GEV is re-parametrised by (level, log sigma, xi): mu = level - (the
    return-level offset of sigma and xi); for each fixed level the other two are
    optimised."""
    _, log_sigma0, xi0 = mle

    def prof(z: float) -> float:
        def nll_at(p: Sequence[float]) -> float:
            sigma = math.exp(p[0])
            mu = z - (return_level(0.0, sigma, p[1], m))
            return gev_nll((mu, p[0], p[1]), x)
        res = _minimize(nll_at, (log_sigma0, xi0))
        return float(res.fun) - nll - CHI2_95 / 2.0

    span = max(level - float(np.median(x)), 1e-9)
    lo = _root(prof, level, -span * 0.05, span)
    hi = _root(prof, level, span * 0.05, span * 50)
    return lo, hi


def trend_p(maxima: Sequence[float]) -> float:
    """p-value of a monotone trend of the maxima over time (Spearman)."""
    x = np.asarray(maxima, dtype=np.float64)
    if x.size < 3 or np.all(x == x[0]):
        return 1.0
    result = stats.spearmanr(np.arange(x.size), x)
    p = float(result.pvalue)
    return 1.0 if math.isnan(p) else p
