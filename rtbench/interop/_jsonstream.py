"""A JSON file read a chunk at a time, its long arrays of numbers cut out as columns.

`rtbench import` of rtbench's own JSON (issue 36): the whole file in memory and the
columns read from it (_jsoncolumns) held about 2.1 times the file, since a column of
8-byte floats is as large as its text.  cut_columns() reads the file CHUNK bytes at a
time and copies it to a skeleton, except each long array (at least LONG elements) of
`[int,int]` rows, JSON floats or JSON integers, written without spaces as `export`
writes it: that array is read into a column as it streams past (the same patterns as
_jsoncolumns) and a token string (a random mark and its index) stands in its place.
The skeleton is what the file holds besides its long arrays; the file itself is never
held whole.

The skeleton decodes to the document with each long array replaced by its token, so
decoding the skeleton and putting each column back where its token is (_jsoncolumns'
place) gives what decoding the file gives.  None when the file cannot be read so (an
array that stops being a column after LONG elements, a number longer than _SLACK
bytes, an array still too short after _SHORT_MAX bytes): the caller then reads the
file whole, as before.
"""

from __future__ import annotations

import re
import secrets
from array import array
from typing import BinaryIO, Literal

import msgspec
import numpy as np

from rtbench.interop._jsoncolumns import _FLOAT, _INTEGER, _ROW, LONG
from rtbench.wire.histpairs import Floats, IntColumn, Ints, Pairs

CHUNK = 1 << 20
# bytes a value of a column may span (a number longer than this: not streamed)
_SLACK = 64
# bytes kept from an array's start while it has fewer than LONG elements
_SHORT_MAX = 4 << 20
# a string's opening quote, or an array's opening bracket
_OPEN = re.compile(rb'["\[]')
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)

Column = Pairs | Floats | Ints


class _Buffer:
    """The file's bytes from some offset on: buf holds them, pos is where reading is."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.buf = b""
        self.pos = 0
        self.eof = False

    def more(self, keep: int) -> bool:
        """Read the next chunk, dropping what is before keep (an index into buf, which
        moves to 0); False at the end of the file."""
        if self.eof:
            return False
        chunk = self.handle.read(CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf = self.buf[keep:] + chunk
        self.pos -= keep
        return True


class _Cut:
    """The skeleton as it is written, and the columns cut out of it."""

    def __init__(self) -> None:
        self.skeleton = bytearray()
        self.columns: list[Column] = []
        self.token = "\u0000rtbench-column-" + secrets.token_hex(8)

    def put(self, column: Column) -> None:
        """Write the token of the next column in its place."""
        self.skeleton += msgspec.json.encode(f"{self.token}{len(self.columns)}")
        self.columns.append(column)


def cut_columns(handle: BinaryIO) -> tuple[bytearray, str, list[Column]] | None:
    """(skeleton, token, columns) of the JSON text read from handle; None when a long
    array cannot be streamed (read the file whole instead).  Without columns the
    skeleton is the file's bytes as they are."""
    stream, cut = _Buffer(handle), _Cut()
    while True:
        found = _OPEN.search(stream.buf, stream.pos)
        if found is None:
            cut.skeleton += stream.buf[stream.pos:]
            stream.pos = len(stream.buf)
            if not stream.more(stream.pos):
                break
            continue
        start = found.start()
        cut.skeleton += stream.buf[stream.pos:start]
        stream.pos = start
        if stream.buf[start] == 0x22:  # '"'
            if not _string(stream, cut):
                break  # cut inside a string at the end: the parser says where
            continue
        outcome = _array(stream, cut)
        if outcome is None:
            return None
    return cut.skeleton, cut.token, cut.columns  # not copied: it may be the whole file


def _string(stream: _Buffer, cut: _Cut) -> bool:
    """Copy the string at pos; False when the file ends inside it (copied as it is)."""
    while True:
        found = _STRING.match(stream.buf, stream.pos)
        if found is not None:
            cut.skeleton += stream.buf[stream.pos:found.end()]
            stream.pos = found.end()
            return True
        if not stream.more(stream.pos):
            cut.skeleton += stream.buf[stream.pos:]
            stream.pos = len(stream.buf)
            return False


def _array(stream: _Buffer, cut: _Cut) -> bool | None:
    """At an "[": read a long array of numbers into a column, or copy what is known not
    to be one; None when a long array stops being a column (not streamable)."""
    start = stream.pos
    while len(stream.buf) - start < 2 and stream.more(start):
        start = stream.pos
    buf = stream.buf
    after = buf[start + 1] if start + 1 < len(buf) else 0
    if after == 0x5B:  # [[
        end = buf.find(b"]]", start)
    elif after == 0x2D or 0x30 <= after <= 0x39:  # a minus sign or a digit
        end = buf.find(b"]", start)
    else:
        cut.skeleton += b"["
        stream.pos = start + 1
        return True
    if end >= 0 and end - start < LONG * 2 and buf.find(b'"', start, end) < 0:
        # no string inside, and too short to hold a column ("0," a value at least):
        # copied as it is
        cut.skeleton += buf[start:end + 1]
        stream.pos = end + 1
        return True
    column = _column(stream, after == 0x5B)
    if column is None:
        return None
    if column is False:  # not a column: its "[" copied, what is inside read on
        cut.skeleton += b"["
        stream.pos += 1  # _column left it at the "[" (the buffer may have moved)
        return True
    cut.put(column)
    return True


def _column(stream: _Buffer, pairs: bool) -> Column | Literal[False] | None:
    """The column whose "[" is at pos (pos then after its "]"); False when it is not a
    long column but was read no further than the buffer holds from its "[" (pos left at
    it); None when it stopped being one after LONG elements or is too long to stay."""
    start = stream.pos
    values: IntColumn | array[float] | None = None
    counts = IntColumn()
    floats: bool | None = False if pairs else None
    size = 0
    at = start + 1
    while True:
        while len(stream.buf) - at < _SLACK and not stream.eof:
            keep = start if size < LONG else at
            stream.pos = at
            if stream.more(keep):
                start -= keep
                at = stream.pos
        if size < LONG and at - start > _SHORT_MAX:
            stream.pos = start
            return False
        if pairs:
            found = _ROW.match(stream.buf, at)
        elif floats is None:  # the first value says which kind the array is
            found = _FLOAT.match(stream.buf, at)
            floats = found is not None
            if not floats:
                found = _INTEGER.match(stream.buf, at)
        else:
            found = (_FLOAT if floats else _INTEGER).match(stream.buf, at)
        if found is None:
            if size >= LONG:
                return None
            stream.pos = start
            return False
        if values is None:
            values = array("d") if floats else IntColumn()
        if pairs:
            assert isinstance(values, IntColumn)
            values.append(int(found.group(1)))
            counts.append(int(found.group(2)))
        elif floats:
            assert isinstance(values, array)
            values.append(float(found.group(1)))
        else:
            assert isinstance(values, IntColumn)
            values.append(int(found.group(1)))
        size += 1
        at = found.end()
        if found.group(found.lastindex or 0) == b"]":
            break
    stream.pos = at
    if size < LONG:
        stream.pos = start
        return False
    if pairs:
        assert isinstance(values, IntColumn)
        return Pairs(values.array(), counts.array())
    if floats:
        assert isinstance(values, array)
        return Floats(np.frombuffer(values, dtype=np.float64))
    assert isinstance(values, IntColumn)
    return Ints(values.array())
