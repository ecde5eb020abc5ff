"""Bootstrap intervals for percentiles from per-window histograms (pure numpy).

The unit of resampling is one measured window index (one second of every thread
of a measurement together), so correlation between threads and within a second
is kept.  Each replicate draws as many windows as were measured, with
replacement, adds their histograms and takes the percentile by the same rule
as every report (lower bound of the bucket holding rank ceil(q n)).  The 95 %
interval is the 2.5th..97.5th percentile of the replicates (percentile
bootstrap).  docs/statistics.md states the method and its limits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rtbench.analysis.stats import min_samples
from rtbench.rtprobe.wire import loglin7 as hist

F64 = npt.NDArray[np.float64]
REPLICATES = 1000
MIN_WINDOWS = 10  # fewer windows than this: no interval
LEVEL = 0.95


@dataclass
class WindowMatrix:
    """Measured windows of one cell as a dense (windows x buckets) count matrix."""

    buckets: hist.I64  # bucket indices of the columns, increasing
    counts: F64  # counts[w, k]: samples of window w in bucket buckets[k]
    min_ns: int | None = None
    max_ns: int | None = None

    @property
    def windows(self) -> int:
        """Number of windows (rows)."""
        return int(self.counts.shape[0])

    @property
    def samples(self) -> int:
        """All samples of all windows."""
        return int(self.counts.sum())


def window_matrix(windows: Iterable[tuple[int, hist.I64, hist.I64]], *,
                  min_ns: int | None = None, max_ns: int | None = None) -> WindowMatrix:
    """Build the matrix from (window index, bucket indices, counts); the windows
    of several threads with the same index are added into one row."""
    rows: dict[int, list[tuple[hist.I64, hist.I64]]] = {}
    for index, idx, cnt in windows:
        rows.setdefault(int(index), []).append((idx, cnt))
    parts = [(r, idx, cnt) for r, key in enumerate(sorted(rows)) for idx, cnt in rows[key]]
    if not parts:
        return WindowMatrix(np.zeros(0, np.int64), np.zeros((len(rows), 0), np.float64),
                            min_ns, max_ns)
    # every window's pairs laid end to end: one unique (its inverse is each pair's
    # column) and one bincount add them all (exact: integers in float64)
    all_idx = np.concatenate([idx for _, idx, _ in parts])
    row_of = np.repeat(np.arange(len(parts), dtype=np.int64),
                       [idx.size for _, idx, _ in parts])
    row_of = np.asarray([r for r, _, _ in parts], dtype=np.int64)[row_of]
    buckets, column = np.unique(all_idx, return_inverse=True)
    weights = np.concatenate([np.asarray(cnt, dtype=np.float64) for _, _, cnt in parts])
    counts: F64 = np.asarray(np.bincount(
        row_of * buckets.size + column.reshape(-1), weights=weights,
        minlength=len(rows) * buckets.size), dtype=np.float64).reshape(len(rows), buckets.size)
    return WindowMatrix(buckets.astype(np.int64), counts, min_ns, max_ns)


def _clamp(values: F64, m: WindowMatrix) -> F64:
    """Clamp percentile values into the cell's exact [min, max]."""
    if m.min_ns is not None:
        values = np.maximum(values, float(m.min_ns))
    if m.max_ns is not None:
        values = np.minimum(values, float(m.max_ns))
    return values


def quantiles_of_counts(m: WindowMatrix, totals: F64, qs: Sequence[float]) -> F64:
    """The q-quantiles of each row of totals (replicates x buckets) -> (rows x len(qs)).

    Rows are cumulated once; each row's rank is found by one searchsorted over all rows
    laid end to end (row r's cumulative counts plus r * (largest total + 1), exact
    integers in float64)."""
    cum = np.cumsum(totals, axis=1)
    n = cum[:, -1:]
    stride = float(n.max()) + 1.0 if n.size else 1.0
    rows = np.arange(cum.shape[0], dtype=np.float64)[:, None]
    flat = (cum + rows * stride).ravel()
    k = m.buckets.size
    out = np.empty((cum.shape[0], len(qs)), dtype=np.float64)
    for j, q in enumerate(qs):
        ranks = np.clip(np.ceil(q * n - 1e-9 * n), 1, None)
        pos = np.searchsorted(flat, (ranks + rows * stride).ravel(), side="left") \
            - np.arange(cum.shape[0]) * k
        pos = np.clip(pos, 0, k - 1)
        out[:, j] = _clamp(hist.lower(m.buckets[pos]).astype(np.float64), m)
    return out


def quantile_of_counts(m: WindowMatrix, totals: F64, q: float) -> F64:
    """The q-quantile of each row of totals (replicates x buckets)."""
    return quantiles_of_counts(m, totals, [q])[:, 0]


def point_quantile(m: WindowMatrix, q: float) -> float | None:
    """The q-quantile of all windows together (None without enough samples)."""
    if m.samples == 0 or m.samples < min_samples(q):
        return None
    return float(quantile_of_counts(m, m.counts.sum(axis=0)[None, :], q)[0])


def replicates(m: WindowMatrix, qs: Sequence[float], reps: int = REPLICATES,
               seed: int = 0) -> F64:
    """Bootstrap replicates (reps x len(qs)) of the q-quantiles."""
    rng = np.random.default_rng(seed)
    w = m.windows
    draws = rng.multinomial(w, np.full(w, 1.0 / w), size=reps).astype(np.float64)
    return quantiles_of_counts(m, draws @ m.counts, qs)


@dataclass
class Interval:
    """A point estimate with its 95 % interval (lo/hi None: no interval)."""

    point: float | None
    lo: float | None
    hi: float | None
    note: str = ""


def quantile_interval(m: WindowMatrix, q: float, reps: int = REPLICATES,
                      seed: int = 0) -> Interval:
    """The q-quantile of a cell with its bootstrap 95 % interval."""
    point = point_quantile(m, q)
    if point is None:
        return Interval(None, None, None, "not enough samples")
    if m.windows < MIN_WINDOWS:
        return Interval(point, None, None, f"{m.windows} windows; an interval needs "
                                           f"{MIN_WINDOWS}")
    rep = replicates(m, [q], reps, seed)[:, 0]
    tail = (1.0 - LEVEL) / 2.0
    return Interval(point, float(np.quantile(rep, tail)), float(np.quantile(rep, 1 - tail)))


def difference_interval(a: WindowMatrix, b: WindowMatrix, q: float,
                        reps: int = REPLICATES, seed: int = 0) -> Interval:
    """b's q-quantile minus a's, with a 95 % interval from independent bootstraps."""
    pa, pb = point_quantile(a, q), point_quantile(b, q)
    if pa is None or pb is None:
        return Interval(None, None, None, "not enough samples")
    if min(a.windows, b.windows) < MIN_WINDOWS:
        return Interval(pb - pa, None, None,
                        f"{min(a.windows, b.windows)} windows; an interval needs {MIN_WINDOWS}")
    return difference_of_replicates(pa, pb, replicates(a, [q], reps, seed)[:, 0],
                                    replicates(b, [q], reps, seed + 1)[:, 0])


def difference_of_replicates(pa: float, pb: float, ra: F64, rb: F64) -> Interval:
    """b - a with the interval of the replicate differences (independent bootstraps)."""
    diff = rb - ra
    tail = (1.0 - LEVEL) / 2.0
    return Interval(pb - pa, float(np.quantile(diff, tail)), float(np.quantile(diff, 1 - tail)))


def verdict(interval: Interval) -> str:
    """'better' / 'worse' when the interval of (b - a) excludes zero, else no verdict."""
    if interval.lo is None or interval.hi is None:
        return "no interval"
    if interval.hi < 0:
        return "better"
    if interval.lo > 0:
        return "worse"
    return "no detectable difference"
