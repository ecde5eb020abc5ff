"""rt-tests' and jitterdebugger's JSON with large histograms, in memory in proportion.

json.loads() makes a str key and an int per `"bucket": count` entry of a histogram
object (about 100 bytes for 10 of the file, issue 36).  loose_json_hists() reads each
large, flat `"histogram": {"N": C, ...}` object straight from the bytes into Pairs
(two compact arrays) and parses the rest of the document with loose_json(); an object
that is not plainly such entries (a sign, a fraction, a nan, a duplicate bucket, a
count past 2^53) is left to loose_json(), which reads or refuses it as before.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

import numpy as np

from rtbench.interop._build import MAX_COUNT, check_count, loose_json
from rtbench.interop._lines import check_text
from rtbench.interop.base import ImportFormatError
from rtbench.wire.histpairs import IntColumn, Pairs

# a histogram object shorter than this is left to json.loads (small files: unchanged)
LARGE_BYTES = 64 << 10
_OPEN = re.compile(rb'"histogram"[ \t\n\r]*:[ \t\n\r]*\{')
# one entry and what follows it: a comma, or the end of the object
_ENTRY = re.compile(rb'[ \t\n\r]*"(0|[1-9][0-9]{0,17})"[ \t\n\r]*:[ \t\n\r]*'
                    rb'(0|[1-9][0-9]{0,17})[ \t\n\r]*(,|\})')


def _entries(data: bytes, start: int) -> tuple[Pairs, int] | None:
    """The entries of the object whose "{" ends at start, and the offset of its "}";
    None when it is not a plain object of "bucket": count entries."""
    buckets, counts = IntColumn(), IntColumn()
    pos = start
    match = _ENTRY
    while True:
        found = match.match(data, pos)
        if found is None:
            return None
        buckets.append(int(found.group(1)))
        count = int(found.group(2))
        if count > MAX_COUNT:
            return None
        counts.append(count)
        pos = found.end()
        if found.group(3) == b"}":
            break
    keys = buckets.array()
    if not _increasing(keys) and not _increasing(np.sort(keys)):
        return None  # a bucket twice: json.loads keeps the last value, so does the dict
    return Pairs(keys, counts.array()), pos - 1


def _increasing(values: np.ndarray) -> bool:
    """True when each value is above the one before (a slice at a time: no big copy)."""
    for start in range(1, len(values), 1 << 16):
        part = values[start:start + (1 << 16)]
        if not bool(np.all(part > values[start - 1:start - 1 + len(part)])):
            return False
    return True


def _structural(data: bytes, quote: int) -> bool:
    """True when the quote at offset quote is not escaped (an even run of backslashes
    before it): in a valid document, then, it opens a key."""
    run = 0
    while quote - run - 1 >= 0 and data[quote - run - 1] == 0x5C:
        run += 1
    return run % 2 == 0


def loose_json_hists(data: bytes, filename: str) -> Any:
    """loose_json(data), each large histogram object read as Pairs (unsorted, in the
    file's order)."""
    check_text(data, filename, whole_lines=False)
    token = "rtbench-hist-" + secrets.token_hex(8)
    pieces: list[bytes] = []
    found: list[Pairs] = []
    done = 0
    for opened in _OPEN.finditer(data):
        brace = opened.end() - 1
        if brace < done or not _structural(data, opened.start()):
            continue
        end = data.find(b"}", brace)
        if end < 0 or end - brace < LARGE_BYTES:
            continue
        read = _entries(data, brace + 1)
        if read is None:
            continue
        pairs, closing = read
        pieces += [data[done:brace], f'{{"{token}": {len(found)}}}'.encode()]
        found.append(pairs)
        done = closing + 1
    if not found:
        return loose_json(data, filename)
    pieces.append(data[done:])
    doc = loose_json(b"".join(pieces), filename)
    del pieces
    placed = _place(doc, token, found)
    if placed != len(found):
        raise ImportFormatError(f"{filename}: not valid JSON (a histogram object where "
                                "no value can be)")
    return doc


def _place(doc: Any, token: str, found: list[Pairs]) -> int:
    """Replace each {token: i} in doc by found[i]; how many were replaced."""
    placed = 0
    stack = [doc]
    while stack:
        item = stack.pop()
        children = item.items() if isinstance(item, dict) else enumerate(item) \
            if isinstance(item, list) else ()
        for key, value in list(children):
            if isinstance(value, dict) and len(value) == 1 and token in value \
                    and isinstance(value[token], int) and 0 <= value[token] < len(found):
                item[key] = found[value[token]]
                placed += 1
            elif isinstance(value, (dict, list)):
                stack.append(value)
    return placed


def hist_rows(raw: Any, where: str) -> list[tuple[int, int]] | Pairs:
    """A JSON histogram object's (bucket, count) rows sorted by bucket: from a dict (each
    entry checked) or from the Pairs loose_json_hists() read."""
    if isinstance(raw, Pairs):
        if _increasing(raw.values):
            return raw
        order = np.argsort(raw.values, kind="stable")
        return Pairs(raw.values[order], raw.counts[order])
    hist = []
    for bucket, n in raw.items():
        if not str(bucket).isdigit() or isinstance(n, bool) or not isinstance(n, int):
            raise ImportFormatError(f"{where}: histogram entry {bucket!r} is not "
                                    "a bucket and a count")
        hist.append((int(bucket), check_count(n, f"{where}: histogram")))
    hist.sort()
    return hist
