"""The numbers behind the figures (analysis/curves.py): tail curves and window series."""

from __future__ import annotations

import numpy as np
import pytest

from rtbench.analysis.curves import (
    ccdf_us,
    fixed_width_ccdf_us,
    merged_windows,
    window_means_ns,
)
from rtbench.rtprobe.wire import loglin7
from rtbench.rtprobe.wire.records import WindowRecord


def window(series: int, index: int, count: int, sum_ns: int, min_ns: int, max_ns: int,
           overruns: int = 0, warmup: bool = False) -> WindowRecord:
    """A one-second window record."""
    return WindowRecord(series=series, index=index, warmup=warmup,
                        start_ns=index * 10**9, end_ns=(index + 1) * 10**9, count=count,
                        min_ns=min_ns if count else None, max_ns=max_ns if count else None,
                        sum_ns=sum_ns, overruns=overruns, exceed=[], hist_json="[]")


def test_ccdf_of_exact_buckets() -> None:
    # values below 128 ns have buckets of their own: 50 x 10 ns, 30 x 20 ns, 20 x 30 ns
    idx = loglin7.index([10, 20, 30])
    x, p = ccdf_us(idx, np.array([50, 30, 20], dtype=np.int64))
    # the last step (20 % in the 30 ns bucket) drawn out to that bucket's end (issue 24)
    assert list(x) == pytest.approx([0.011, 0.011, 0.021, 0.031])
    assert list(p) == pytest.approx([1.0, 0.5, 0.2, 0.2])


def test_ccdf_of_published_bins() -> None:
    x, p = fixed_width_ccdf_us([(0.0, 1), (1000.0, 3)], 1000.0)
    assert list(x) == [1.0, 1.0] and list(p) == [1.0, 0.75]


def test_windows_merged_across_series_without_warmup_or_empty_ones() -> None:
    rows = merged_windows([window(0, 0, 10, 10_000, 500, 2000, warmup=True),
                           window(0, 1, 10, 10_000, 600, 3000, overruns=1),
                           window(1, 1, 30, 90_000, 400, 9000),
                           window(0, 2, 0, 0, 0, 0)])
    assert len(rows) == 1
    (row,) = rows
    assert (row.mid_s, row.min_ns, row.max_ns, row.mean_ns, row.overruns) == \
        (1.5, 400, 9000, 2500.0, 1)


def test_window_means_skip_windows_without_samples() -> None:
    assert window_means_ns([window(0, 0, 4, 4000, 1, 2), window(0, 1, 0, 0, 0, 0)]) == [1000.0]
