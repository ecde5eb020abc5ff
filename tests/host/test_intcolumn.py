"""histpairs.IntColumn: the integers not yet in a numpy chunk cost 8 bytes each, not an
int object each (the fixed part of a histogram import's memory, issue 36 item 1), and
every integer comes back in order, past 64 bits included."""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from rtbench.wire.histpairs import _CHUNK, IntColumn


def test_pending_integers_are_held_in_eight_bytes() -> None:
    """Four columns (a histogram of four CPUs) each with a chunk's worth of integers
    above 256 waiting: under 1.2 MB in all (8 bytes each: 0.5 MB); a list of int
    objects held 2.4 MB (36 bytes each), whatever the file's size."""
    tracemalloc.start()
    try:
        columns = [IntColumn() for _ in range(4)]
        for column in columns:
            for value in range(1000, 1000 + _CHUNK - 1):
                column.append(value)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert all(len(column) == _CHUNK - 1 for column in columns)
    assert held < 1_200_000, held


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=-(2**70), max_value=2**70), max_size=40),
       st.sampled_from([0, 1, _CHUNK - 1, _CHUNK, 2 * _CHUNK + 1]))
def test_every_integer_comes_back_in_order(values: list[int], repeat_at: int) -> None:
    """Any integers, with a run long enough to cross chunks, read back as appended."""
    column = IntColumn()
    expected = values[:1] * repeat_at + values
    for value in expected:
        column.append(value)
    assert len(column) == len(expected)
    assert [int(v) for v in column.array().tolist()] == expected


def test_signed_and_large_unsigned_chunks_join_exactly() -> None:
    """A chunk of 2**32 (kept as uint64) then one holding -(2**53 + 1) (int64): joined,
    they came back through float64 as -(2**53) (a hypothesis case of the test above)."""
    column = IntColumn()
    expected = [2**32] * _CHUNK + [-(2**53 + 1), 2**62]
    for value in expected:
        column.append(value)
    assert [int(v) for v in column.array().tolist()] == expected
