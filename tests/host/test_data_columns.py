"""rtbench's own JSON read a chunk at a time with its long arrays cut out, and long data
arrays stored apart in data_columns (issue 36, item 1): what is read and what reads back
is exactly what reading the whole file and storing the array in the data gave."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rtbench.interop import _jsonstream
from rtbench.interop._jsoncolumns import LONG, _place
from rtbench.interop._jsonstream import cut_columns
from rtbench.interop.base import importers
from rtbench.interop.runjson import dumps, load_path, loads
from rtbench.store import Store
from rtbench.store.datacolumns import PIECE
from rtbench.wire.histpairs import Floats, Ints, Pairs

_NUMBER = st.one_of(st.integers(-10**6, 10**6),
                    st.floats(allow_nan=False, allow_infinity=False, width=64))
_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), _NUMBER, st.text(alphabet='ab"\\[],{}:0 ', max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(alphabet="ab[]\"", max_size=3), inner,
                                            max_size=3)),
    max_leaves=12)


def _long(kind: int, size: int) -> list[Any]:
    """A long array: [int,int] rows, floats or integers."""
    if kind == 0:
        return [[i, i % 7] for i in range(size)]
    if kind == 1:
        return [i / 8 for i in range(size)]
    return [i % 300 for i in range(size)]


def _decoded(text: bytes, chunk: int) -> Any:
    """The document cut_columns() reads from text, its columns put back."""
    old = _jsonstream.CHUNK
    _jsonstream.CHUNK = chunk
    try:
        cut = cut_columns(io.BytesIO(text))
    finally:
        _jsonstream.CHUNK = old
    assert cut is not None
    skeleton, token, columns = cut
    placed: set[int] = set()
    value = _place(msgspec.json.decode(skeleton), token, columns, placed)
    assert placed == set(range(len(columns)))
    return value, columns


@settings(max_examples=15, deadline=None)
@given(_VALUE, st.lists(st.tuples(st.integers(0, 2), st.integers(LONG - 2, LONG + 40)),
                        max_size=3), st.sampled_from([61, 4099, 1 << 20]))
def test_cut_columns_reads_what_the_parser_reads(value: Any, longs: list[tuple[int, int]],
                                                 chunk: int) -> None:
    """Any JSON document with long arrays among other values (strings holding brackets
    and quotes, short arrays, nesting), in chunks of any size: the skeleton with its
    columns put back equals the document; each array of at least LONG numbers is a
    column, a shorter one stays in the skeleton."""
    doc = {"v": value, "longs": [_long(kind, size) for kind, size in longs]}
    text = json.dumps(doc, separators=(",", ":")).encode()
    got, columns = _decoded(text, chunk)
    assert json.loads(json.dumps(got, default=list)) == json.loads(text)
    assert len(columns) == sum(size >= LONG for _, size in longs)
    kinds = [type(c) for c in columns]
    assert kinds == [(Pairs, Floats, Ints)[kind] for kind, size in longs if size >= LONG]


def test_an_array_that_stops_being_numbers_is_read_whole(tmp_path: Path) -> None:
    """A long array whose last element is a string cannot be a column once the file has
    gone by: cut_columns() says so (None) and load_path() reads the file whole, with the
    same result (or refusal) as loads()."""
    text = json.dumps({"a": [*range(LONG + 5), "x"]}, separators=(",", ":")).encode()
    assert cut_columns(io.BytesIO(text)) is None


def _run_json(make: Any) -> bytes:
    """rtbench's JSON of an import of make's lmbench text (a long column of floats)."""
    run = importers()["lmbench"].read(make.encode(), "f.txt")[0]
    return dumps(run).encode()


def test_load_path_reads_the_run_loads_reads(tmp_path: Path) -> None:
    """A run with a long array of floats, from a file: the same run as loads() of its
    bytes, the array a column; a document refused is refused with the same line."""
    text = "".join(f"Pipe latency: {1 + i / 8} microseconds\n" for i in range(LONG + 10))
    data = _run_json(text)
    path = tmp_path / "r.json"
    path.write_bytes(data)
    streamed = load_path(str(path), "r.json")
    assert dumps(streamed) == dumps(loads(data, "r.json"))
    assert isinstance(streamed.scenarios[0].measurements[0].data["tool_values_us"], Floats)
    bad = data.replace(b'"simulated":false', b'"simulated":0', 1)
    path.write_bytes(bad)
    for read in (lambda: load_path(str(path), "r.json"), lambda: loads(bad, "r.json")):
        try:
            read()
        except Exception as exc:  # noqa: BLE001 - the two messages are compared
            message = str(exc)
        else:
            message = ""
        assert "expected true or false" in message, message


def test_long_arrays_are_stored_apart_and_read_back_as_lists(tmp_path: Path) -> None:
    """A measurement whose data holds a long Floats, a long Pairs going up by one step
    and a short list: the long ones are rows of data_columns (a piece every PIECE
    elements), the data text holds null in their place, and the run reads back with the
    lists the whole text gave; deleting the run deletes the rows."""
    size = PIECE + 100
    text = "".join(f"Pipe latency: {1 + i / 8} microseconds\n" for i in range(size))
    run = importers()["lmbench"].read(text.encode(), "f.txt")[0]
    data = run.scenarios[0].measurements[0].data
    data["tool_hist"] = [Pairs(np.arange(size), np.arange(size))]
    data["short"] = [1.5, 2.5]
    want = json.loads(dumps(run))["scenarios"][0]["measurements"][0]["data"]
    db = tmp_path / "c.db"
    with Store.open(f"sqlite:///{db}") as store:
        run_id, _ = store.add_bundle(run)
        back = store.get_run(run_id).scenarios[0].measurements[0].data
    assert back == want
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT column_index, piece, path FROM data_columns "
                            "ORDER BY column_index, piece").fetchall()
        stored = json.loads(conn.execute("SELECT data FROM measurements").fetchone()[0])
    assert rows == [(0, 0, '["tool_values_us"]'), (0, 1, '["tool_values_us"]'),
                    (1, 0, '["tool_hist",0,"counts"]'), (1, 1, '["tool_hist",0,"counts"]')]
    assert stored["tool_values_us"] is None and stored["short"] == [1.5, 2.5]
    assert stored["tool_hist"] == [{"counts": None, "first": 0, "step": 1}]
    with Store.open(f"sqlite:///{db}") as store:
        from rtbench.store.removal import delete_runs

        delete_runs(store, [run_id])
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM data_columns").fetchone() == (0,)


def test_dumps_writes_each_column_as_its_own_text_wherever_it_sits() -> None:
    """histpairs.dumps: every column, in a dict or a list, is written as its (compact)
    json_text(), the keys sorted when asked; what json cannot write is refused as
    json.dumps refuses it, or handed to the caller's default."""
    import pytest

    from rtbench.wire import histpairs

    pairs = Pairs(np.array([10, 25]), np.array([3, 0]))
    floats = Floats(np.array([0.5, 1.25]))
    ints = Ints(np.array([7, 8, 9]))
    value = {"b": [pairs, {"x": floats}], "a": ints, "c": [1, "two"]}
    written = {"b": [json.loads(pairs.json_text()), {"x": json.loads(floats.json_text())}],
               "a": json.loads(ints.json_text()), "c": [1, "two"]}
    assert json.loads(histpairs.dumps(value)) == written
    compact = histpairs.dumps(value, sort_keys=True, separators=(",", ":"))
    assert compact == json.dumps(written, sort_keys=True, separators=(",", ":"))
    with pytest.raises(TypeError, match="not JSON serializable"):
        histpairs.dumps({"a": pairs, "b": object()})
    assert histpairs.dumps({"a": {2, 1}, "b": ints}, default=sorted) == \
        '{"a": [1, 2], "b": [7,8,9]}'


def test_dumps_keeps_a_string_that_spells_a_marker() -> None:
    """A string of the document (an imported thread name, say) that spells the marker
    dumps puts where a column goes is written as itself, not as a column's rows."""
    from rtbench.wire import histpairs

    pairs = Pairs(np.array([10, 25]), np.array([3, 0]))
    spelled = [f"\x00rtbench-pairs-{index}" for index in range(3)]
    value = {"columns": [pairs, pairs], "names": spelled}
    loaded = json.loads(histpairs.dumps(value))
    assert loaded["names"] == spelled
    assert loaded["columns"] == [json.loads(pairs.json_text())] * 2


# JSON documents whose strings often spell a marker, beside a column
MARKERISH = st.one_of(st.text(max_size=8),
                      st.integers(0, 3).map(lambda index: f"\x00rtbench-pairs-{index}"))
DOCUMENTS = st.recursive(st.one_of(st.none(), st.integers(-5, 5), MARKERISH),
                         lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                 st.dictionaries(MARKERISH, inner, max_size=4)),
                         max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(DOCUMENTS, st.integers(1, 3))
def test_dumps_writes_any_document_beside_its_columns(document: Any, columns: int) -> None:
    """dumps of a document with columns beside it reads back as the document and the
    columns' rows, whatever its strings spell."""
    from rtbench.wire import histpairs

    pairs = Pairs(np.array([10, 25]), np.array([3, 0]))
    loaded = json.loads(histpairs.dumps({"doc": document, "columns": [pairs] * columns}))
    assert loaded == {"doc": document, "columns": [json.loads(pairs.json_text())] * columns}
