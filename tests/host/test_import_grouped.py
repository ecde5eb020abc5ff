"""Imports whose file repeats one result many times hold it compactly (issue 36, item 1):
lmbench's repeated result lines of one benchmark are one measurement with its values,
hackbench's repeated runs one series with their times, rtla timerlat -a's analyses a
sequence read from the file when asked, and rtbench's own JSON reads long arrays of a
measurement's data into columns.  What a user gets is the same information: every
value, in the file's order; a file of single results imports as before; runs stored in
the earlier shape (a measurement per lmbench line) still read and show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from rtbench.interop._build import ToolSeries, tool_measurement, tool_run
from rtbench.interop._jsoncolumns import LONG, object_with_columns
from rtbench.interop._lines import lines
from rtbench.interop.base import ImportFormatError, importers
from rtbench.interop.runjson import dumps, loads
from rtbench.interop.timerlat_auto import TraceRecords, _blocks
from rtbench.store import Store
from rtbench.wire.histpairs import Floats, Pairs

DATA = Path(__file__).parent / "data" / "interop"


def _read(fmt: str, text: str) -> Any:
    """The measurements of text imported as fmt."""
    return importers()[fmt].read(text.encode(), "f.txt")[0].scenarios[0].measurements


def test_lmbench_repeated_lines_are_one_measurement_with_their_values() -> None:
    """Three `Pipe latency` lines: one measurement, count 3, min, max, mean, the values
    in order; a benchmark printed once keeps the one-value shape; bandwidths too."""
    ms = _read("lmbench", "Pipe latency: 6.0 microseconds\nFifo latency: 5.5 microseconds\n"
               "Pipe bandwidth: 100.5 MB/sec\nPipe latency: 2.5 microseconds\n"
               "Pipe bandwidth: 200.5 MB/sec\nPipe latency: 7.25 microseconds\n")
    assert [m.name for m in ms] == ["pipe-latency", "fifo-latency", "pipe-bandwidth"]
    pipe, fifo, bandwidth = ms
    (s,) = pipe.series
    assert (s.count, s.min_ns, s.max_ns, s.sum_ns) == (3, 2500, 7250, 15750)
    assert pipe.data["tool_values_us"] == [6.0, 2.5, 7.25]
    assert pipe.data["tool_avg_ns"] == [5250.0]
    assert (fifo.series[0].count, fifo.series[0].max_ns) == (1, 5500)
    assert set(fifo.data) == {"unit", "meaning", "summary_only", "tool_avg_ns"}
    assert bandwidth.data["tool_values_mb_s"] == [100.5, 200.5]
    assert bandwidth.data["bandwidth_mb_s"] == 150.5


def test_lmbench_values_are_stored_and_exported_as_a_list(tmp_path: Path) -> None:
    """The values (a compact column while importing) are stored and read back as the
    list of floats, and survive rtbench's JSON both ways."""
    text = "".join(f"Pipe latency: {1 + i / 8} microseconds\n" for i in range(LONG + 10))
    run = importers()["lmbench"].read(text.encode(), "f.txt")[0]
    values = run.scenarios[0].measurements[0].data["tool_values_us"]
    assert isinstance(values, Floats)
    with Store.open(f"sqlite:///{tmp_path / 'l.db'}") as store:
        run_id, _ = store.add_bundle(run)
        stored = store.get_run(run_id)
    back = stored.scenarios[0].measurements[0].data["tool_values_us"]
    assert back == [1 + i / 8 for i in range(LONG + 10)] and isinstance(back, list)
    again = loads(dumps(stored))
    column = again.scenarios[0].measurements[0].data["tool_values_us"]
    assert isinstance(column, Floats) and column == back


def test_a_run_stored_in_the_earlier_lmbench_shape_still_shows(tmp_path: Path,
                                                             run_cli: Any) -> None:
    """A run stored as the importer stored it before (a measurement per result line)
    reads back, shows and exports as before."""
    earlier = [tool_measurement(
        name="pipe-latency", test="lmbench", where=f"f.txt: line {i}", summary_only=True,
        series=[ToolSeries(label="Pipe", cpu=None, count=1, min_ns=us * 1000,
                           max_ns=us * 1000, avg_ns=us * 1000)],
        data={"unit": "us", "meaning": "lmbench's average per operation"})
        for i, us in enumerate((6.0, 2.5), 1)]
    run = tool_run(tool="lmbench", tool_version="", command_line=None, fmt="lmbench",
                   measurements=earlier)
    from datetime import datetime, timezone
    run.started_at = datetime(2026, 11, 1, tzinfo=timezone.utc)
    db = f"sqlite:///{tmp_path / 'old.db'}"
    with Store.open(db) as store:
        run_id, _ = store.add_bundle(run)
    shown = run_cli("show", str(run_id), "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("pipe-latency") >= 2
    exported = run_cli("export", str(run_id), "--format", "json", "--db", db)
    assert exported.returncode == 0, exported.stderr
    doc = json.loads(exported.stdout)
    assert [m["series"][0]["max_ns"] for m in doc["scenarios"][0]["measurements"]] == \
        [6000, 2500]


def test_hackbench_runs_of_one_setting_are_one_series_with_their_times() -> None:
    """Three runs with the same header: one series (count 3, min, max, mean) with every
    time; a run of another setting a series of its own; a single run as before."""
    one = (DATA / "real" / "hb.txt").read_text()
    other = one.replace("2 groups", "4 groups").replace("Time: 0.340", "Time: 0.900")
    ms = _read("hackbench", one + one.replace("0.340", "0.200") + one + other)
    (m,) = ms
    first, second = m.series
    assert (first.label, first.count, first.min_ns, first.max_ns) == \
        ("run0-2", 3, 200_000_000, 340_000_000)
    assert m.data["tool_series"][0]["times_s"] == [0.34, 0.2, 0.34]
    assert (second.label, second.count) == ("run3", 1)
    assert m.data["tool_series"][1]["time_s"] == "0.900"
    assert m.data["tool_series"][1]["groups"] == 4
    (single,) = _read("hackbench", one)
    assert single.series[0].label == "run0"
    assert single.data["tool_series"] == [{"time_s": "0.340", "mode": "process",
                                           "groups": 2, "fds": 40, "tasks": 80,
                                           "loops": 200, "datasize": 100}]


def _auto(cpus: int, cut: bool = False) -> str:
    """rtla timerlat -a output analysing cpus CPUs (each block's figures differ)."""
    text = (DATA / "rtla-timerlat-auto-thread.txt").read_text()
    head, block = text.split("## CPU 1 hit stop tracing, analyzing it ##\n")
    block = block.replace("  Saving trace to timerlat_trace.txt\n", "")
    blocks = [f"## CPU {c} hit stop tracing, analyzing it ##\n" +
              block.replace("8.25 us", f"{c}.25 us") for c in range(cpus)]
    out = head + "".join(blocks) + "  Saving trace to timerlat_trace.txt\n"
    return out[:out.rindex("----")] + "\n" if cut else out


def test_timerlat_auto_records_read_as_the_parsed_blocks(tmp_path: Path) -> None:
    """The records are read from the file when asked: the same dicts, in order, by index
    and by iteration; stored and read back equal."""
    text = _auto(5)
    (m,) = _read("rtla-timerlat-auto", text)
    assert isinstance(m.traces, TraceRecords) and len(m.traces) == 5
    want = [record for record, _ in _blocks(
        iter(list(enumerate(lines(text.encode())))[1:]), "f.txt")]
    assert list(m.traces) == want and m.traces == want
    assert [m.traces[i]["cpu"] for i in (0, 3, -1)] == [0, 3, 4]
    assert m.traces[2]["analysis"]["blocking_thread"] == ["kworker/1:2", 311]
    assert m.traces[1:3] == want[1:3]
    with pytest.raises(IndexError):
        m.traces[5]  # noqa: B018
    run = importers()["rtla-timerlat-auto"].read(text.encode(), "f.txt")[0]
    with Store.open(f"sqlite:///{tmp_path / 't.db'}") as store:
        run_id, _ = store.add_bundle(run)
        back = store.get_run(run_id).scenarios[0].measurements[-1].traces
    assert back == want


def test_a_cut_timerlat_auto_block_is_still_refused() -> None:
    """A block cut before its closing line: incomplete, the other blocks kept."""
    from rtbench.interop.base import IncompleteOutput

    with pytest.raises(IncompleteOutput) as cut:
        importers()["rtla-timerlat-auto"].read(_auto(3, cut=True).encode(), "f.txt")
    assert len(cut.value.runs[0].scenarios[0].measurements[-1].traces) == 2
    with pytest.raises(ImportFormatError):
        importers()["rtla-timerlat-auto"].read(
            _auto(2).replace("NET_RX:3", "what is this").encode(), "f.txt")


def test_json_long_arrays_read_into_columns_as_the_parser_reads_them() -> None:
    """Long arrays of [int,int] rows and of floats become Pairs and Floats equal to what
    the parser gives; short, spaced, mixed or string-held ones are parsed as before."""
    rows = [[v, v % 3] for v in range(LONG)]
    floats = [v / 4 + 0.5 for v in range(LONG)]
    doc = {"tool_hist": [rows, None], "vals": floats, "short": [[1, 2]], "ints": list(
        range(LONG)), "mixed": [*floats[:-1], 3], "text": json.dumps(rows, separators=(
            ",", ":")), "nested": {"x": [floats]}}
    raw = json.dumps(doc, separators=(",", ":")).encode()
    read = object_with_columns(raw, msgspec.json.decode)
    assert read == doc
    assert isinstance(read["tool_hist"][0], Pairs) and isinstance(read["vals"], Floats)
    assert isinstance(read["nested"]["x"][0], Floats)
    assert isinstance(read["mixed"], list) and isinstance(read["text"], str)
    spaced = json.dumps(doc).encode()
    assert isinstance(object_with_columns(spaced, msgspec.json.decode)["vals"], list)
