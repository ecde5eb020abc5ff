"""--trace on the host: the trace records parsed and ingested, the suite key, the CLI
option and the serial budget (docs/schema.md, docs/suites.md).

tests/host/data/trace_run.ndjson is real rtprobe output captured on this machine:
`rtprobe cyclic --cpus 1 --duration 1s --warmup 200ms --threshold 400us --trace=on
--trace-max-spikes 2 --trace-budget 4KiB --window 500ms` while tests/probe/trace_injector.c
(pid 31830, comm rtb-inject) burst 1.5 ms every 20 ms on CPU 1.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from suite_helpers import error_of, parse

from rtbench.rtprobe.argv import serial_trace_args
from rtbench.rtprobe.wire.records import ProbeOutput, RecordError, parse_record
from rtbench.store.ingest import measurement_detail
from tests.conftest import RunCli

FIXTURE = Path(__file__).resolve().parent / "data" / "trace_run.ndjson"


def fixture_records() -> list[dict[str, Any]]:
    """The fixture's records as dicts."""
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def test_fixture_parses_into_traces_and_summary() -> None:
    out = ProbeOutput.from_lines(FIXTURE.read_text().splitlines())
    assert len(out.traces) == 2
    info = out.trace_summary
    assert info is not None and info["spikes_traced"] == 2 and info["restored"] is True
    spikes = {(s.series, s.t_ns): s.latency_ns for s in out.spikes}
    for trace in out.traces:
        assert spikes[(trace["series"], trace["t_ns"])] == trace["latency_ns"]
        assert len(trace["events"]) + trace["events_dropped"] == trace["events_in_window"]
        assert any(e[4] == "sched:sched_switch" and "next_comm=rtb-inject next_pid=31830 "
                   in e[5] for e in trace["events"])


def test_ingest_copies_traces() -> None:
    out = ProbeOutput.from_lines(FIXTURE.read_text().splitlines())
    detail = measurement_detail(out, name="cyclic", test="cyclic", params={}, command=[],
                                status="fail", thresholds_ns=[400_000])
    assert detail.traces == out.traces and len(detail.traces) == 2
    assert detail.trace_info == out.trace_summary


def test_no_trace_no_traces() -> None:
    lines = [line for line in FIXTURE.read_text().splitlines()
             if '"type":"trace' not in line]
    out = ProbeOutput.from_lines(lines)
    assert out.traces == [] and out.trace_summary is None


def _trace() -> dict[str, Any]:
    """The fixture's first trace record."""
    return copy.deepcopy(next(r for r in fixture_records() if r["type"] == "trace"))


@pytest.mark.parametrize("change, words", [
    (lambda r: r["events"].append([1, 2, 3, "x", "sched:sched_switch"]), "events'["),
    (lambda r: r["events"].append([1, 2, 3, "x", "sched_switch", ""]), "system:event"),
    (lambda r: r["events"].append([-1, 2, 3, "x", "a:b", ""]), "non-negative"),
    (lambda r: r["events"].append([1, 2, 3, 4, "a:b", ""]), "strings"),
    (lambda r: r.update(clock="tsc"), "'clock'"),
    (lambda r: r.update(window_start_ns=r["window_end_ns"] + 1), "after"),
    (lambda r: r.pop("lost"), "'lost' is missing"),
    (lambda r: r.update(events="none"), "wrong type"),
    (lambda r: r.update(replaces=[0, 1]), "'replaces'"),
    (lambda r: r.update(replaces={"series": 0}), "'t_ns' is missing"),
    (lambda r: r.update(replaces={"series": 0, "t_ns": -1}), "'replaces'"),
])
def test_bad_trace_records_refused(change: Any, words: str) -> None:
    rec = _trace()
    change(rec)
    with pytest.raises(RecordError) as info:
        parse_record(json.dumps(rec), 7)
    message = str(info.value)
    assert message.startswith("line 7: ") and words in message and "\n" not in message


def test_a_record_that_replaces_another_takes_its_place() -> None:
    # the probe keeps the worst spikes traced: a larger spike's record names the one it
    # replaces, and the host keeps only the records that stand
    lines = FIXTURE.read_text().splitlines()
    first, second = (r for r in fixture_records() if r["type"] == "trace")
    bigger = dict(_trace(), t_ns=first["t_ns"] + 1, latency_ns=first["latency_ns"] + 1,
                  replaces={"series": second["series"], "t_ns": second["t_ns"]})
    at = next(i for i, line in enumerate(lines) if '"type":"trace_summary"' in line)
    out = ProbeOutput.from_lines([*lines[:at], json.dumps(bigger), *lines[at:]])
    assert [(t["t_ns"], t.get("replaces")) for t in out.traces] == [
        (first["t_ns"], None), (bigger["t_ns"], bigger["replaces"])]


def test_bad_trace_summary_refused() -> None:
    rec = next(r for r in fixture_records() if r["type"] == "trace_summary")
    for key, value in (("restored", "yes"), ("events_missing", [1]), ("spikes_over", -1)):
        bad = dict(rec, **{key: value})
        with pytest.raises(RecordError):
            parse_record(json.dumps(bad))


SUITE = """
[suite]
name = "t"
[defaults]
trace = "auto"
[[tests]]
test = "cyclic"
[[tests]]
test = "clock"
"""


def test_suite_trace_key_reaches_tracing_tests_only() -> None:
    suite = parse(SUITE)
    cyclic, clock = suite.tests
    assert cyclic.params["trace"] == "auto" and "trace" not in clock.params
    idle = suite.scenarios[0]
    args = cyclic.probe_args(idle, None)
    assert args[args.index("--trace") + 1] == "auto"
    assert "--trace" not in clock.probe_args(idle, None)


def test_suite_trace_key_checked() -> None:
    assert "must be one of auto, on, off" in str(error_of(SUITE.replace('"auto"', '"yes"')))
    refused = error_of(SUITE + 'trace = "on"\n')
    assert "tests[1].trace" in str(refused) and "clock takes no trace" in str(refused)
    reserved = error_of(SUITE.replace('test = "cyclic"', 'test = "cyclic"\n'
                                      'params = { trace = "on" }'))
    assert "`trace` key" in str(reserved)


def test_with_trace_overrides_the_suite_key() -> None:
    suite = parse(SUITE).with_trace("on")
    assert suite.tests[0].params["trace"] == "on" and "trace" not in suite.tests[1].params


@pytest.mark.parametrize("params, baud, want", [
    ({"trace": "on"}, 115200, ["--trace-budget", "11520"]),
    ({"trace": "auto"}, 9600, ["--trace-budget", "4096"]),
    ({"trace": "on"}, 3_000_000, ["--trace-budget", "65536"]),
    ({"trace": "on"}, None, []),
    ({}, 115200, []),
    ({"trace": "off"}, 115200, []),
    ({"trace": "on", "trace_budget": "8KiB"}, 115200, []),
])
def test_serial_trace_budget(params: dict[str, Any], baud: int | None,
                             want: list[str]) -> None:
    assert serial_trace_args(params, baud) == want


def test_run_trace_needs_a_tracing_test(run_cli: RunCli, tmp_path: Path) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text('[suite]\nname = "s"\n[[tests]]\ntest = "clock"\n')
    done = run_cli("run", str(suite), "--trace", "--simulate", "1", "--no-report",
                   "--db", f"sqlite:///{tmp_path / 'db.sqlite'}")
    assert done.returncode == 2
    assert "no test of suite s offers it" in done.stderr


def test_run_trace_auto_simulated_runs_untraced(run_cli: RunCli, tmp_path: Path) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text('[suite]\nname = "s"\n[defaults]\nduration = "1s"\nwarmup = "0s"\n'
                     '[[tests]]\ntest = "cyclic"\n')
    db = tmp_path / "db.sqlite"
    done = run_cli("run", str(suite), "--trace=auto", "--simulate", "1", "--no-report",
                   "--db", f"sqlite:///{db}")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as con:
        (command,) = con.execute("select command from measurements").fetchone()
    args = json.loads(command)
    assert args[args.index("--trace") + 1] == "auto"
