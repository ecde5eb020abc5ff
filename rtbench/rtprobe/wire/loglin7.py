"""The "loglin7" histogram layout of probe/src/lib/hist.h, in numpy.

Values are unsigned 64-bit nanoseconds.  Below 128 a bucket holds exactly one
value; from 128 on, every power of two [2^k, 2^(k+1)) is cut into 128 equal
buckets of width 2^(k-7), so a bucket's width is at most 1/128 of its values.
Index, lower and upper bounds, merging and quantiles match the C code bit for
bit (tests/host/test_hist.py checks the shared vectors).

It is part of the wire format (window and result records carry loglin7 bucket
indices), so it sits with records.py at the bottom of the host's layers: store,
analysis and report import it from here.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "BUCKET_ERROR_BOUND",
    "BUCKETS",
    "I64",
    "LAYOUT",
    "SUB",
    "SUB_BITS",
    "U64",
    "SparsePairs",
    "from_values",
    "index",
    "index_one",
    "lower",
    "merge",
    "merge_pairs",
    "quantile",
    "quantiles",
    "rank",
    "to_arrays",
    "upper",
]

SUB_BITS = 7
SUB = 1 << SUB_BITS  # 128
BUCKETS = SUB + (64 - SUB_BITS) * SUB  # 7424
LAYOUT = "loglin7"
BUCKET_ERROR_BOUND = 1.0 / SUB  # relative width of any bucket

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
SparsePairs = Iterable[tuple[int, int]] | Iterable[list[int]]

_DBL_EPSILON = sys.float_info.epsilon


def _floor_log2(values: U64) -> U64:
    """floor(log2(v)) for v >= 1, exactly.

    frexp on the float conversion gives it at once, except that rounding
    to 53 bits can carry v just below 2^(k+1) up to 2^(k+1); such values
    are detected by v >> k == 0 and corrected.
    """
    _, exp = np.frexp(values.astype(np.float64))
    k = (exp - 1).astype(np.uint64)
    over = (values >> k) == 0
    return np.where(over, k - np.uint64(1), k)


def _as_u64(values: Any) -> U64:
    """Non-negative integers (any array-like) as a uint64 array."""
    if isinstance(values, np.ndarray):
        v = values
    else:
        try:
            v = np.asarray(values, dtype=np.int64)
        except OverflowError:  # values past 2^63: go through Python ints
            v = np.asarray(values, dtype=object)
    if v.dtype.kind == "u":
        return np.atleast_1d(v.astype(np.uint64, copy=False))
    if v.dtype.kind == "i":
        if v.size and int(v.min()) < 0:
            raise ValueError("histogram values must be >= 0")
        return np.atleast_1d(v.astype(np.uint64))
    if v.dtype.kind == "O":
        flat = [int(x) for x in np.ravel(v)]
        if any(x < 0 or x >= 1 << 64 for x in flat):
            raise ValueError("histogram values must be in 0..2^64-1")
        return np.array(flat, dtype=np.uint64).reshape(np.shape(v) or (1,))
    raise TypeError(f"histogram values must be integers, got {v.dtype}")


def index(values: Any) -> I64:
    """Bucket index of each value (array-like of ints in 0..2^64-1)."""
    v = _as_u64(values)
    k = _floor_log2(np.maximum(v, np.uint64(1)))
    shift = np.where(k >= SUB_BITS, k - np.uint64(SUB_BITS), np.uint64(0))
    sub = (v >> shift) & np.uint64(SUB - 1)
    big = np.uint64(SUB) + shift * np.uint64(SUB) + sub
    out = np.where(v < np.uint64(SUB), v, big)
    return out.astype(np.int64)


def index_one(value: int) -> int:
    """Bucket index of one value (pure Python, any size up to 2^64-1)."""
    if value < 0 or value >= 1 << 64:
        raise ValueError(f"histogram value {value} is out of 0..2^64-1")
    if value < SUB:
        return value
    k = value.bit_length() - 1
    return SUB + (k - SUB_BITS) * SUB + ((value >> (k - SUB_BITS)) & (SUB - 1))


def lower(indices: Any) -> U64:
    """Smallest value of each bucket index."""
    i = np.atleast_1d(np.asarray(indices, dtype=np.int64))
    if np.any((i < 0) | (i >= BUCKETS)):
        raise ValueError(f"bucket index out of 0..{BUCKETS - 1}")
    shift = np.where(i >= SUB, (i - SUB) // SUB, 0).astype(np.uint64)
    sub = np.where(i >= SUB, (i - SUB) % SUB, 0).astype(np.uint64)
    big = (np.uint64(SUB) + sub) << shift
    return np.where(i < SUB, i.astype(np.uint64), big)


def upper(indices: Any) -> U64:
    """Largest value of each bucket index."""
    i = np.atleast_1d(np.asarray(indices, dtype=np.int64))
    shift = np.where(i >= SUB, (i - SUB) // SUB, 0).astype(np.uint64)
    width_minus_one = (np.uint64(1) << shift) - np.uint64(1)
    out: U64 = lower(i) + width_minus_one
    return out


def to_arrays(pairs: SparsePairs) -> tuple[I64, I64]:
    """Sparse [(index, count)] pairs as (indices, counts) arrays."""
    arr = np.asarray(list(pairs), dtype=np.int64)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError("a sparse histogram is a list of [index, count]")
    return arr[:, 0].copy(), arr[:, 1].copy()


def from_values(values: Any) -> tuple[I64, I64]:
    """Histogram of raw values as sparse (indices, counts) arrays."""
    counts = np.bincount(index(values), minlength=0)
    nz = np.flatnonzero(counts)
    return nz.astype(np.int64), counts[nz].astype(np.int64)


def merge(*hists: tuple[I64, I64]) -> tuple[I64, I64]:
    """Add sparse histograms bucket by bucket (exact, order-independent)."""
    dense = np.zeros(BUCKETS, dtype=np.int64)
    for idx, cnt in hists:
        np.add.at(dense, np.asarray(idx, dtype=np.int64),
                  np.asarray(cnt, dtype=np.int64))
    nz = np.flatnonzero(dense)
    return nz.astype(np.int64), dense[nz]


def merge_pairs(hists: Iterable[SparsePairs]) -> list[tuple[int, int]]:
    """merge() for lists of pairs; returns pairs."""
    idx, cnt = merge(*(to_arrays(h) for h in hists))
    return [(int(i), int(c)) for i, c in zip(idx, cnt, strict=True)]


def rank(q: float, n: int) -> int:
    """ceil(q * n) clamped to 1..n, with the C code's ulp correction."""
    x = q * float(n)
    r = math.ceil(x)
    if r >= 2 and r - 1.0 >= x * (1.0 - 8.0 * _DBL_EPSILON):
        r -= 1
    return max(1, min(int(r), n))


def quantiles(idx: I64, cnt: I64, qs: Iterable[float], *,
              min_ns: int | None = None,
              max_ns: int | None = None) -> list[int | None]:
    """Each q-quantile: lower bound of the first bucket whose cumulative
    count reaches rank(q, n), clamped to [min_ns, max_ns]; None if empty."""
    qs = list(qs)
    order = np.argsort(idx, kind="stable")
    idx = np.asarray(idx, dtype=np.int64)[order]
    cum = np.cumsum(np.asarray(cnt, dtype=np.int64)[order])
    n = int(cum[-1]) if cum.size else 0
    if n == 0:
        return [None for _ in qs]
    ranks = np.array([rank(min(max(q, 0.0), 1.0), n) for q in qs],
                     dtype=np.int64)
    pos = np.searchsorted(cum, ranks, side="left")
    values = lower(idx[pos])
    out: list[int | None] = []
    for v in values:
        value = int(v)
        if min_ns is not None:
            value = max(value, min_ns)
        if max_ns is not None:
            value = min(value, max_ns)
        out.append(value)
    return out


def quantile(idx: I64, cnt: I64, q: float, *, min_ns: int | None = None,
             max_ns: int | None = None) -> int | None:
    """One q-quantile (see quantiles())."""
    return quantiles(idx, cnt, [q], min_ns=min_ns, max_ns=max_ns)[0]
