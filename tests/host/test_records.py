"""Parsing of rtprobe/1 NDJSON records."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from synth_probe import synth_lines

from rtbench.rtprobe.wire import records
from rtbench.rtprobe.wire.records import (
    ProbeOutput,
    RateRecord,
    RecordError,
    ResultRecord,
    SpikeRecord,
    StartRecord,
    WindowRecord,
    parse_record,
)

WINDOW = {"schema": "rtprobe/1", "type": "window", "series": 0, "index": 3,
          "warmup": False, "start_ns": 4_000_000_000,
          "end_ns": 5_000_000_000, "count": 52, "min_ns": 2100,
          "max_ns": 48000, "sum_ns": 5_120_000, "overruns": 0, "early": 0,
          "exceed": [0], "hist": [[260, 12], [261, 40]]}


def test_window_record_fields() -> None:
    rec = parse_record(json.dumps(WINDOW))
    assert isinstance(rec, WindowRecord)
    assert rec.hist == [(260, 12), (261, 40)]
    assert (rec.series, rec.index, rec.count, rec.min_ns) == (0, 3, 52, 2100)
    assert rec.warmup is False and rec.exceed == [0]


def test_all_record_types() -> None:
    lines, _ = synth_lines(series=1, windows=2)
    out = ProbeOutput.from_lines(lines)
    assert isinstance(out.start, StartRecord)
    assert out.start.thresholds_ns == [50_000]
    assert out.start.simulated is True
    assert len(out.windows) == 3
    assert isinstance(out.result, ResultRecord)
    assert out.result.series[0]["hist"][0] == tuple(
        out.result.series[0]["hist"][0])
    assert out.complete
    spike = parse_record('{"schema":"rtprobe/1","type":"spike","series":0,'
                         '"t_ns":3001000000,"latency_ns":250000,'
                         '"threshold_ns":100000}')
    assert spike == SpikeRecord(0, 3_001_000_000, 250_000, 100_000)
    rate = parse_record('{"schema":"rtprobe/1","type":"rate","load":"cpu",'
                        '"index":0,"t_ns":1000000000,"achieved":49.8,'
                        '"unit":"%","counters":{"busy_ns":498000000}}')
    assert isinstance(rate, RateRecord) and rate.achieved == 49.8


def test_unknown_members_are_ignored() -> None:
    rec = parse_record(json.dumps(WINDOW | {"future_member": [1, 2]}))
    assert isinstance(rec, WindowRecord)


def test_missing_result_means_incomplete() -> None:
    lines, _ = synth_lines(series=1, windows=2, with_result=False)
    out = ProbeOutput.from_lines(lines)
    assert out.result is None and not out.complete
    assert len(out.windows) == 3


@pytest.mark.parametrize("line, needle", [
    ("not json", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"schema":"rtprobe/2","type":"window"}', "rtprobe/1"),
    ('{"type":"window"}', "schema"),
    ('{"schema":"rtprobe/1","type":"bogus"}', "unknown record type"),
    ('{"schema":"rtprobe/1","type":"spike","series":0,"t_ns":1,'
     '"latency_ns":NaN,"threshold_ns":1}', "non-finite"),
    ('{"schema":"rtprobe/1","type":"spike","series":0,"t_ns":1,'
     '"latency_ns":"5","threshold_ns":1}', "latency_ns"),
    ('{"schema":"rtprobe/1","type":"result","status":"weird",'
     '"exit_code":0}', "status"),
])
def test_bad_lines_name_the_problem(line: str, needle: str) -> None:
    with pytest.raises(RecordError, match=needle):
        parse_record(line)


def test_error_names_the_line_number() -> None:
    lines, _ = synth_lines(series=1, windows=1)
    lines.insert(2, '{"schema":"rtprobe/1","type":"window","series":0}')
    with pytest.raises(RecordError, match=r"^line 3: member 'index'"):
        ProbeOutput.from_lines(lines)


@pytest.mark.parametrize("change, needle", [
    ({"hist": [[261, 40], [260, 12]]}, "increase"),
    ({"hist": [[260, 12]]}, "'count' is 52"),
    ({"hist": [[260, "x"]]}, "pair"),
    ({"count": True}, "count"),
    ({"exceed": ["a"]}, "exceed"),
])
def test_bad_window_members(change: dict[str, object], needle: str) -> None:
    with pytest.raises(RecordError, match=needle):
        parse_record(json.dumps(WINDOW | change), lineno=7)


@given(st.text(max_size=200))
def test_arbitrary_text_is_parsed_or_rejected_cleanly(text: str) -> None:
    try:
        parse_record(text, lineno=1)
    except RecordError as exc:
        assert str(exc).startswith("line 1: ")


@given(st.lists(st.tuples(st.integers(0, 7423), st.integers(0, 2**40)),
                unique_by=lambda p: p[0], max_size=30))
def test_window_hist_roundtrip(pairs: list[tuple[int, int]]) -> None:
    pairs = sorted(pairs)
    total = sum(c for _, c in pairs)
    rec = parse_record(json.dumps(WINDOW | {
        "hist": [list(p) for p in pairs], "count": total}))
    assert isinstance(rec, WindowRecord)
    assert rec.hist == pairs and rec.count == total


def _reference(line: str) -> tuple[str, object]:
    """What the json-decoding path makes of a window line: ("ok", record)
    or ("error", message), with the fast path bypassed."""
    obj = json.loads(line)
    try:
        return "ok", records._parse_window(obj, "line 1: ")
    except RecordError as exc:
        return "error", str(exc)


def _outcome(line: str) -> tuple[str, object]:
    """What parse_record makes of a line: ("ok", record) or ("error", msg)."""
    try:
        return "ok", parse_record(line, lineno=1)
    except RecordError as exc:
        return "error", str(exc)


def _window_line(hist_text: str, count: int, compact: bool = True) -> str:
    """A window record whose hist member (last, as rtprobe writes it) is
    hist_text verbatim."""
    head = json.dumps(WINDOW | {"count": count}, separators=(
        (",", ":") if compact else (", ", ": ")))
    head = head.replace(',"hist":[[260,12],[261,40]]}', "").replace(
        ', "hist": [[260, 12], [261, 40]]}', "")
    return head + (',"hist":' if compact else ', "hist": ') + hist_text + "}"


@pytest.mark.parametrize("hist_text, count", [
    ("[[260,12],[261,40]]", 52),          # plain
    ("[]", 0),                            # empty window
    ("[[0,3]]", 3),                       # bucket 0
    ("[[7423,1]]", 1),                    # last bucket
    ("[[260, 12], [261, 40]]", 52),       # json.dumps' default spacing
    ("[[260,012],[261,40]]", 52),         # zero-padded: not JSON
    ("[[260,],[261,40]]", 40),            # empty number
    ("[[,12],[261,40]]", 52),
    ("[[260,12],[261,40],]", 52),
    ("[[260,12,1],[261,40]]", 53),
    ("[[260,-12],[261,64]]", 52),
    ("[[260,12.0],[261,40]]", 52),
    ("[[260,1 2],[261,40]]", 52),
    ("[[261,12],[260,40]]", 52),          # decreasing
    ("[[260,12],[260,40]]", 52),          # repeated
    ("[[7424,52]]", 52),                  # past the last bucket
    ("[[260,12],[261,41]]", 52),          # count mismatch
    ("[[260,0],[261,52]]", 52),           # zero count (allowed)
    ("[[260,9999999999999999999],[261,1]]", 52),   # past int64
    ("[[99999999999999999999,52]]", 52),
    ("[[260,12],[261,40]", 52),           # unbalanced
    ("[[260,12]],[[261,40]]", 52),
    ("[[true,52]]", 52),
])
def test_fast_window_path_agrees_with_json(hist_text: str, count: int) -> None:
    for compact in (True, False):
        line = _window_line(hist_text, count, compact)
        try:
            json.loads(line)
        except ValueError:
            assert _outcome(line)[0] == "error"
            continue
        assert _outcome(line) == _reference(line), line


@given(st.text(alphabet="[],0123456789 -", max_size=40),
       st.integers(0, 200))
def test_fast_window_path_agrees_on_any_hist_text(hist_text: str,
                                                  count: int) -> None:
    line = _window_line(hist_text, count)
    try:
        json.loads(line)
    except ValueError:
        assert _outcome(line)[0] == "error"
        return
    assert _outcome(line) == _reference(line)


def test_window_hist_is_kept_as_compact_text() -> None:
    rec = parse_record(json.dumps(WINDOW))  # spaced json: canonical text
    assert isinstance(rec, WindowRecord)
    assert rec.hist_json == "[[260,12],[261,40]]"
    idx, cnt = rec.hist_arrays()
    assert idx.tolist() == [260, 261] and cnt.tolist() == [12, 40]
    assert str(idx.dtype) == "int64"
    empty = parse_record(json.dumps(WINDOW | {"hist": [], "count": 0}))
    assert isinstance(empty, WindowRecord)
    assert empty.hist == [] and empty.hist_arrays()[0].size == 0
    # hist not last: decoded the usual way, same record
    moved = '{"hist":[[260,12],[261,40]],' + json.dumps(
        {k: v for k, v in WINDOW.items() if k != "hist"})[1:]
    assert parse_record(moved) == rec


def test_rtprobe_shaped_windows_skip_json_decoding_of_hist() -> None:
    for line in (_window_line("[[260,12],[261,40]]", 52),
                 _window_line("[[260, 12], [261, 40]]", 52, compact=False)):
        fast = records._parse_window_fast(line, "")
        assert fast is not None and fast.hist_json == "[[260,12],[261,40]]"
    assert records._parse_window_fast(
        _window_line("[[260,012],[261,40]]", 52), "") is None


@given(st.lists(st.one_of(
    st.lists(st.tuples(st.integers(0, 8000), st.integers(0, 2**62)), max_size=6),
    st.sampled_from(["[]", "[[]]", "[[1, 2], [3, 4]]", " [ [5,6] ] "])), max_size=8))
def test_windows_hist_arrays_reads_what_each_window_reads(hists: list) -> None:
    # one numpy call for the hist texts of many windows (a check reads hundreds): each
    # window's arrays equal its own hist_arrays(), whatever the text's spacing
    windows = [WindowRecord(series=0, index=i, warmup=False, start_ns=0, end_ns=1,
                            count=1, min_ns=1, max_ns=1, sum_ns=1, overruns=0, exceed=[],
                            hist_json=h if isinstance(h, str)
                            else json.dumps([list(p) for p in h], separators=(",", ":")))
               for i, h in enumerate(hists)]
    got = records.windows_hist_arrays(windows)
    assert len(got) == len(windows)
    for w, (idx, cnt) in zip(windows, got, strict=True):
        own_idx, own_cnt = w.hist_arrays()
        assert idx.tolist() == own_idx.tolist() and cnt.tolist() == own_cnt.tolist()
