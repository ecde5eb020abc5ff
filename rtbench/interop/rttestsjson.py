"""rt-tests JSON: the file `cyclictest --json` writes, so its readers read rtbench runs.

Every series of every cell becomes a "thread" (numbered in order; "rtbench_threads"
says which cell and series each one is, and readers ignore keys they do not know).
min and max are whole microseconds as cyclictest writes them (rounded up for max,
down for min, so no bound gets better than measured); avg has two decimals.  The
histogram is the tool's own when the run was imported from one in microseconds,
else our loglin7 buckets folded to whole microseconds (counts exact; a bucket wider
than 1 us is given at its lower edge).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from rtbench.bundle import MeasurementDetail, RunDetail, SeriesDetail
from rtbench.interop.base import Exporter
from rtbench.rtprobe import loglin7


def _histogram(m: MeasurementDetail, position: int, s: SeriesDetail) -> dict[str, int]:
    """Bucket (us) -> count for one series."""
    tool = m.data.get("tool_hist")
    if isinstance(tool, list) and position < len(tool) and tool[position] is not None \
            and m.data.get("tool_hist_unit_ns") == 1000:
        return {str(int(v)): int(c) for v, c in tool[position] if c}
    folded: Counter[int] = Counter()
    for index, count in s.hist:
        folded[int(loglin7.lower([index])[0]) // 1000] += count
    return {str(k): v for k, v in sorted(folded.items())}


class RtTestsJsonExporter(Exporter):
    """cyclictest --json layout."""

    name = "rt-tests-json"
    summary = "rt-tests (cyclictest --json) JSON, read by Linaro's test-definitions parsers"
    suffix = ".json"

    def export(self, run: RunDetail) -> bytes:
        """The run in cyclictest's JSON layout."""
        threads: dict[str, Any] = {}
        names = []
        failed = False
        for sc in run.scenarios:
            for m in sc.measurements:
                failed = failed or m.status != "ok"
                for position, s in enumerate(m.series):
                    tid = str(len(threads))
                    avg = s.sum_ns / s.count / 1000 if s.count else 0.0
                    threads[tid] = {
                        "histogram": _histogram(m, position, s),
                        "cycles": s.count,
                        "min": 0 if s.min_ns is None else s.min_ns // 1000,
                        "max": 0 if s.max_ns is None else -(-s.max_ns // 1000),
                        "avg": round(avg, 2),
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
            "num_threads": len(threads), "resolution_in_ns": 0, "thread": threads,
            "rtbench_threads": names}
        return (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode()
