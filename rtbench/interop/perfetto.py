"""The traced spike windows of a run as Chrome trace-event JSON (Perfetto, chrome://tracing).

The JSON object format of the Trace Event Format: `{"traceEvents": [...]}`.  Each traced
spike is one process ("spike N: CELL, LAT us"); its CPU is a thread whose complete
events (`"ph": "X"`, times in microseconds) are the spike's attributed segments, with
the kernel events of its window as instant events (`"ph": "i"`) on a second thread.
Times are the trace's own (ns / 1000), so a spike's window lines up with its events.
"""

from __future__ import annotations

import json
from typing import Any

from rtbench.analysis.trace_causes import explain_run
from rtbench.analysis.trace_spike import SpikeExplanation
from rtbench.bundle import RunDetail
from rtbench.interop.base import Exporter, ExportFormatError


class PerfettoExporter(Exporter):
    """Chrome trace-event JSON of every traced spike window."""

    name = "perfetto"
    summary = "Chrome trace-event JSON of the traced spike windows (Perfetto, " \
              "chrome://tracing)"
    suffix = ".json"

    def export(self, run: RunDetail) -> bytes:
        """The run's traced spikes as one trace-event document."""
        events: list[dict[str, Any]] = []
        pid = 0
        for cell in explain_run(run):
            for spike in cell.spikes:
                pid += 1
                events.extend(_spike_events(pid, cell.name, spike))
        if not events:
            raise ExportFormatError(f"run {run.id}: no trace records to export; measure "
                                    "with --trace or import a trace")
        doc = {"traceEvents": events, "displayTimeUnit": "ns",
               "otherData": {"rtbench_run": run.id, "suite": run.suite,
                             "hostname": run.hostname}}
        return (json.dumps(doc, ensure_ascii=False, allow_nan=False) + "\n").encode()


def _spike_events(pid: int, cell: str, spike: SpikeExplanation) -> list[dict[str, Any]]:
    """Metadata, segments and kernel events of one spike as trace events."""
    latency = spike.latency_ns
    title = f"spike {pid}: {cell}" + (f", {latency / 1000:.1f} us" if latency else "")
    cpu = spike.cpu if spike.cpu is not None else 0
    base_ns = spike.expected_ns or 0
    out: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": title}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": 1,
         "args": {"name": f"CPU {cpu}: causes"}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": 2,
         "args": {"name": f"CPU {cpu}: kernel events"}},
    ]
    for seg in spike.segments:
        out.append({"ph": "X", "name": seg.cause.label, "cat": seg.cause.kind, "pid": pid,
                    "tid": 1, "ts": (base_ns + seg.start_ns) / 1000,
                    "dur": seg.duration_ns / 1000, "args": {"phase": seg.phase}})
    for ev in spike.events:
        out.append({"ph": "i", "s": "t", "name": ev.name, "cat": "kernel", "pid": pid,
                    "tid": 2, "ts": ev.ts_ns / 1000,
                    "args": {"comm": ev.comm, "pid": ev.pid, "text": ev.text}})
    return out
