"""Long arrays of numbers in a JSON object, read into compact columns (issue 36).

rtbench's own JSON of an imported run carries the tool's histogram (`tool_hist`:
`[[value,count],...]`) and lmbench's or hackbench's repeated results (`tool_values_us`,
`times_s`: `[v,v,...]`) in a measurement's `data`; decoded by a JSON parser each row is a
Python list of two ints (about 120 bytes for 14 of text) and each value a float (32
bytes for 8).  object_with_columns() decodes such an object with each long array (at least
LONG elements) as it is written compactly (no spaces, as `rtbench export` writes it) read
straight from the bytes: an array of `[int,int]` rows as Pairs, an array of JSON
floats (each with a `.` or an exponent) as Floats, an array of integers (a compact
`tool_hist` entry's counts) as Ints; each reads, compares and is stored as the list it
stands for.  Anything else (shorter, spaced, mixed, negative counts) is left
to the parser, which reads it exactly as before.
"""

from __future__ import annotations

import re
import secrets
from array import array
from collections.abc import Callable
from typing import Any

import msgspec
import numpy as np

from rtbench.wire.histpairs import Floats, IntColumn, Ints, Pairs

# an array shorter than this is left to the parser
LONG = 4096
# a string (skipped whole: a "[" inside it is text) or an array opening outside strings
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|\[', re.S)
_INT = rb"(0|[1-9][0-9]{0,17})"
_ROW = re.compile(rb"\[" + _INT + rb"," + _INT + rb"\](,|\])")
_INTEGER = re.compile(rb"(-?(?:0|[1-9][0-9]{0,17}))(,|\])")
_FLOAT = re.compile(rb"(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+))"
                    rb"(,|\])")


def _pairs(data: memoryview, pos: int) -> tuple[Pairs, int] | None:
    """The rows of the array of [int,int] rows whose "[" is at pos, and the offset after
    its "]"; None when it is not such an array of at least LONG rows."""
    values, counts = IntColumn(), IntColumn()
    pos += 1
    while True:
        found = _ROW.match(data, pos)
        if found is None:
            return None
        values.append(int(found.group(1)))
        counts.append(int(found.group(2)))
        pos = found.end()
        if found.group(3) == b"]":
            break
    if len(values) < LONG:
        return None
    return Pairs(values.array(), counts.array()), pos


def _floats(data: memoryview, pos: int) -> tuple[Floats, int] | None:
    """The values of the array of JSON floats whose "[" is at pos, and the offset after
    its "]"; None when it is not such an array of at least LONG values."""
    values = array("d")
    pos += 1
    while True:
        found = _FLOAT.match(data, pos)
        if found is None:
            return None
        values.append(float(found.group(1)))
        pos = found.end()
        if found.group(2) == b"]":
            break
    if len(values) < LONG:
        return None
    return Floats(np.frombuffer(values, dtype=np.float64)), pos  # no copy: 8 bytes a value


def _ints(data: memoryview, pos: int) -> tuple[Ints, int] | None:
    """The values of the array of JSON integers (at most 18 digits) whose "[" is at pos,
    and the offset after its "]"; None when it is not such an array of at least LONG."""
    values = IntColumn()
    pos += 1
    while True:
        found = _INTEGER.match(data, pos)
        if found is None:
            return None
        values.append(int(found.group(1)))
        pos = found.end()
        if found.group(2) == b"]":
            break
    if len(values) < LONG:
        return None
    return Ints(values.array()), pos


def object_with_columns(raw: Any, decode: Callable[[Any], Any]) -> Any:
    """decode(raw), each long array of [int,int] rows read as Pairs and each long array of
    floats as Floats (raw: the bytes of one JSON value, e.g. a msgspec.Raw)."""
    if len(raw) < LONG * 4:
        return decode(raw)
    raw = memoryview(raw)
    token = "\u0000rtbench-column-" + secrets.token_hex(8)
    pieces: list[bytes] = []
    found: list[Pairs | Floats | Ints] = []
    done = 0
    for match in _TOKEN.finditer(raw):
        start = match.start()
        if start < done or raw[start] != 0x5B:  # a string, or inside a column read
            continue
        read: tuple[Pairs | Floats | Ints, int] | None = None
        after = raw[start + 1] if start + 1 < len(raw) else 0
        if after == 0x5B:  # [[
            read = _pairs(raw, start)
        elif after == 0x2D or 0x30 <= after <= 0x39:  # a minus sign or a digit
            read = _floats(raw, start) or _ints(raw, start)
        if read is None:
            continue
        column, end = read
        pieces += [raw[done:start], msgspec.json.encode(f"{token}{len(found)}")]
        found.append(column)
        done = end
    if not found:
        return decode(raw)
    pieces.append(raw[done:])
    value = decode(b"".join(pieces))
    del pieces
    return _place(value, token, found)


def _place(value: Any, token: str, found: list[Pairs | Floats | Ints],
           placed: set[int] | None = None) -> Any:
    """value with each string token + i replaced by found[i] (dicts and lists walked);
    each i replaced is added to placed."""
    seen = placed if placed is not None else set()
    stack = [value]
    while stack:
        item = stack.pop()
        children = item.items() if isinstance(item, dict) else enumerate(item) \
            if isinstance(item, list) else ()
        for key, child in list(children):
            if isinstance(child, str) and child.startswith(token):
                index = int(child[len(token):])
                item[key] = found[index]
                seen.add(index)
            elif isinstance(child, (dict, list)):
                stack.append(child)
    if isinstance(value, str) and value.startswith(token):
        seen.add(int(value[len(token):]))
        return found[int(value[len(token):])]
    return value
