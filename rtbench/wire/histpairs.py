"""Compact columns of integers for imported files of any size.

An import of a 64 MiB file must hold memory in proportion to the file (issue 36): a
Python int or list per histogram row or sample is 40-100 bytes, ten times the row's
text.  IntColumn collects integers as they are parsed into numpy chunks of the
smallest dtype; Pairs is a histogram's [value, count] rows as two arrays that reads,
compares and serialises exactly as the list of [value, count] lists it stands for.
"""

from __future__ import annotations

import json
import re
import secrets
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, overload

import numpy as np

# integers gathered in a Python list before they become a numpy chunk
_CHUNK = 1 << 14
_T = TypeVar("_T", int, float)


def _narrow(values: Sequence[int]) -> np.ndarray:
    """values as an array of the smallest integer dtype (object for > 64 bits)."""
    try:
        arr = np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array(list(values), dtype=object)
    if arr.size and int(arr.min()) >= 0:
        return arr.astype(np.min_scalar_type(int(arr.max())))
    return arr


class IntColumn:
    """Integers appended one by one, kept as compact numpy chunks.  The integers not yet
    in a chunk wait in an array of 8-byte integers (a list, holding an int object each,
    only once one does not fit 64 bits): a list of _CHUNK ints above 256 was 0.6 MB a
    column, which a histogram of many columns held whatever the file's size."""

    def __init__(self) -> None:
        self._chunks: list[np.ndarray] = []
        self._pending: array[int] | list[int] = array("q")
        self._length = 0

    def append(self, value: int) -> None:
        """Add one integer."""
        try:
            self._pending.append(value)
        except OverflowError:  # past 64 bits: this chunk waits as a list of ints
            self._pending = list(self._pending)
            self._pending.append(value)
        self._length += 1
        if len(self._pending) >= _CHUNK:
            self._chunks.append(_narrow(self._pending))
            self._pending = array("q")

    def __len__(self) -> int:
        """How many integers were appended."""
        return self._length

    def array(self) -> np.ndarray:
        """Every integer, in order, as one array (int64 or wider kinds, never float)."""
        if self._pending:
            self._chunks.append(_narrow(self._pending))
            self._pending = array("q")
        if not self._chunks:
            return np.zeros(0, dtype=np.int64)
        if len(self._chunks) > 1:
            kinds = {c.dtype.kind for c in self._chunks}
            if "O" in kinds:
                merged = np.concatenate([c.astype(object) for c in self._chunks])
            elif kinds == {"u"} and max(c.dtype.itemsize for c in self._chunks) == 8:
                merged = np.concatenate(self._chunks).astype(np.uint64)
            elif "i" in kinds:
                # signed beside unsigned chunks: numpy would join int64 and uint64 as
                # float64 (2**53 + 1 came back as 2**53); _narrow's unsigned chunks
                # hold at most 2**63 - 1, so int64 holds them all exactly
                merged = np.concatenate([c.astype(np.int64) for c in self._chunks])
            else:
                merged = np.concatenate(self._chunks)
            self._chunks = [merged]
        return self._chunks[0]


class Pairs(Sequence[list[int]]):
    """A histogram's rows: values[i] with counts[i], read as [value, count] lists."""

    def __init__(self, values: np.ndarray, counts: np.ndarray) -> None:
        if len(values) != len(counts):
            raise ValueError("a histogram needs as many counts as values")
        self.values = values
        self.counts = counts

    def __len__(self) -> int:
        """How many rows."""
        return len(self.values)

    @overload
    def __getitem__(self, index: int) -> list[int]: ...

    @overload
    def __getitem__(self, index: slice) -> list[list[int]]: ...

    def __getitem__(self, index: int | slice) -> list[int] | list[list[int]]:
        """One row as [value, count], or a slice as a list of them."""
        if isinstance(index, slice):
            return [[int(v), int(c)] for v, c in zip(self.values[index].tolist(),
                                                     self.counts[index].tolist(),
                                                     strict=True)]
        return [int(self.values[index]), int(self.counts[index])]

    def __iter__(self) -> Iterator[list[int]]:
        """The rows in order, a chunk of them converted at a time."""
        for start in range(0, len(self.values), _CHUNK):
            yield from self[start:start + _CHUNK]

    def __eq__(self, other: object) -> bool:
        """Equal to another Pairs or a list of [value, count] rows with the same rows."""
        if isinstance(other, Pairs):
            return len(self) == len(other) and bool(np.array_equal(self.values, other.values)) \
                and bool(np.array_equal(self.counts, other.counts))
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(
                list(mine) == list(theirs) for mine, theirs in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        """Short: the size and the first rows."""
        return f"Pairs({len(self)} rows: {self[:3]}...)"

    def json_text(self) -> str:
        """The rows as compact JSON text: {"counts":[c,...],"first":v,"step":d} when the
        values go up by one step d from the first (a tool's histogram prints every
        bucket: 2 bytes a row, not 8), else [[v,c],[v,c],...]; rows() reads either."""
        step = _step(self.values)
        if step is not None:
            return (f'{{"counts":{_int_text(self.counts)},"first":{int(self.values[0])},'
                    f'"step":{step}}}')
        parts = ["["]
        for start in range(0, len(self.values), _CHUNK):
            vals = self.values[start:start + _CHUNK].tolist()
            cnts = self.counts[start:start + _CHUNK].tolist()
            if start:
                parts.append(",")
            parts.append(",".join(f"[{v},{c}]" for v, c in zip(vals, cnts, strict=True)))
        parts.append("]")
        return "".join(parts)  # one join: no copy of the whole text beside the parts


def _step(values: np.ndarray) -> int | None:
    """d when values (at least two, integers) are first + i * d with d >= 1, else None."""
    if len(values) < 2 or values.dtype.kind not in "iu":
        return None
    step = int(values[1]) - int(values[0])
    if step < 1:
        return None
    first = int(values[0])
    for start in range(0, len(values), _CHUNK):
        part = values[start:start + _CHUNK].astype(np.int64)
        want = first + step * np.arange(start, start + len(part), dtype=np.int64)
        if not np.array_equal(part, want):
            return None
    return step


def _int_text(values: np.ndarray) -> str:
    """Integers as compact JSON text: [v,v,...]."""
    parts = ["["]
    for start in range(0, len(values), _CHUNK):
        if start:
            parts.append(",")
        parts.append(",".join(map(str, values[start:start + _CHUNK].tolist())))
    parts.append("]")
    return "".join(parts)


def rows(entry: Any) -> Pairs | list[list[int]] | None:
    """A tool histogram's rows as stored in data["tool_hist"] (one entry per series): the
    list of [value, count] rows, or the compact {"counts", "first", "step"} form (read as
    Pairs), or None (no histogram, or not one of these shapes)."""
    if isinstance(entry, Pairs):
        return entry
    if isinstance(entry, dict):
        counts: Any = entry.get("counts")
        first: Any = entry.get("first")
        step: Any = entry.get("step")
        if not isinstance(counts, Sequence) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in (first, step)):
            return None
        column = counts.values if isinstance(counts, Ints) else np.array(list(counts))
        if column.dtype.kind not in "iu" and len(column):
            return None
        values = first + step * np.arange(len(column), dtype=np.int64)
        return Pairs(values, column)
    if isinstance(entry, list):
        return entry
    return None


class _Column(Sequence[_T]):
    """Numbers read from a long JSON array, as one numpy array: read, compared and
    serialised as the list of them (a subclass says how one value is converted)."""

    # one array value as the Python number the list holds (int or float)
    _item: Callable[[Any], _T]

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def __len__(self) -> int:
        """How many values."""
        return len(self.values)

    @overload
    def __getitem__(self, index: int) -> _T: ...

    @overload
    def __getitem__(self, index: slice) -> list[_T]: ...

    def __getitem__(self, index: int | slice) -> _T | list[_T]:
        """One value, or a slice as a list."""
        if isinstance(index, slice):
            return [self._item(v) for v in self.values[index].tolist()]
        return self._item(self.values[index])

    def __iter__(self) -> Iterator[_T]:
        """The values in order, a chunk of them converted at a time."""
        for start in range(0, len(self.values), _CHUNK):
            yield from self[start:start + _CHUNK]

    def __eq__(self, other: object) -> bool:
        """Equal to a column of the same kind or a list of the same values."""
        if isinstance(other, type(self)):
            return bool(np.array_equal(self.values, other.values))
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(
                mine == theirs for mine, theirs in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        """Short: the size and the first values."""
        return f"{type(self).__name__}({len(self)} values: {self[:3]}...)"


class Ints(_Column[int]):
    """Integers read from a long JSON array (a compact histogram's counts)."""

    @staticmethod
    def _item(value: Any) -> int:
        """One value as an int."""
        return int(value)

    def json_text(self) -> str:
        """The values as compact JSON text: [v,v,...]."""
        return _int_text(self.values)


class Floats(_Column[float]):
    """Numbers a tool printed one a line (lmbench's repeated results), as one float64
    array: 8 bytes a value."""

    def __init__(self, values: np.ndarray) -> None:
        super().__init__(np.asarray(values, dtype=np.float64))

    @staticmethod
    def _item(value: Any) -> float:
        """One value as a float."""
        return float(value)

    def json_text(self) -> str:
        """The values as compact JSON text: [v,v,...] (each as json.dumps writes it)."""
        parts = ["["]
        for start in range(0, len(self.values), _CHUNK):
            if start:
                parts.append(",")
            parts.append(",".join(map(float.__repr__,
                                      self.values[start:start + _CHUNK].tolist())))
        parts.append("]")
        return "".join(parts)


# the compact columns dumps() writes from their arrays
COMPACT = (Pairs, Floats, Ints)


def holds_columns(value: Any) -> bool:
    """True when a Pairs, Floats or Ints is inside value (dicts and lists walked)."""
    return _holds_pairs(value)


def step_of(values: np.ndarray) -> int | None:
    """d when values (at least two, integers) are first + i * d with d >= 1, else None
    (a Pairs' values stored as {"counts", "first", "step"})."""
    return _step(values)


def _holds_pairs(value: Any) -> bool:
    """True when a Pairs or Floats is inside value (dicts and lists walked)."""
    stack = [value]
    kinds = (*COMPACT, dict, list)
    while stack:
        item = stack.pop()
        if isinstance(item, COMPACT):
            return True
        if isinstance(item, dict):
            stack.extend(v for v in item.values() if isinstance(v, kinds))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, kinds))
    return False


def dumps(value: Any, **options: Any) -> str:
    """json.dumps(value, **options), each Pairs written as its [[v,c],...] rows without
    a Python list per row (the markers are replaced in the text).

    The json encoder finds the columns itself: it hands each object it cannot write
    to `default`, which puts a marker in its place.  (Walking value in Python first to
    find them took some 15 times as long as the encoding itself.)"""
    found: dict[str, Pairs | Floats | Ints] = {}
    # a marker no string of value can equal: a fresh random part per call (a string of a
    # user's, an imported thread name say, that spelled a fixed marker would have been
    # written as a column's rows)
    nonce = secrets.token_hex(8)
    mark = f"\x00rtbench-pairs-{nonce}-"
    given_default = options.pop("default", None)

    def column_marker(obj: Any) -> Any:
        """A marker for a column (kept in found); anything else as json.dumps would."""
        if isinstance(obj, COMPACT):
            key = f"{mark}{len(found)}"
            found[key] = obj
            return key
        if given_default is not None:
            return given_default(obj)
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")

    text = json.dumps(value, default=column_marker, **options)
    if not found:
        return text

    def column_text(match: re.Match[str]) -> str:
        """The rows of this call's column a marker stands for; other text as it is."""
        column = found.get("\x00rtbench-pairs-" + match.group(1))
        return match.group(0) if column is None else column.json_text()

    return _MARK_TEXT.sub(column_text, text)


# a marker as json.dumps writes it (a control character is always escaped): its random
# part and index; only this call's markers are in its found
_MARK_TEXT = re.compile(r'"\\u0000rtbench-pairs-([0-9a-f]{16}-\d+)"')


def exact_sum(values: np.ndarray) -> int:
    """The sum of non-negative integers as a Python int (no 64-bit wrap-around)."""
    if not values.size:
        return 0
    if values.dtype.kind == "O" or int(values.max()) > (1 << 62) // values.size:
        return int(sum(values.tolist()))
    return int(values.sum(dtype=np.int64))
