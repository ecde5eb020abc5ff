"""Latency statistics of docs/definitions.md from histograms (pure functions, numpy).

How each number is computed, and how wrong it can be, is in
docs/statistics.md.  In short: count, min, max, mean (from the exact sum),
overruns and exceedances are exact; percentiles come from the histogram and
are low by less than one bucket width (< 1/128 of the value); the standard
deviation comes from bucket mid-points and is given with a hard error bound.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rtbench.rtprobe.wire import loglin7 as hist

NS_PER_HOUR = 3_600_000_000_000

# (label, q) of the reported percentiles
PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p99.9", 0.999),
    ("p99.99", 0.9999), ("p99.999", 0.99999),
)


def min_samples(q: float) -> int:
    """Samples needed before the q-quantile is reported: n >= 10 / (1 - q),
    i.e. at least ten samples lie at or above it (p99.9 needs 10 000)."""
    if q >= 1.0:
        raise ValueError("q must be < 1")
    return math.ceil(10.0 / (1.0 - q) * (1.0 - 1e-9))


@dataclass
class Exceedance:
    """Samples at or above one threshold."""

    threshold_ns: int
    count: int
    rate_per_hour: float | None  # None when the measured time is unknown


@dataclass
class LatencyStats:
    """Every statistic of one latency series (or of merged series)."""

    samples: int
    min_ns: int | None
    mean_ns: float | None
    stddev_ns: float | None
    stddev_error_ns: float | None  # |stddev - true stddev| <= this
    percentiles: dict[str, int | None]  # None: not enough samples
    percentile_min_samples: dict[str, int]
    max_ns: int | None
    overruns: int
    exceedances: list[Exceedance]
    measured_ns: int | None
    worst: list[tuple[int, int]]  # (t_ns, latency_ns), largest first
    bucket_error_bound: float = hist.BUCKET_ERROR_BOUND
    series_count: int = 1
    notes: list[str] = field(default_factory=list)

    def pct(self, label: str) -> int | None:
        """The percentile called label ("p99.9"), or None."""
        return self.percentiles.get(label)


def _stddev(idx: hist.I64, cnt: hist.I64, n: int,
            min_ns: int | None, max_ns: int | None) -> tuple[float, float]:
    """Population stddev from bucket mid-points, and its error bound.

    Each sample x lies in its bucket [lo, hi]; it is replaced by the
    mid-point m (clamped into [min, max]), off by at most (hi - lo) / 2.
    The centred sample vector is a projection, so by the triangle
    inequality |sd(m) - sd(x)| <= sqrt(sum c * ((hi - lo) / 2)^2 / n).
    """
    lo = hist.lower(idx).astype(np.float64)
    hi = hist.upper(idx).astype(np.float64)
    mid = (lo + hi) / 2.0
    if min_ns is not None:
        mid = np.maximum(mid, float(min_ns))
    if max_ns is not None:
        mid = np.minimum(mid, float(max_ns))
    weights = cnt.astype(np.float64)
    mid_mean = float(np.dot(weights, mid)) / n
    var = float(np.dot(weights, (mid - mid_mean) ** 2)) / n
    half = (hi - lo) / 2.0
    err = math.sqrt(float(np.dot(weights, half * half)) / n)
    return math.sqrt(max(var, 0.0)), err


def series_stats(hist_pairs: Any, *, count: int, min_ns: int | None,
                 max_ns: int | None, sum_ns: int, overruns: int,
                 exceed: Sequence[tuple[int, int]], measured_ns: int | None,
                 worst: Sequence[tuple[int, int]] = (), beyond_hist: int = 0) -> LatencyStats:
    """Statistics of one series from its histogram and exact counters.

    hist_pairs: sparse [(index, count)] pairs or an (indices, counts) tuple
    of arrays.  exceed: (threshold_ns, count) pairs.  measured_ns: length of
    the measured (non-warm-up) part, for exceedance rates.  beyond_hist: samples the
    histogram holds only as "at or above its last bucket" (an import's overflow): a
    percentile among them and the stddev are unknown.
    """
    if isinstance(hist_pairs, tuple) and len(hist_pairs) == 2 and all(
            isinstance(a, np.ndarray) for a in hist_pairs):
        idx = np.asarray(hist_pairs[0], dtype=np.int64)
        cnt = np.asarray(hist_pairs[1], dtype=np.int64)
    else:
        idx, cnt = hist.to_arrays(hist_pairs)
    n_hist = int(cnt.sum()) if cnt.size else 0
    notes: list[str] = []
    if n_hist != count:
        notes.append(f"histogram holds {n_hist} samples, counters say "
                     f"{count}; percentiles use the histogram")
    n = n_hist
    labels = [label for label, _ in PERCENTILES]
    needed = {label: min_samples(q) for label, q in PERCENTILES}
    percentiles: dict[str, int | None] = {label: None for label in labels}
    if n:
        values = hist.quantiles(idx, cnt, [q for _, q in PERCENTILES],
                                min_ns=min_ns, max_ns=max_ns)
        for (label, _), value in zip(PERCENTILES, values, strict=True):
            if n >= needed[label]:
                percentiles[label] = value
        missing = [lb for lb in labels if percentiles[lb] is None]
        if missing:
            notes.append(f"not enough samples for {', '.join(missing)} "
                         f"({n} samples; p_q needs n >= 10/(1-q))")
        beyond = [label for label, q in PERCENTILES if beyond_hist
                  and percentiles[label] is not None and hist.rank(q, n) > n - beyond_hist]
        for label in beyond:
            percentiles[label] = None
        if beyond:
            notes.append(f"{', '.join(beyond)} unknown: they lie among the {beyond_hist} "
                         "samples beyond the histogram's last bucket (counted only as "
                         "overflow)")
    mean = sum_ns / count if count else None
    sd: float | None = None
    sd_err: float | None = None
    if n and mean is not None and not beyond_hist:
        sd, sd_err = _stddev(idx, cnt, n, min_ns, max_ns)
    elif beyond_hist:
        notes.append(f"stddev unknown: {beyond_hist} samples lie beyond the histogram")
    hours = measured_ns / NS_PER_HOUR if measured_ns else None
    exceedances = [Exceedance(int(th), int(c),
                              c / hours if hours else None)
                   for th, c in exceed]
    return LatencyStats(
        samples=count, min_ns=min_ns if count else None, mean_ns=mean,
        stddev_ns=sd, stddev_error_ns=sd_err, percentiles=percentiles,
        percentile_min_samples=needed, max_ns=max_ns if count else None,
        overruns=overruns, exceedances=exceedances, measured_ns=measured_ns,
        worst=sorted(((int(t), int(v)) for t, v in worst),
                     key=lambda p: (-p[1], p[0])),
        notes=notes)


def _series_fields(s: Any) -> dict[str, Any]:
    """Counter fields of a SeriesDetail-like object."""
    return {
        "hist": list(s.hist), "count": int(s.count), "min_ns": s.min_ns,
        "max_ns": s.max_ns, "sum_ns": int(s.sum_ns),
        "overruns": int(s.overruns), "exceed": list(s.exceed),
        "worst": list(s.worst), "beyond_hist": int(getattr(s, "beyond_hist", 0) or 0),
    }


def stats_of_series(s: Any, measured_ns: int | None) -> LatencyStats:
    """series_stats() of a store SeriesDetail (or anything shaped alike)."""
    f = _series_fields(s)
    return series_stats(f["hist"], count=f["count"], min_ns=f["min_ns"],
                        max_ns=f["max_ns"], sum_ns=f["sum_ns"],
                        overruns=f["overruns"], exceed=f["exceed"],
                        measured_ns=measured_ns, worst=f["worst"],
                        beyond_hist=f["beyond_hist"])


def merged_stats(series: Iterable[Any], measured_ns: int | None, *,
                 worst_n: int = 10) -> LatencyStats | None:
    """Statistics over several series merged (histograms added).

    The series ran side by side, so exceedance rates are per hour of the
    measured time (not per thread-hour): how often the system as a whole
    saw a crossing.  None when no series is given.
    """
    items = [_series_fields(s) for s in series]
    if not items:
        return None
    idx, cnt = hist.merge(*(hist.to_arrays(f["hist"]) for f in items))
    mins = [f["min_ns"] for f in items if f["min_ns"] is not None]
    maxs = [f["max_ns"] for f in items if f["max_ns"] is not None]
    exceed: dict[int, int] = {}
    for f in items:
        for th, c in f["exceed"]:
            exceed[int(th)] = exceed.get(int(th), 0) + int(c)
    worst = sorted((tuple(w) for f in items for w in f["worst"]),
                   key=lambda p: (-p[1], p[0]))[:worst_n]
    result = series_stats(
        (idx, cnt), count=sum(f["count"] for f in items),
        min_ns=min(mins) if mins else None,
        max_ns=max(maxs) if maxs else None,
        sum_ns=sum(f["sum_ns"] for f in items),
        overruns=sum(f["overruns"] for f in items),
        exceed=sorted(exceed.items()), measured_ns=measured_ns,
        worst=[(int(w[0]), int(w[1])) for w in worst],
        beyond_hist=sum(f["beyond_hist"] for f in items))
    result.series_count = len(items)
    return result
