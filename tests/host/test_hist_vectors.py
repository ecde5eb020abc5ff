"""The loglin7 layout in Python against the vectors the C unit tests read too.

probe/tests/hist_vectors.txt holds value -> bucket index -> bucket bounds; test_hist.c
checks probe/src/lib/hist.h against the same file, so the two implementations cannot drift.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

VECTORS = Path(__file__).resolve().parents[2] / "probe" / "tests" / "hist_vectors.txt"


def loglin7() -> Any:
    """The host's loglin7 module (rtbench.rtprobe.wire.loglin7, formerly rtbench.loglin7)."""
    name = "rtbench.rtprobe.wire.loglin7" if importlib.util.find_spec("rtbench.rtprobe") else \
        "rtbench.loglin7"
    return importlib.import_module(name)


def read_vectors() -> list[tuple[int, int, int, int]]:
    """(value, index, lower, upper) per vector line of the shared file."""
    rows = []
    for line in VECTORS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            value, index, lower, upper = (int(w) for w in line.split())
            rows.append((value, index, lower, upper))
    return rows


def test_the_file_covers_the_range() -> None:
    rows = read_vectors()
    assert len(rows) >= 100
    assert rows[0][0] == 0 and rows[-1][0] == 2**64 - 1
    assert len({r[1] for r in rows}) >= 100  # many distinct buckets, not one repeated


@pytest.mark.parametrize("row", read_vectors(), ids=lambda r: str(r[0]))
def test_vector(row: tuple[int, int, int, int]) -> None:
    h = loglin7()
    value, index, lower, upper = row
    assert h.index_one(value) == index
    assert int(h.index(np.array([value], dtype=np.uint64))[0]) == index
    assert (int(h.lower(index)[0]), int(h.upper(index)[0])) == (lower, upper)
