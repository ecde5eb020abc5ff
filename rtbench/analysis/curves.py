"""The numbers behind the figures: tail curves (CCDF) of histograms and per-window
series of a measurement (pure; report/figures.py and report/plot.py draw them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rtbench.rtprobe.wire import loglin7 as hist
from rtbench.rtprobe.wire.records import WindowRecord

F64 = npt.NDArray[np.float64]


def ccdf_us(idx: hist.I64, cnt: hist.I64, max_ns: float | None = None) -> tuple[F64, F64]:
    """(x in us, P(latency > x)) of a loglin7 histogram at each bucket's upper bound,
    starting at (first bound, 1); points where nothing is left above are dropped, and the
    last step (the highest bucket's share, count / n) is drawn out to the exact max (else
    to that bucket's upper bound), so the worst samples are on the figure."""
    order = np.argsort(idx)
    idx, counts = idx[order], cnt[order].astype(np.float64)
    n = counts.sum()
    tail = 1.0 - np.cumsum(counts) / n
    x = (hist.upper(idx).astype(np.float64) + 1.0) / 1000.0
    keep = tail > 0
    end = (max_ns if max_ns is not None else float(hist.upper(idx[-1:])[0]) + 1.0) / 1000.0
    return (np.concatenate([[x[0]], x[keep], [max(end, x[0])]]),
            np.concatenate([[1.0], tail[keep], [counts[-1] / n]]))


def fixed_width_ccdf_us(hist_ns: Sequence[tuple[float, int]],
                        width_ns: float) -> tuple[F64, F64]:
    """(x in us, P(latency > x)) of a published histogram of equal-width bins, given as
    (lower bound ns, count) pairs, at each bin's upper bound."""
    lows = np.array([int(lo) for lo, _ in hist_ns], dtype=np.int64)
    counts = np.array([c for _, c in hist_ns], dtype=np.float64)
    cum = np.cumsum(counts) / counts.sum()
    x = (lows + width_ns) / 1000.0
    keep = cum < 1
    return np.concatenate([[x[0]], x[keep]]), np.concatenate([[1.0], 1 - cum[keep]])


@dataclass(frozen=True)
class WindowRow:
    """One window of a measurement, all its series together (measured windows only)."""

    mid_s: float  # the window's middle, seconds since the measurement's clock origin
    min_ns: int
    max_ns: int
    mean_ns: float
    overruns: int


def merged_windows(windows: Sequence[WindowRecord]) -> list[WindowRow]:
    """Per window index, in order: the series merged (min of mins, max of maxes, mean of
    all samples, overruns summed); warm-up and empty windows left out."""
    acc: dict[int, list[float]] = {}
    for w in windows:
        if w.warmup or not w.count or w.min_ns is None or w.max_ns is None:
            continue
        row = acc.setdefault(w.index, [(w.start_ns + w.end_ns) / 2e9, float(w.min_ns),
                                       float(w.max_ns), 0.0, 0.0, 0.0])
        row[1] = min(row[1], w.min_ns)
        row[2] = max(row[2], w.max_ns)
        row[3] += w.sum_ns
        row[4] += w.count
        row[5] += w.overruns
    return [WindowRow(r[0], int(r[1]), int(r[2]), r[3] / r[4], int(r[5]))
            for _, r in sorted(acc.items())]


def window_means_ns(windows: Sequence[WindowRecord]) -> list[float]:
    """The mean latency of each window with samples (sum / count), in the given order."""
    return [w.sum_ns / w.count for w in windows if w.count]
