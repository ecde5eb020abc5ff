"""rt-tests JSON: the file `cyclictest --json` writes, so its readers read rtbench runs.

Every series of every cell becomes a "thread" (numbered in order; "rtbench_threads"
says which cell and series each one is, and readers ignore keys they do not know).
A run measured in nanoseconds (every rtprobe run, and imports of `cyclictest -N`) is
written as `cyclictest -N` writes it: `resolution_in_ns: 1`, min, max and avg in ns,
the histogram in ns.  A run imported from a microsecond tool keeps microseconds
(`resolution_in_ns: 0`).  avg is the tool's own printed average when the run was
imported, else the exact mean with two decimals.  The histogram is the tool's own when
the run was imported from one in the same unit, else our loglin7 buckets at their lower
edges in that unit (counts exact; a bucket wider than one unit is given at its lower
edge).

This module is the one writer of the layout: `rtbench cyclictest --json` writes its file
through thread_entry(), document() and document_text() too, from its own samples.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from typing import Any

from rtbench.bundle import MeasurementDetail, RunDetail, SeriesDetail
from rtbench.interop.base import Exporter
from rtbench.rtprobe.wire import loglin7
from rtbench.wire.histpairs import rows

# how cyclictest writes a time in its JSON
TIME_FORMAT = "%a, %d %b %Y %H:%M:%S %z"


def thread_entry(histogram: dict[str, int], cycles: int, min_value: int, max_value: int,
                 avg: float, cpu: int) -> dict[str, Any]:
    """One "thread" of the document, in the unit of the document (keys in cyclictest's
    order; cpu -1 when unknown)."""
    return {"histogram": histogram, "cycles": cycles, "min": min_value, "max": max_value,
            "avg": avg, "cpu": cpu, "node": 0}


def document(*, cmdline: str, version: str, started: datetime, ended: datetime,
             return_code: int, uname: dict[str, Any], realtime: bool,
             threads: dict[str, Any], nanoseconds: bool) -> dict[str, Any]:
    """The --json document as cyclictest 2.x writes it (keys ending in a colon included);
    uname: sysname, nodename, release, version and machine (sysname Linux when unknown)."""
    return {"file_version": 1, "cmdline:": cmdline, "rt_test_version:": version,
            "start_time": started.strftime(TIME_FORMAT),
            "end_time": ended.strftime(TIME_FORMAT),
            "return_code": return_code,
            "sysinfo": {"sysname": uname.get("sysname", "Linux"),
                        "nodename": uname.get("nodename", ""),
                        "release": uname.get("release", ""),
                        "version": uname.get("version", ""),
                        "machine": uname.get("machine", ""),
                        "realtime": 1 if realtime else 0},
            "num_threads": len(threads), "resolution_in_ns": 1 if nanoseconds else 0,
            "thread": threads}


def document_text(doc: dict[str, Any]) -> str:
    """The document as its file holds it."""
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def _histogram(m: MeasurementDetail, position: int, s: SeriesDetail,
               unit_ns: int) -> dict[str, int]:
    """Bucket (in unit_ns) -> count for one series."""
    tool = m.data.get("tool_hist")
    kept = rows(tool[position]) if isinstance(tool, list) and position < len(tool) else None
    if kept is not None and m.data.get("tool_hist_unit_ns") == unit_ns:
        return {str(int(v)): int(c) for v, c in kept if c}
    folded: Counter[int] = Counter()
    for index, count in s.hist:
        folded[int(loglin7.lower([index])[0]) // unit_ns] += count
    return {str(k): v for k, v in sorted(folded.items())}


def microsecond_run(run: RunDetail) -> bool:
    """Whether every measurement came from a tool that printed whole microseconds."""
    ms = [m for sc in run.scenarios for m in sc.measurements if m.series]
    return bool(ms) and all(m.data.get("unit") == "us"
                            or m.data.get("tool_hist_unit_ns") == 1000 for m in ms)


def _avg(m: MeasurementDetail, position: int, s: SeriesDetail, unit_ns: int) -> float:
    """The series' average in unit_ns: the tool's printed one when imported."""
    tool = m.data.get("tool_avg_ns")
    if isinstance(tool, list) and position < len(tool) \
            and isinstance(tool[position], (int, float)) \
            and not isinstance(tool[position], bool):
        return round(float(tool[position]) / unit_ns, 2)
    return round(s.sum_ns / s.count / unit_ns, 2) if s.count else 0.0


class RtTestsJsonExporter(Exporter):
    """cyclictest --json layout."""

    name = "rt-tests-json"
    summary = "rt-tests (cyclictest --json) JSON, read by Linaro's test-definitions parsers"
    suffix = ".json"

    def export(self, run: RunDetail) -> bytes:
        """The run in cyclictest's JSON layout."""
        unit_ns = 1000 if microsecond_run(run) else 1
        threads: dict[str, Any] = {}
        names = []
        failed = False
        for sc in run.scenarios:
            for m in sc.measurements:
                failed = failed or m.status != "ok"
                for position, s in enumerate(m.series):
                    tid = str(len(threads))
                    threads[tid] = thread_entry(
                        _histogram(m, position, s, unit_ns), s.count,
                        0 if s.min_ns is None else s.min_ns // unit_ns,
                        0 if s.max_ns is None else -(-s.max_ns // unit_ns),
                        _avg(m, position, s, unit_ns), -1 if s.cpu is None else s.cpu)
                    names.append({"thread": tid, "scenario": sc.name, "test": m.name,
                                  "series": s.label})
        doc = document(
            cmdline=" ".join(run.command_line) or f"rtbench run {run.suite}",
            version=str(run.tool_versions.get("rtbench", "rtbench")),
            started=run.started_at, ended=run.finished_at or run.started_at,
            return_code=1 if failed else 0,
            uname={"sysname": "Linux", "nodename": run.hostname, "release": run.kernel,
                   "version": "", "machine": run.arch},
            realtime="PREEMPT_RT" in json.dumps(run.sysinfo), threads=threads,
            nanoseconds=unit_ns == 1)
        doc["rtbench_threads"] = names
        return document_text(doc).encode()
