"""Statistics from histograms against exact numpy results."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rtbench.analysis.stats import PERCENTILES, merged_stats, min_samples, series_stats
from rtbench.bundle import SeriesDetail
from rtbench.rtprobe.wire import loglin7 as hist


def stats_of(values: np.ndarray, thresholds: tuple[int, ...] = (),
             measured_ns: int | None = 10**9):
    """series_stats() of raw values."""
    idx, cnt = hist.from_values(values)
    return series_stats(
        (idx, cnt), count=int(values.size), min_ns=int(values.min()),
        max_ns=int(values.max()), sum_ns=int(values.sum()), overruns=3,
        exceed=[(t, int((values >= t).sum())) for t in thresholds],
        measured_ns=measured_ns, worst=[(5, int(values.max()))])


def test_min_samples_rule() -> None:
    assert [min_samples(q) for _, q in PERCENTILES] == [
        20, 100, 1000, 10_000, 100_000, 1_000_000]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1000, 200_000))
@example(0, 1000)  # p99.9 where numpy's percentile is one rank off (q * 100 rounded)
@example(1, 8000)
def test_percentiles_within_bucket_bound(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    values = (rng.lognormal(9.0, 1.0, n) + rng.integers(0, 200, n)).astype(
        np.int64)
    s = stats_of(values)
    ordered = np.sort(values)
    for label, q in PERCENTILES:
        got = s.percentiles[label]
        if n < min_samples(q):
            assert got is None
            continue
        exact = int(ordered[hist.rank(q, n) - 1])
        assert got is not None
        assert exact * (1 - s.bucket_error_bound) <= got <= exact
        # the rank computed exactly (numpy's inverted-cdf percentile takes q * 100 in
        # floating point and is one rank too high for p99.9 at n = 1000, 8000, ...), and
        # the value at that rank within a bucket's width
        exact_rank = math.ceil(Fraction(label[1:]) / 100 * n)
        assert hist.rank(q, n) == exact_rank, (label, n)
        ref = float(ordered[exact_rank - 1])
        assert abs(got - ref) <= ref / 128 + 1
    assert s.mean_ns == pytest.approx(values.mean(), rel=1e-12)
    assert s.stddev_ns is not None and s.stddev_error_ns is not None
    assert abs(s.stddev_ns - values.std()) <= s.stddev_error_ns + 1e-6


def test_counts_and_exceedances_exact() -> None:
    values = np.array([100, 200, 300, 40_000, 150_000] * 10, dtype=np.int64)
    s = stats_of(values, thresholds=(100_000, 30_000), measured_ns=1800 * 10**9)
    assert (s.samples, s.min_ns, s.max_ns, s.overruns) == (50, 100, 150_000, 3)
    assert [(e.threshold_ns, e.count) for e in s.exceedances] == [
        (100_000, 10), (30_000, 20)]
    assert s.exceedances[0].rate_per_hour == pytest.approx(20.0)
    assert s.stddev_error_ns is not None and s.stddev_error_ns > 0


def test_not_enough_samples() -> None:
    s = stats_of(np.arange(1000, 1050, dtype=np.int64))
    assert s.percentiles["p50"] is not None
    for label in ("p90", "p99", "p99.9", "p99.99", "p99.999"):
        assert s.percentiles[label] is None
    assert any("not enough samples" in n for n in s.notes)
    assert s.percentile_min_samples["p99.999"] == 1_000_000


def test_empty_series() -> None:
    empty = np.zeros(0, dtype=np.int64)
    s = series_stats((empty, empty.copy()), count=0, min_ns=None, max_ns=None,
                     sum_ns=0, overruns=0, exceed=[(1000, 0)], measured_ns=None)
    assert s.samples == 0 and s.mean_ns is None and s.stddev_ns is None
    assert all(v is None for v in s.percentiles.values())
    assert s.exceedances[0].rate_per_hour is None


def test_exact_small_values_have_zero_stddev_error() -> None:
    values = np.array([1, 2, 3, 4, 5, 100, 127] * 5, dtype=np.int64)
    s = stats_of(values)
    assert s.stddev_error_ns == 0
    assert s.stddev_ns == pytest.approx(values.std())
    assert s.percentiles["p50"] == int(np.sort(values)[hist.rank(0.5, 35) - 1])


def _series(label: str, values: np.ndarray) -> SeriesDetail:
    """A SeriesDetail holding values."""
    idx, cnt = hist.from_values(values)
    return SeriesDetail(
        index=0, label=label, cpu=None, count=int(values.size),
        min_ns=int(values.min()), max_ns=int(values.max()),
        sum_ns=int(values.sum()), overruns=1, early=0,
        exceed=[(5000, int((values >= 5000).sum()))],
        worst=[(i, int(v)) for i, v in enumerate(np.sort(values)[::-1][:3])],
        warmup={}, hist=[(int(i), int(c)) for i, c in zip(idx, cnt, strict=True)])


def test_merged_equals_stats_of_union() -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(1000, 9000, 3000)
    b = rng.integers(2000, 20000, 5000)
    merged = merged_stats([_series("a", a), _series("b", b)], 10**9)
    whole = stats_of(np.concatenate([a, b]), thresholds=(5000,))
    assert merged is not None
    assert merged.percentiles == whole.percentiles
    assert (merged.samples, merged.min_ns, merged.max_ns) == (
        whole.samples, whole.min_ns, whole.max_ns)
    assert merged.overruns == 2 and merged.series_count == 2
    assert merged.exceedances[0].count == whole.exceedances[0].count
    assert merged.worst[0][1] == int(max(a.max(), b.max()))
    assert merged_stats([], None) is None


def test_ten_million_samples_fast() -> None:
    rng = np.random.default_rng(3)
    values = rng.lognormal(9.0, 0.8, 10**7).astype(np.int64)
    idx, cnt = hist.from_values(values)
    pairs = [(int(i), int(c)) for i, c in zip(idx, cnt, strict=True)]
    t0 = time.perf_counter()
    s = series_stats(pairs, count=10**7, min_ns=int(values.min()),
                     max_ns=int(values.max()), sum_ns=int(values.sum()),
                     overruns=0, exceed=[(100_000, 1)], measured_ns=10**10)
    elapsed = time.perf_counter() - t0
    assert s.percentiles["p99.999"] is not None
    assert elapsed < 2.0, f"stats of 1e7 samples took {elapsed:.2f}s"
