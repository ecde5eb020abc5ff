"""Traces through the store, the rtbench-run/1 bundle, the trace importers (rtla
timerlat -a, trace-cmd report) and the Perfetto export (issue 23)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from explain_helpers import cli, synthetic_measurement, synthetic_run

from rtbench.analysis.trace_causes import explain_measurement
from rtbench.interop.base import ExportFormatError, ImportFormatError, IncompleteOutput, importers
from rtbench.interop.perfetto import PerfettoExporter
from rtbench.interop.runjson import dumps, loads, run_to_json
from rtbench.interop.timerlat_auto import TimerlatAutoImporter
from rtbench.interop.tracecmd import TraceCmdImporter
from rtbench.store import Store

DATA = Path(__file__).parent / "data"
OLD = json.loads((DATA / "trace" / "old-kernel-traces.json").read_text())


def _traced_run():  # type: ignore[no-untyped-def]
    """A synthetic run whose one measurement carries the older-kernel traces."""
    m = synthetic_measurement([np.full(100, 20_000, dtype=np.int64)])
    m.traces = copy.deepcopy(OLD["traces"])
    m.trace_info = copy.deepcopy(OLD["trace_info"])
    return synthetic_run([m])


def test_store_keeps_traces_and_trace_info(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        run = _traced_run()
        run.uid = "t1"
        run_id, _ = store.add_bundle(run)
        back = store.get_run(run_id).scenarios[0].measurements[0]
        assert back.traces == OLD["traces"] and back.trace_info == OLD["trace_info"]
        plain = synthetic_run([synthetic_measurement([np.full(5, 1, dtype=np.int64)])])
        plain.uid = "t2"
        m = store.get_run(store.add_bundle(plain)[0]).scenarios[0].measurements[0]
        assert m.traces == [] and m.trace_info is None


def test_bundle_json_carries_traces_and_old_bundles_load() -> None:
    run = _traced_run()
    back = loads(dumps(run)).scenarios[0].measurements[0]
    assert back.traces == OLD["traces"] and back.trace_info == OLD["trace_info"]
    doc = run_to_json(run)
    for m in doc["scenarios"][0]["measurements"]:
        del m["traces"], m["trace_info"]  # as written before issue 23
    old = loads(json.dumps(doc)).scenarios[0].measurements[0]
    assert old.traces == [] and old.trace_info is None
    doc["scenarios"][0]["measurements"][0]["traces"] = [{"series": "zero"}]
    with pytest.raises(ImportFormatError, match=r"traces\[0\]\.series"):
        loads(json.dumps(doc))


def test_rtla_auto_analysis_thread_latency_maps_to_causes() -> None:
    data = (DATA / "interop" / "rtla-timerlat-auto-thread.txt").read_bytes()
    assert [n for n, i in importers().items() if i.detect(data[:4096], "x")] == [
        "rtla-timerlat-auto"]
    (m,) = TimerlatAutoImporter().read(data, "aa.txt")[0].scenarios[0].measurements
    (record,) = m.traces
    assert (record["cpu"], record["latency_ns"], record["context"]) == (1, 125_000, "thread")
    cell = explain_measurement("imported/timerlat-auto-analysis", m)
    assert [(r.cause.label, r.total_ns) for r in cell.causes] == [
        ("IRQ 24 eth0", 70_100), ("softirq NET_RX", 30_400), ("kworker/1:2 (pid 311)", 8_250),
        ("ksoftirqd/1 (pid 22)", 5_000), ("timer IRQ (timerlat handler)", 4_500),
        ("unexplained", 3_450),
        ("timer IRQ late: hardware/hypervisor or IRQs off (rtla does not tell)", 2_100),
        ("IRQ 236 local_timer", 1_200)]
    assert cell.causes[0].spikes_main == 1


def test_rtla_auto_analysis_with_top_table() -> None:
    data = (DATA / "interop" / "rtla-timerlat-auto.txt").read_bytes()
    irq, thread, aa = TimerlatAutoImporter().read(data, "aa.txt")[0].scenarios[0].measurements
    assert len(thread.series) == 23 and thread.series[22].max_ns == 41_000
    (record,) = aa.traces
    assert record["latency_ns"] == 41_960 and record["analysis"]["stack"][1] == "timerlat_irq"
    parts = [(p["kind"], p["ns"]) for p in record["analysis"]["parts"]]
    assert parts == [("irq_late", 27_490), ("timer_irq", 9_590), ("thread", 3_790)]
    assert record["analysis"]["parts"][2]["label"] == "objtool (pid 49256)"


@pytest.mark.parametrize("mangle, message", [
    (lambda t: t.replace("  Timerlat IRQ duration:", "  Banana:"), r"aa.txt: line \d+: "),
    (lambda t: t.replace("eth0:24 ", "eth0:24 x"), r"aa.txt: line \d+: "),
    (lambda t: t.replace("70.10 us", "1e99 us"), r"aa.txt: line \d+"),
    (lambda t: "no analysis here\n", r"aa.txt: no auto-analysis"),
])
def test_rtla_auto_analysis_bad_input_is_one_line(mangle, message) -> None:  # type: ignore[no-untyped-def]
    text = (DATA / "interop" / "rtla-timerlat-auto-thread.txt").read_text()
    with pytest.raises(ImportFormatError, match=message) as err:
        TimerlatAutoImporter().read(mangle(text).encode(), "aa.txt")
    assert "\n" not in str(err.value)


def test_rtla_auto_analysis_cut_short_is_incomplete() -> None:
    text = (DATA / "interop" / "rtla-timerlat-auto-thread.txt").read_text()
    cut = text[:text.index("-----")]
    with pytest.raises(IncompleteOutput, match="closing the analysis of CPU 1"):
        TimerlatAutoImporter().read(cut.encode(), "aa.txt")


def test_trace_cmd_bad_lines_name_file_and_line() -> None:
    text = (DATA / "interop" / "trace-cmd-report.txt").read_text().splitlines()
    bad = [*text[:20], "this is not a trace line", *text[20:]]
    with pytest.raises(ImportFormatError, match=r"^r\.txt: line 21: not a trace line"):
        TraceCmdImporter().read(("\n".join(bad) + "\n").encode(), "r.txt")
    only_irq = "\n".join(ln for ln in text if "hrtimer" not in ln and "sched" not in ln)
    with pytest.raises(ImportFormatError, match="no thread woken by its own timer"):
        TraceCmdImporter().read((only_irq + "\n").encode(), "r.txt")


def test_trace_cmd_without_switches_out_of_idle_uses_the_threads_first_event() -> None:
    # some kernels (this VM's) do not trace the switch out of the idle task: the thread's
    # wake-ups still count, each run from the first event it emits itself, a little later
    text = (DATA / "interop" / "trace-cmd-report.txt").read_text()
    (whole,) = TraceCmdImporter().read(text.encode(), "r.txt")
    m = whole.scenarios[0].measurements[0]
    comm, pid = m.data["measured_thread"].rsplit(":", 1)
    switch_in = f"next_comm={comm} next_pid={pid} "
    kept = [ln for ln in text.splitlines() if switch_in not in ln]
    assert len(kept) < len(text.splitlines())
    (cut,) = TraceCmdImporter().read(("\n".join(kept) + "\n").encode(), "r.txt")
    n = cut.scenarios[0].measurements[0]
    assert n.data["measured_thread"] == m.data["measured_thread"]
    assert m.data["switch_in_untraced"] == 0 and n.data["switch_in_untraced"] > 0
    (before,), (after,) = m.series, n.series
    assert after.count == before.count
    assert after.min_ns is not None and before.min_ns is not None
    assert after.min_ns >= before.min_ns and (after.max_ns or 0) >= (before.max_ns or 0)


def test_import_then_explain_and_garbage_exit_2(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'i.db'}"
    seed = DATA / "interop" / "trace-cmd-report.txt"
    done = cli("import", str(seed), "--db", db)
    assert done.exit_code == 0, done.output
    explained = cli("explain", "latest", "--db", db)
    assert "python3 (pid 10570, RT 95): main cause of 100 % of traced spikes" \
        in explained.output
    bad = tmp_path / "bad.txt"
    bad.write_text(seed.read_text().replace("sched_switch: prev_comm", "@@@ garbage", 1))
    from click.testing import CliRunner

    from rtbench.cli import main

    res = CliRunner().invoke(main, ["import", str(bad), "--format", "trace-cmd", "--db", db])
    assert res.exit_code == 2 and "bad.txt: line" in res.output
    assert "Traceback" not in res.output


def test_perfetto_export_is_valid_trace_event_json() -> None:
    run = _traced_run()
    doc = json.loads(PerfettoExporter().export(run))
    events = doc["traceEvents"]
    assert {e["ph"] for e in events} == {"M", "X", "i"}
    for e in events:
        assert {"ph", "name", "pid", "tid"} <= set(e)
        if e["ph"] in ("X", "i"):
            assert isinstance(e["ts"], (int, float))
        if e["ph"] == "X":
            assert e["dur"] > 0 and e["cat"]
    complete = [e for e in events if e["ph"] == "X" and e["pid"] == 1]
    assert complete[0]["ts"] == 1000.0 and complete[0]["dur"] == 60.0  # 1 ms, 60 us
    assert sum(e["dur"] for e in complete) == pytest.approx(412.0)
    with pytest.raises(ExportFormatError, match="no trace records"):
        PerfettoExporter().export(synthetic_run([synthetic_measurement(
            [np.full(5, 1, dtype=np.int64)])]))


def test_report_has_a_why_section_with_escaped_names() -> None:
    from rtbench.report.html import render_html

    run = _traced_run()
    events = run.scenarios[0].measurements[0].traces[0]["events"]
    for e in events:  # a board's thread name is data, never markup
        e[5] = e[5].replace("dd:540", "<b>$dd$</b>:540")
    html = render_html(run)
    assert 'id="why"' in html and "softirq NET_RX" in html
    assert "&lt;b&gt;$dd$&lt;/b&gt; (pid 540, nice 0)" in html and "<b>$dd$" not in html
    assert html.count("<svg") >= 2  # the histogram and the spike time lines
    plain = synthetic_run([synthetic_measurement([np.full(5, 1, dtype=np.int64)])])
    assert 'id="why"' not in render_html(plain)


def test_upload_keeps_traces_and_the_run_page_shows_why(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from rtbench.server.app import create_app
    from rtbench.store.tokens import create_token

    store = Store.open(f"sqlite:///{tmp_path / 'srv.db'}")
    token = create_token(store, "test")
    run = _traced_run()
    run.uid = "traced-upload"
    with TestClient(create_app(store=store), raise_server_exceptions=False) as client:
        done = client.post("/api/v1/runs", content=dumps(run),
                           headers={"Authorization": f"Bearer {token}"})
        assert done.status_code in (200, 201), done.text
        run_id = done.json()["id"]
        assert store.get_run(run_id).scenarios[0].measurements[0].traces == OLD["traces"]
        page = client.get(f"/runs/{run_id}")
        assert page.status_code == 200 and 'id="why"' in page.text
    store.close()


def test_ndjson_lists_trace_records_on_lines_of_their_own() -> None:
    from rtbench.interop.ndjson import NdjsonExporter

    lines = [json.loads(ln) for ln in NdjsonExporter().export(_traced_run()).splitlines()]
    kinds = [ln["type"] for ln in lines]
    assert kinds.count("trace") == 2 and kinds.count("trace_summary") == 1
    measurement = next(ln for ln in lines if ln["type"] == "measurement")
    assert "traces" not in measurement and "trace_info" not in measurement
    assert next(ln for ln in lines if ln["type"] == "trace")["latency_ns"] == 412_000
