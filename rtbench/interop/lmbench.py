"""lmbench result lines: lat_ctx tables, `X latency: V microseconds`, `X bandwidth: V MB/sec`.

lmbench prints one average per benchmark, not a distribution and not a count: each
latency line becomes a one-value series (the value lmbench printed: min = avg = max,
percentiles n/a); each lat_ctx table (`"size=Nk ovr=O` then `procs time` rows) a
measurement with a series per process count; bandwidths go to measurement data.
"""

from __future__ import annotations

import re
from typing import Any

from rtbench.bundle import MeasurementDetail, RunDetail
from rtbench.interop._build import (
    NUMBER,
    ToolSeries,
    number,
    tool_measurement,
    tool_run,
    unverifiable,
)
from rtbench.interop._lines import text_lines
from rtbench.interop.base import Importer, ImportFormatError

_LATENCY = re.compile(rf"^(.+?) latency:\s*({NUMBER}) microseconds\s*$")
_BANDWIDTH = re.compile(rf"^(.+?) bandwidth:\s*({NUMBER}) MB/sec\s*$")
_CTX_HEADER = re.compile(rf'^"size=(\d+)k ovr=({NUMBER})\s*$')
_CTX_ROW = re.compile(rf"^(\d+) ({NUMBER})\s*$")


def _slug(text: str) -> str:
    """lmbench's label as a measurement name."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "lmbench"


class LmbenchImporter(Importer):
    """lmbench's lat_ctx, lat_fifo, lat_pipe, lat_unix, bw_pipe output."""

    name = "lmbench"
    summary = "lmbench lat_ctx tables, '... latency: V microseconds', '... bandwidth: V MB/sec'"

    def detect(self, head: bytes, filename: str) -> bool:
        """An lmbench result line near the start."""
        text = head.decode("utf-8", "replace")
        return any(p.search(text) for p in (
            re.compile(r"^.+ latency: \S+ microseconds\s*$", re.M),
            re.compile(r"^.+ bandwidth: \S+ MB/sec\s*$", re.M),
            re.compile(r'^"size=\d+k ovr=', re.M)))

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run, a measurement per result line or lat_ctx table."""
        measurements: list[MeasurementDetail] = []
        ctx: dict[str, Any] | None = None
        ctx_rows: list[ToolSeries] = []

        def close_ctx() -> None:
            if ctx is not None and ctx_rows:
                measurements.append(tool_measurement(
                    name=f"lat_ctx-{ctx['size_kb']}k", test="ctx", series=list(ctx_rows),
                    where=filename, params=dict(ctx), summary_only=True,
                    data={"unit": "us", "meaning": "lmbench's time per context switch"}))

        for lineno, raw in enumerate(text_lines(data, filename), 1):
            line = raw.strip()
            where = f"{filename}: line {lineno}"
            if m := _CTX_HEADER.match(line):
                close_ctx()
                ctx = {"size_kb": int(m.group(1)), "overhead_us": number(m.group(2), where)}
                ctx_rows = []
            elif ctx is not None and (m := _CTX_ROW.match(line)):
                us = number(m.group(2), where)
                ctx_rows.append(ToolSeries(label=f"procs={m.group(1)}", cpu=None, count=1,
                                           min_ns=us * 1000, max_ns=us * 1000,
                                           avg_ns=us * 1000))
            elif m := _LATENCY.match(line):
                us = number(m.group(2), where)
                measurements.append(tool_measurement(
                    name=_slug(m.group(1) + " latency"), test="lmbench", where=where,
                    summary_only=True,
                    series=[ToolSeries(label=m.group(1), cpu=None, count=1, min_ns=us * 1000,
                                       max_ns=us * 1000, avg_ns=us * 1000)],
                    data={"unit": "us", "meaning": "lmbench's average per operation"}))
            elif m := _BANDWIDTH.match(line):
                measurements.append(tool_measurement(
                    name=_slug(m.group(1) + " bandwidth"), test="lmbench", series=[], where=where,
                    summary_only=True,
                    data={"bandwidth_mb_s": number(m.group(2), where), "label": m.group(1)}))
        close_ctx()
        if not measurements:
            raise ImportFormatError(f"{filename}: no lmbench result lines")
        runs = [tool_run(tool="lmbench", tool_version="", command_line=None, fmt=self.name,
                         measurements=measurements)]
        return unverifiable(runs, filename, "lmbench prints one whole result a line, with no "
                            "count and no closing line (a cut reads as fewer results)")
