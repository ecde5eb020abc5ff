"""The loglin7 layout: identical to probe/src/lib/hist.h, merge and quantiles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rtbench.rtprobe.wire import loglin7 as hist

U64_MAX = 2**64 - 1

# (value, index) vectors shared with the C tests (hist.h comment)
VECTORS = [(0, 0), (1, 1), (127, 127), (128, 128), (129, 129), (255, 255),
           (256, 256), (257, 256), (1000, 506), (1003, 506), (1004, 507),
           (2**63, 7296), (U64_MAX, 7423)]


@pytest.mark.parametrize("value, expected", VECTORS)
def test_vectors(value: int, expected: int) -> None:
    assert hist.index_one(value) == expected
    assert int(hist.index([value])[0]) == expected
    assert int(hist.index(np.array([value], dtype=np.uint64))[0]) == expected


def test_layout_constants() -> None:
    assert hist.BUCKETS == 7424
    assert int(hist.lower(506)[0]) == 1000 and int(hist.upper(506)[0]) == 1003
    assert int(hist.upper(7423)[0]) == U64_MAX
    assert int(hist.lower(7423)[0]) == 255 << 56


def test_bounds_tile_the_whole_range() -> None:
    i = np.arange(hist.BUCKETS)
    lo, hi = hist.lower(i), hist.upper(i)
    assert int(lo[0]) == 0 and int(hi[-1]) == U64_MAX
    assert np.all(lo[1:] == hi[:-1] + np.uint64(1))
    assert np.all(hist.index(lo) == i) and np.all(hist.index(hi) == i)


def test_numpy_matches_python_near_powers_of_two() -> None:
    values = sorted({max(0, min(U64_MAX, (1 << k) + d))
                     for k in range(65) for d in (-2, -1, 0, 1)})
    arr = np.array(values, dtype=np.uint64)
    assert list(hist.index(arr)) == [hist.index_one(v) for v in values]


def test_negative_values_rejected() -> None:
    with pytest.raises(ValueError):
        hist.index([-1])
    with pytest.raises(ValueError):
        hist.index_one(2**64)


@given(st.integers(0, U64_MAX))
def test_value_within_its_bucket(value: int) -> None:
    i = hist.index_one(value)
    lo, hi = int(hist.lower(i)[0]), int(hist.upper(i)[0])
    assert lo <= value <= hi
    assert (hi - lo + 1) <= max(1, lo / 128)


@given(st.integers(0, U64_MAX - 1), st.integers(0, U64_MAX))
def test_index_monotonic(a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    assert hist.index_one(lo) <= hist.index_one(hi)


@given(st.lists(st.integers(0, 2**40), min_size=1, max_size=200),
       st.lists(st.integers(0, 2**40), max_size=200))
def test_merge_equals_histogram_of_union(a: list[int], b: list[int]) -> None:
    merged = hist.merge(hist.from_values(a), hist.from_values(b))
    whole = hist.from_values(a + b)
    assert np.array_equal(merged[0], whole[0])
    assert np.array_equal(merged[1], whole[1])
    assert hist.merge_pairs([[], list(zip(*map(list, whole), strict=True))]) == [
        (int(i), int(c)) for i, c in zip(*whole, strict=True)]


def test_rank_matches_c_rule() -> None:
    assert hist.rank(0.07, 100) == 7   # 0.07 * 100 = 7.000000000000001
    assert hist.rank(0.5, 3) == 2
    assert hist.rank(0.0, 10) == 1
    assert hist.rank(1.0, 10) == 10
    assert hist.rank(0.999, 1000) == 999


@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=500),
       st.sampled_from([0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0]))
def test_quantile_within_one_bucket_of_order_statistic(
        values: list[int], q: float) -> None:
    idx, cnt = hist.from_values(values)
    got = hist.quantile(idx, cnt, q, min_ns=min(values), max_ns=max(values))
    exact = sorted(values)[hist.rank(q, len(values)) - 1]
    assert got is not None
    assert exact - exact / 128 <= got <= exact


def test_empty_quantile_is_none() -> None:
    empty = np.zeros(0, dtype=np.int64)
    assert hist.quantile(empty, empty, 0.5) is None
