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
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from rtbench.bundle import MeasurementDetail, RunDetail, SeriesDetail
from rtbench.interop.base import Exporter
from rtbench.rtprobe.wire import loglin7
from rtbench.wire.histpairs import rows


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
                    threads[tid] = {
                        "histogram": _histogram(m, position, s, unit_ns),
                        "cycles": s.count,
                        "min": 0 if s.min_ns is None else s.min_ns // unit_ns,
                        "max": 0 if s.max_ns is None else -(-s.max_ns // unit_ns),
                        "avg": _avg(m, position, s, unit_ns),
                        "cpu": -1 if s.cpu is None else s.cpu, "node": 0}
                    names.append({"thread": tid, "scenario": sc.name, "test": m.name,
                                  "series": s.label})
        doc = {
            "file_version": 1,
            "cmdline:": " ".join(run.command_line) or f"rtbench run {run.suite}",
            "rt_test_version:": str(run.tool_versions.get("rtbench", "rtbench")),
            "start_time": run.started_at.strftime("%a, %d %b %Y %H:%M:%S %z"),
            "end_time": (run.finished_at or run.started_at).strftime(
                "%a, %d %b %Y %H:%M:%S %z"),
            "return_code": 1 if failed else 0,
            "sysinfo": {"sysname": "Linux", "nodename": run.hostname,
                        "release": run.kernel, "version": "", "machine": run.arch,
                        "realtime": 1 if "PREEMPT_RT" in json.dumps(run.sysinfo) else 0},
            "num_threads": len(threads), "resolution_in_ns": 1 if unit_ns == 1 else 0,
            "thread": threads,
            "rtbench_threads": names}
        return (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode()
