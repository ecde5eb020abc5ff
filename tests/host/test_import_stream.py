"""The pieces that let an import hold memory in proportion to its file (issue 36) read
exactly what the whole-text readers read: lines from bytes, compact columns and
histograms, and large JSON histograms read from the bytes."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtbench.interop._build import loose_json, text_of
from rtbench.interop._jsonhist import LARGE_BYTES, hist_rows, loose_json_hists
from rtbench.interop._lines import check_text, line_count, lines, split_lines
from rtbench.interop.base import ImportFormatError, importers
from rtbench.wire import histpairs
from rtbench.wire.histpairs import IntColumn, Pairs, dumps, exact_sum

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TEXT = st.text(alphabet=st.sampled_from(list("ab 1\n\r\x0b\x1c\x85\u2028\x1b[K;é")),
               max_size=60)


@given(TEXT)
@settings(max_examples=300)
def test_lines_are_the_decoded_texts_splitlines(text: str) -> None:
    """lines() and line_count() give what str.splitlines() gives."""
    data = text.encode()
    assert list(lines(data)) == text.splitlines()
    assert line_count(data) == len(text.splitlines())


@given(TEXT)
@settings(max_examples=300)
def test_split_lines_is_re_split_of_the_cleaned_text(text: str) -> None:
    """split_lines() gives re.split on breaks of the text with ANSI codes removed."""
    expected = re.split(r"\r\n|\r|\n", ANSI.sub("", text))
    assert list(split_lines(text.encode(), ANSI)) == expected


@given(st.binary(max_size=40) | TEXT.map(str.encode))
@settings(max_examples=300)
def test_check_text_refuses_what_text_of_refuses(data: bytes) -> None:
    """check_text() raises the same one-line error as text_of(), or none when it reads."""
    try:
        text_of(data, "f")
        expected = None
    except ImportFormatError as exc:
        expected = str(exc)
    try:
        check_text(data, "f")
        got = None
    except ImportFormatError as exc:
        got = str(exc)
    assert got == expected


@given(st.lists(st.integers(min_value=0, max_value=1 << 70), max_size=200))
def test_int_column_keeps_every_integer(values: list[int]) -> None:
    """IntColumn gives back the integers appended, in order, whatever their size."""
    column = IntColumn()
    for value in values:
        column.append(value)
    assert len(column) == len(values)
    assert [int(v) for v in column.array().tolist()] == values
    assert exact_sum(column.array()) == sum(values)


@given(st.lists(st.tuples(st.integers(0, 1 << 40), st.integers(0, 1 << 53)), max_size=50))
@settings(deadline=None)  # a few ms each; under a loaded machine's stalls, seconds
def test_pairs_read_and_serialise_as_their_list(rows: list[tuple[int, int]]) -> None:
    """Pairs compares equal to its rows as lists, slices and dumps as the list does."""
    as_lists = [list(r) for r in rows]
    pairs = Pairs(np.array([r[0] for r in rows], dtype=np.int64),
                  np.array([r[1] for r in rows], dtype=np.int64))
    assert pairs == as_lists and as_lists == pairs and list(pairs) == as_lists
    assert pairs[:2] == as_lists[:2]
    doc = {"b": [pairs, None], "a": 1}
    for options in ({"separators": (",", ":"), "sort_keys": True},
                    {"separators": (",", ":"), "ensure_ascii": False}):
        text = dumps(doc, **options)
        back = json.loads(text)
        assert back["a"] == 1 and back["b"][1] is None
        assert list(histpairs.rows(back["b"][0]) or []) == as_lists  # either form
        if histpairs._step(pairs.values) is None:  # else the compact form
            assert text == json.dumps({"b": [as_lists, None], "a": 1}, **options)


def test_pairs_whose_values_go_up_by_a_step_serialise_compactly() -> None:
    """Rows whose values go up by one step are written as their counts, the first value
    and the step, and read back as the same rows."""
    pairs = Pairs(np.arange(5, 5 + 3 * 10, 3), np.arange(10) % 4)
    text = dumps(pairs, separators=(",", ":"))
    assert text == '{"counts":[0,1,2,3,0,1,2,3,0,1],"first":5,"step":3}'
    assert histpairs.rows(json.loads(text)) == list(pairs)
    assert histpairs.rows({"counts": [1], "first": "x", "step": 1}) is None


def _document(entries: str) -> bytes:
    """An rt-tests-like JSON document whose thread's histogram holds entries."""
    return ('{"cmdline": "cyclictest \\"histogram\\": {", "thread": {"0": {"histogram": {'
            + entries + '}, "cycles": 5}}, "x": -nan}\n').encode()


def _plain(data: bytes) -> object:
    """The document as loose_json reads it, the histogram as sorted rows."""
    doc = loose_json(data, "f")
    doc["thread"]["0"]["histogram"] = [list(r) for r in
                                       hist_rows(doc["thread"]["0"]["histogram"], "w")]
    return doc


@pytest.mark.parametrize("last", ['"1": 7', '"10": 7', '"3": 1.5', '"4": -1', '"5": nan',
                                  '"06": 2', '"7": 9007199254740993'])
def test_large_json_histogram_reads_as_json_loads_does(last: str) -> None:
    """A large histogram object read from the bytes gives what json.loads gives; one that
    is not plain entries (a fraction, a sign, a nan, a leading zero, a bucket twice, a
    count past 2^53) is read (or refused) by json.loads as before."""
    rows = ", ".join(f'"{v}": {1 + v % 3}' for v in range(10, 10 + LARGE_BYTES // 8))
    data = _document(rows + ", " + last)
    try:
        expected = _plain(data)
    except (ImportFormatError, ValueError) as exc:
        expected = type(exc)
    try:
        doc = loose_json_hists(data, "f")
        doc["thread"]["0"]["histogram"] = [list(r) for r in
                                           hist_rows(doc["thread"]["0"]["histogram"], "w")]
        got: object = doc
    except (ImportFormatError, ValueError) as exc:
        got = type(exc)
    assert got == expected


def test_large_json_histogram_is_held_as_arrays() -> None:
    """The plain case is read into Pairs (not a dict of str and int)."""
    rows = ", ".join(f'"{v}": {1 + v % 3}' for v in range(LARGE_BYTES // 8))
    doc = loose_json_hists(_document(rows), "f")
    assert isinstance(doc["thread"]["0"]["histogram"], Pairs)
    assert doc["cmdline"] == 'cyclictest "histogram": {'


def test_a_long_histogram_is_stored_and_exported_as_its_list(tmp_path, run_cli) -> None:  # type: ignore
    """A cyclictest -h block of 6,000 rows (kept as Pairs) is stored as its counts from
    the first value (the values go up by one), read back as the same rows, and exported
    in rtbench's JSON and rt-tests' JSON; rtbench's JSON imports it again."""
    rows = [(v, 1 + v % 3) for v in range(6000)]
    total = sum(c for _, c in rows)
    text = "\n".join(["# Histogram", *(f"{v:06d} {c:06d}" for v, c in rows),
                      f"# Total: {total:09d}", "# Min Latencies: 00001",
                      "# Avg Latencies: 00002", "# Max Latencies: 05999",
                      "# Histogram Overflows: 00000", "# Histogram Overflow at cycle number:",
                      "# Thread 0:"]) + "\n"
    path = tmp_path / "h.txt"
    path.write_text(text)
    run = importers()["cyclictest"].read(path.read_bytes(), "h.txt")[0]
    held = run.scenarios[0].measurements[0].data["tool_hist"][0]
    assert isinstance(held, Pairs) and held == [list(r) for r in rows]
    db = f"sqlite:///{tmp_path / 'h.db'}"
    done = run_cli("import", str(path), "--db", db)
    assert done.returncode == 0, done.stderr
    from rtbench.store import Store

    with Store.open(db) as store:
        stored = store.get_run(1)
    m = stored.scenarios[0].measurements[0]
    # stored compactly (its values go up by one): 2 bytes a row, read back as its rows
    assert m.data["tool_hist"][0]["first"] == 0 and m.data["tool_hist"][0]["step"] == 1
    assert histpairs.rows(m.data["tool_hist"][0]) == [list(r) for r in rows]
    assert m.series[0].count == total
    exported = run_cli("export", "1", "--format", "json", "--db", db)
    assert exported.returncode == 0, exported.stderr
    assert '"tool_hist":[{"counts":[1,2,3,1,' in exported.stdout
    rt_tests = run_cli("export", "1", "--format", "rt-tests-json", "--db", db)
    assert rt_tests.returncode == 0, rt_tests.stderr
    assert json.loads(rt_tests.stdout)["thread"]["0"]["histogram"]["5999"] == 3
    again = tmp_path / "again.json"
    again.write_text(exported.stdout)
    db2 = f"sqlite:///{tmp_path / 'h2.db'}"
    done = run_cli("import", str(again), "--db", db2)
    assert done.returncode == 0, done.stderr
    assert run_cli("export", "1", "--format", "json", "--db", db2).stdout == exported.stdout


def test_a_histogram_stored_as_rows_still_exports(tmp_path, run_cli) -> None:  # type: ignore
    """A long tool histogram stored as [value, count] rows (as before the compact form)
    still exports to rt-tests' JSON; values that do not go up by one step are stored
    as rows still."""
    rows = [[v * v, 1] for v in range(5000)]
    assert histpairs.dumps(Pairs(np.array([r[0] for r in rows]), np.ones(5000, dtype=int))
                           ).startswith("[[0,1],[1,1],[4,1],")
    text = "\n".join(["# Histogram", *(f"{v:06d} {v % 3:06d}" for v in range(5000)),
                      f"# Total: {sum(v % 3 for v in range(5000)):09d}",
                      "# Min Latencies: 00001", "# Avg Latencies: 00002",
                      "# Max Latencies: 04999", "# Histogram Overflows: 00000",
                      "# Histogram Overflow at cycle number:", "# Thread 0:"]) + "\n"
    run = importers()["cyclictest"].read(text.encode(), "h.txt")[0]
    m = run.scenarios[0].measurements[0]
    m.data["tool_hist"] = [[[v, v % 3] for v in range(5000)]]  # the earlier stored form
    from rtbench.store import Store

    db = f"sqlite:///{tmp_path / 'rows.db'}"
    with Store.open(db) as store:
        store.add_bundle(run)
    rt_tests = run_cli("export", "1", "--format", "rt-tests-json", "--db", db)
    assert rt_tests.returncode == 0, rt_tests.stderr
    assert json.loads(rt_tests.stdout)["thread"]["0"]["histogram"]["4999"] == 4999 % 3
