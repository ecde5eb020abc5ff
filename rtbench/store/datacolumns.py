"""A measurement's long arrays of numbers stored apart from its data, a piece at a time.

An imported tool's repeated results (lmbench's `tool_values_us`, hackbench's `times_s`)
and its histogram (`tool_hist`) are held while importing as compact columns
(rtbench.wire.histpairs: Pairs, Floats, Ints).  Written into the measurement's `data` text,
such a column was one database value as large as the imported file, which Python and
SQLite each copy while storing: 3 to 4.5 times the file (issue 36).  split() takes each
column of at least LONG elements out of the data (its place holds null) and
write_columns() stores it in `data_columns`, PIECE elements a row, each row's text
written from the arrays when it is inserted.  fill() puts them back when a measurement
is read: the text of the pieces joined is the array's text, decoded as the whole data
text decoded it, so a run reads back as it did when its arrays were in its data.
Measurements stored before (every array in the data) have no such rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, insert, select

from rtbench.store import schema as t

if TYPE_CHECKING:  # histpairs brings numpy, which reading a run (show, ls) never needs
    from rtbench.wire.histpairs import Floats, Ints, Pairs

# a column shorter than this stays in the data text
LONG = 4096
# elements a stored row holds (the strings of a piece's values are made at once: about 0.4 MB)
PIECE = 1 << 12
# a key of a dict or the index in a list: the way from data to a column
Path = list[str | int]


def split(data: Any) -> tuple[Any, list[tuple[Path, Pairs | Floats | Ints]]]:
    """(data with each long column's place null, [(its path, the column)]); data is not
    changed (a dict or list on a column's way is copied).  A Pairs whose values go up by
    one step is stored as the store writes it ({"counts", "first", "step"}): its counts
    are the column."""
    from rtbench.wire import histpairs

    found: list[tuple[Path, Pairs | Floats | Ints]] = []
    if not histpairs.holds_columns(data):
        return data, found
    return _split(data, [], found), found


def _split(value: Any, path: Path, found: list[tuple[Path, Pairs | Floats | Ints]]) -> Any:
    """value with its long columns taken out into found (see split)."""
    from rtbench.wire.histpairs import COMPACT, Ints, Pairs, step_of

    if isinstance(value, Pairs) and len(value) >= LONG:
        step = step_of(value.values)
        if step is None:
            found.append((path, value))
            return None
        found.append(([*path, "counts"], Ints(value.counts)))
        return {"counts": None, "first": int(value.values[0]), "step": step}
    if isinstance(value, COMPACT) and len(value) >= LONG:
        found.append((path, value))
        return None
    kinds = (*COMPACT, dict, list)
    if isinstance(value, dict) and any(isinstance(v, kinds) for v in value.values()):
        return {k: _split(v, [*path, k], found) for k, v in value.items()}
    if isinstance(value, list) and any(isinstance(v, kinds) for v in value):
        return [_split(v, [*path, i], found) for i, v in enumerate(value)]
    return value


def pieces(column: Pairs | Floats | Ints) -> Iterator[str]:
    """The column's JSON text, PIECE elements at a time, without the brackets (joined
    with "," and bracketed: the text histpairs.dumps writes)."""
    from rtbench.wire.histpairs import Floats, Pairs

    for start in range(0, len(column), PIECE):
        if isinstance(column, Pairs):
            vals = column.values[start:start + PIECE].tolist()
            cnts = column.counts[start:start + PIECE].tolist()
            yield ",".join(f"[{v},{c}]" for v, c in zip(vals, cnts, strict=True))
        elif isinstance(column, Floats):
            yield ",".join(map(float.__repr__, column.values[start:start + PIECE].tolist()))
        else:
            yield ",".join(map(str, column.values[start:start + PIECE].tolist()))


def write_columns(conn: Connection, measurement_id: int,
                  columns: list[tuple[Path, Pairs | Floats | Ints]]) -> None:
    """Store split()'s columns of a measurement, a row (one statement) per piece."""
    for index, (path, column) in enumerate(columns):
        where = json.dumps(path, separators=(",", ":"))
        for piece, text in enumerate(pieces(column)):
            conn.execute(insert(t.data_columns), {
                "measurement_id": measurement_id, "column_index": index, "piece": piece,
                "path": where, "body": text})


def fill(conn: Connection, datas: dict[int, Any], skip: frozenset[str] = frozenset()
         ) -> None:
    """Put each stored column back into the data of its measurement (datas: by
    measurement id, changed in place); a column under a top-level key in skip is left
    out (its place stays null)."""
    if not datas:
        return
    c = t.data_columns.c
    rows = conn.execute(select(c.measurement_id, c.column_index, c.path, c.body)
                        .where(c.measurement_id.in_(list(datas)))
                        .order_by(c.measurement_id, c.column_index, c.piece))
    key: tuple[int, int] | None = None
    path: Path = []
    bodies: list[str] = []
    for mid, index, where, body in rows:
        if (mid, index) != key:
            if key is not None:
                _put(datas[key[0]], path, bodies, skip)
            key, path, bodies = (mid, index), json.loads(where), []
        bodies.append(body)
    if key is not None:
        _put(datas[key[0]], path, bodies, skip)


def _put(data: Any, path: Path, bodies: list[str], skip: frozenset[str]) -> None:
    """Set the array whose pieces are bodies at path in data (nothing when the way is
    not there or its first key is in skip)."""
    if not path or (isinstance(path[0], str) and path[0] in skip):
        return
    holder = data
    for step in path[:-1]:
        try:
            holder = holder[step]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(holder, (dict, list)):
        try:
            holder[path[-1]] = json.loads("[" + ",".join(bodies) + "]")  # type: ignore[index]
        except (IndexError, TypeError):
            return

