"""lmbench result lines: lat_ctx tables, `X latency: V microseconds`, `X bandwidth: V MB/sec`.

lmbench prints one average per benchmark, not a distribution and not a count: the
latency lines of one benchmark (one label) become one measurement with a series of the
values lmbench printed (count = how many lines, min, max and their mean; percentiles
n/a), a single line a one-value series (min = avg = max); a benchmark printed more than
once (a script that runs it again and again) keeps every value, in the file's order, in
data["tool_values_us"] (one float64 array while importing: 8 bytes a line, not a
measurement of several hundred bytes, issue 36).  Bandwidth lines of one label likewise
become one measurement whose data holds the value (`bandwidth_mb_s`; their mean when
printed more than once, with every value in `tool_values_mb_s`).  Each lat_ctx table
(`"size=Nk ovr=O` then `procs time` rows) is a measurement with a series per process
count.  Measurements are in the order of each benchmark's first line.
"""

from __future__ import annotations

import re
from array import array
from typing import Any

import numpy as np

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
from rtbench.wire.histpairs import Floats

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
        """One run, a measurement per benchmark (its result lines) or lat_ctx table."""
        # in the order of each benchmark's first line: a lat_ctx measurement, or the key
        # of a benchmark's values (("latency"|"bandwidth", label))
        slots: list[MeasurementDetail | tuple[str, str]] = []
        values: dict[tuple[str, str], array[float]] = {}
        first_line: dict[tuple[str, str], int] = {}
        ctx: dict[str, Any] | None = None
        ctx_rows: list[ToolSeries] = []

        def close_ctx() -> None:
            if ctx is not None and ctx_rows:
                slots.append(tool_measurement(
                    name=f"lat_ctx-{ctx['size_kb']}k", test="ctx", series=list(ctx_rows),
                    where=filename, params=dict(ctx), summary_only=True,
                    data={"unit": "us", "meaning": "lmbench's time per context switch"}))

        def add(kind: str, label: str, text: str, lineno: int) -> None:
            key = (kind, label)
            if key not in values:
                values[key] = array("d")
                first_line[key] = lineno
                slots.append(key)
            values[key].append(number(text, f"{filename}: line {lineno}"))

        for lineno, raw in enumerate(text_lines(data, filename), 1):
            line = raw.strip()
            if m := _CTX_HEADER.match(line):
                close_ctx()
                where = f"{filename}: line {lineno}"
                ctx = {"size_kb": int(m.group(1)), "overhead_us": number(m.group(2), where)}
                ctx_rows = []
            elif ctx is not None and (m := _CTX_ROW.match(line)):
                us = number(m.group(2), f"{filename}: line {lineno}")
                ctx_rows.append(ToolSeries(label=f"procs={m.group(1)}", cpu=None, count=1,
                                           min_ns=us * 1000, max_ns=us * 1000,
                                           avg_ns=us * 1000))
            elif m := _LATENCY.match(line):
                add("latency", m.group(1), m.group(2), lineno)
            elif m := _BANDWIDTH.match(line):
                add("bandwidth", m.group(1), m.group(2), lineno)
        close_ctx()
        if not slots:
            raise ImportFormatError(f"{filename}: no lmbench result lines")
        measurements = [slot if isinstance(slot, MeasurementDetail) else
                        _benchmark(slot, values.pop(slot), f"{filename}: line "
                                   f"{first_line[slot]}") for slot in slots]
        runs = [tool_run(tool="lmbench", tool_version="", command_line=None, fmt=self.name,
                         measurements=measurements)]
        return unverifiable(runs, filename, "lmbench prints one whole result a line, with no "
                            "count and no closing line (a cut reads as fewer results)")


def _benchmark(key: tuple[str, str], printed: array[float], where: str
               ) -> MeasurementDetail:
    """The measurement of one benchmark's result lines (values in us or MB/s)."""
    kind, label = key
    column = np.frombuffer(printed, dtype=np.float64) if len(printed) > 1 else None
    if kind == "bandwidth":
        data: dict[str, Any] = {"bandwidth_mb_s": printed[0], "label": label}
        if column is not None:
            data["bandwidth_mb_s"] = float(column.mean())
            data["tool_values_mb_s"] = Floats(column)
            data["meaning"] = "the mean of the bandwidths lmbench printed, one a line"
        return tool_measurement(name=_slug(label + " bandwidth"), test="lmbench", series=[],
                                where=where, summary_only=True, data=data)
    data = {"unit": "us", "meaning": "lmbench's average per operation"}
    if column is None:
        series = ToolSeries(label=label, cpu=None, count=1, min_ns=printed[0] * 1000,
                            max_ns=printed[0] * 1000, avg_ns=printed[0] * 1000)
    else:
        data["meaning"] = ("lmbench's average per operation, printed once a line: the "
                           "series holds how many lines, their min, max and mean")
        data["tool_values_us"] = Floats(column)
        series = ToolSeries(label=label, cpu=None, count=len(column),
                            min_ns=float(column.min()) * 1000,
                            max_ns=float(column.max()) * 1000,
                            avg_ns=float(column.mean()) * 1000)
    return tool_measurement(name=_slug(label + " latency"), test="lmbench", where=where,
                            summary_only=True, series=[series], data=data)
