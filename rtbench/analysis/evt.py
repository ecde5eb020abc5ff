"""Extreme-value estimate of the tail: a GEV fitted to block maxima (pure, scipy).

Block maxima (here: the largest latency of each measured window) of a steady
process follow, for long enough blocks, a generalised extreme value (GEV)
distribution with location mu, scale sigma and shape xi (Coles' convention:
xi > 0 heavy tail, xi = 0 Gumbel, xi < 0 bounded tail).  It is fitted by
maximum likelihood; the latency exceeded on average once per m blocks (the
m-block return level) and its 95 % interval come from the profile likelihood,
which follows the skew of the estimate better than a symmetric interval; the
shape's 95 % interval is the Wald interval from the observed information.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from scipy import optimize

# scipy is imported in the functions that use it: importing scipy.optimize and
# scipy.stats takes about a second of CPU, which every stored run paid (through its
# regression check) even when its board had no baseline to fit.

F64 = npt.NDArray[np.float64]
MIN_BLOCKS = 30  # fewer block maxima: no fit
MAX_SHAPE_HALF_WIDTH = 0.5  # shape interval wider than +-0.5: the fit is not supported
TREND_P = 0.01  # Spearman trend of the maxima over time below this p: not steady
CHI2_95 = 3.841458820694124  # chi-square(1) 95 % point
_XI_EPS = 1e-6
_INVALID = 1e300  # nll outside the support (finite, so the simplex stays finite)


def gev_nll(params: Sequence[float] | F64, x: F64) -> float:
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


def _minimize(fun: Callable[[Any], float], start: Sequence[float],
              tol: float = 1e-6) -> optimize.OptimizeResult:
    """Nelder-Mead on standardised maxima (tol: on the negative log-likelihood)."""
    from scipy import optimize

    return optimize.minimize(fun, np.asarray(start, dtype=np.float64), method="Nelder-Mead",
                             options={"xatol": tol * 10, "fatol": tol, "maxiter": 2000,
                                      "maxfev": 4000})


def _fit_standardised(x: F64) -> optimize.OptimizeResult | None:
    """The maximum-likelihood fit (mu, log sigma, xi) of standardised maxima x."""
    best = None
    s0 = math.sqrt(6) / math.pi
    for xi0 in (0.1, -0.1, 0.3):
        res = _minimize(lambda p: gev_nll(p, x), (float(np.mean(x)) - 0.5772 * s0,
                                                  math.log(s0), xi0))
        if res.fun < _INVALID / 2 and (best is None or res.fun < best.fun):
            best = res
        if best is not None and best.success:
            break
    return best


def _standardised(maxima: Sequence[float]) -> tuple[F64, float, float]:
    """The maxima as (x - median) / spread, with the median and the spread."""
    raw = np.asarray(maxima, dtype=np.float64)
    centre = float(np.median(raw))
    spread = float(np.std(raw)) or 1.0
    return (raw - centre) / spread, centre, spread


def fit_gev_params(maxima: Sequence[float]) -> tuple[float, float, float] | None:
    """The GEV's (mu, sigma, xi) fitted to block maxima by maximum likelihood, without
    intervals (None when the optimiser finds no finite fit)."""
    x, centre, spread = _standardised(maxima)
    best = _fit_standardised(x)
    if best is None:
        return None
    mu, log_sigma, xi = (float(v) for v in best.x)
    return centre + spread * mu, spread * math.exp(log_sigma), xi


def gev_sf(x: float, mu: float, sigma: float, xi: float) -> float:
    """P(a block maximum > x) under the GEV (mu, sigma, xi)."""
    z = (x - mu) / sigma
    if abs(xi) < _XI_EPS:
        return float(-math.expm1(-math.exp(-z)))
    t = 1.0 + xi * z
    if t <= 0:
        return 1.0 if xi > 0 else 0.0  # below a heavy tail's support / above a bounded one
    return float(-math.expm1(-t ** (-1.0 / xi)))


def fit_gev(maxima: Sequence[float], m: float) -> GevFit | None:
    """Fit a GEV to block maxima; None when the optimiser finds no finite fit.

    The maxima are standardised (median 0, spread 1) for the optimiser; every
    result is given back in the units of the input."""
    x, centre, spread = _standardised(maxima)
    best = _fit_standardised(x)
    if best is None:
        return None
    mle = tuple(float(v) for v in best.x)
    mu, log_sigma, xi = mle
    nll = float(best.fun)
    level = return_level(mu, math.exp(log_sigma), xi, m)
    se_xi, se_level = _standard_errors(x, mle, m)
    # the shape's interval only decides whether the fit is supported: the Wald
    # interval from the observed information is enough for that (and cheap)
    xi_lo, xi_hi = xi - 1.959964 * se_xi, xi + 1.959964 * se_xi
    lo, hi = _profile_level(x, mle, level, m, nll, se_level)
    return GevFit(centre + spread * mu, spread * math.exp(log_sigma), xi, xi_lo, xi_hi,
                  int(x.size), m, centre + spread * level, centre + spread * lo,
                  centre + spread * hi, nll + x.size * math.log(spread))


def _standard_errors(x: F64, mle: Sequence[float], m: float) -> tuple[float, float]:
    """Standard errors of the shape and the return level (inverse of the numerical
    Hessian of the likelihood; delta method for the level, used only to start its
    profile search).  An infinite shape error: the information matrix is singular."""
    p0 = np.asarray(mle, dtype=np.float64)
    h = 1e-3
    hess = np.zeros((3, 3))
    f0 = gev_nll(p0, x)
    for i in range(3):
        for j in range(i, 3):
            ei, ej = np.eye(3)[i] * h, np.eye(3)[j] * h
            if i == j:
                value = (gev_nll(p0 + ei, x) - 2 * f0 + gev_nll(p0 - ei, x)) / h ** 2
            else:
                value = (gev_nll(p0 + ei + ej, x) - gev_nll(p0 + ei - ej, x)
                         - gev_nll(p0 - ei + ej, x) + gev_nll(p0 - ei - ej, x)) / (4 * h * h)
            hess[i, j] = hess[j, i] = value
    try:
        cov = np.linalg.inv(hess)
    except np.linalg.LinAlgError:
        return math.inf, 0.5
    grad = np.zeros(3)
    for i in range(3):
        e = np.eye(3)[i] * h
        hi_p, lo_p = p0 + e, p0 - e
        grad[i] = (return_level(hi_p[0], math.exp(hi_p[1]), hi_p[2], m)
                   - return_level(lo_p[0], math.exp(lo_p[1]), lo_p[2], m)) / (2 * h)
    var_xi, var_level = float(cov[2, 2]), float(grad @ cov @ grad)
    se_xi = math.sqrt(var_xi) if var_xi > 0 and math.isfinite(var_xi) else math.inf
    se_level = math.sqrt(var_level) if var_level > 0 and math.isfinite(var_level) else 0.5
    return max(se_xi, 1e-3), min(max(se_level, 1e-3), 100.0)


def _root(f: Callable[[float], float], at: float, step: float, limit: float) -> float:
    """Where f crosses zero going from at (f(at) < 0) in the direction of step; +-inf
    when it does not within limit."""
    lo = at
    hi = at + step
    for _ in range(30):
        if abs(hi - at) > limit:
            break
        if f(hi) > 0:
            from scipy import optimize

            return float(optimize.brentq(f, lo, hi, xtol=abs(step) * 0.03))
        lo, hi = hi, hi + (hi - at) * 0.8
    return math.inf if step > 0 else -math.inf


def _profile_level(x: F64, mle: Sequence[float], level: float, m: float,
                   nll: float, se: float) -> tuple[float, float]:
    """95 % profile-likelihood interval of the m-block return level.

    The GEV is re-parametrised by (level, log sigma, xi): mu = level - (the
    return-level offset of sigma and xi); for each fixed level the other two are
    optimised."""
    start = [mle[1], mle[2]]

    def prof(z: float) -> float:
        def nll_at(p: Sequence[float]) -> float:
            mu = z - return_level(0.0, math.exp(p[0]), p[1], m)
            return gev_nll((mu, p[0], p[1]), x)
        res = _minimize(nll_at, start, 1e-4)
        return float(res.fun) - nll - CHI2_95 / 2.0

    width = 100.0 * max(abs(level), 1.0) + 100.0 * se
    return _root(prof, level, -1.5 * se, width), _root(prof, level, 3.0 * se, width)


def trend_p(maxima: Sequence[float]) -> float:
    """p-value of a monotone trend of the maxima over time (Spearman)."""
    x = np.asarray(maxima, dtype=np.float64)
    if x.size < 3 or np.all(x == x[0]):
        return 1.0
    from scipy import stats

    result = stats.spearmanr(np.arange(x.size), x)
    p = float(result.pvalue)
    return 1.0 if math.isnan(p) else p
