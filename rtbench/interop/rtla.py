"""rtla (kernel tools/tracing/rtla): `timerlat hist`, `osnoise hist` and the `top` summaries.

hist: one column per CPU and context (IRQ-/Thr-/Usr- for timerlat, CPU- for osnoise),
rows "index count..." (index = the bucket's lower edge in the printed time unit),
then over:/count:/min:/avg:/max: rows.  Each context becomes a measurement
(timerlat-irq, timerlat-thread, timerlat-user, osnoise) with a series per CPU;
`over` samples are beyond the last bucket.  top: per-CPU summaries only (no
distribution): timerlat's IRQ and thread cur/min/avg/max, osnoise's noise counters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rtbench.bundle import MeasurementDetail, RunDetail
from rtbench.interop._build import (
    ToolSeries,
    check_count,
    complete,
    number,
    tool_measurement,
    tool_run,
    unverifiable,
)
from rtbench.interop._lines import check_text, lines
from rtbench.interop.base import Importer, ImportFormatError
from rtbench.wire.histpairs import IntColumn, Pairs

_CONTEXT = {"IRQ": "timerlat-irq", "Thr": "timerlat-thread", "Usr": "timerlat-user",
            "CPU": "osnoise"}
_COLUMN = re.compile(r"^(IRQ|Thr|Usr|CPU)-(\d+)$")


class RtlaHistImporter(Importer):
    """rtla timerlat hist / osnoise hist text."""

    name = "rtla-hist"
    summary = "rtla timerlat hist / osnoise hist text (per-CPU histograms)"

    def detect(self, head: bytes, filename: str) -> bool:
        """rtla's histogram banner."""
        return re.search(rb"^\s*# RTLA (timerlat|osnoise) histogram", head, re.M) is not None

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run, a measurement per context."""
        check_text(data, filename)
        kind = "timerlat" if b"# RTLA timerlat histogram" in data else "osnoise"
        unit_ns = 1 if b"# Time unit is nanoseconds" in data else 1000
        columns: list[tuple[str, int]] = []
        # the rows as columns: each row's index, then each column's counts
        indexes = IntColumn()
        counts_of: list[IntColumn] = []
        summary: dict[str, list[str]] = {}
        duration = ""
        for lineno, raw in enumerate(lines(data), 1):
            line = raw.strip()
            where = f"{filename}: line {lineno}"
            if line.startswith("# Duration:"):
                duration = line.split(":", 1)[1].strip()
            elif line.startswith("Index"):
                for name in line.split()[1:]:
                    match = _COLUMN.match(name)
                    if not match:
                        raise ImportFormatError(f"{where}: column {name!r} is not rtla's")
                    columns.append((match.group(1), int(match.group(2))))
            elif line.startswith("ALL:"):
                break  # newer rtla: the all-CPU summary repeats the per-CPU numbers
            elif columns and re.match(r"^(over|count|min|avg|max):", line):
                key, _, rest = line.partition(":")
                summary[key] = rest.split()
            elif columns and re.match(r"^\d+(\s+\d+)+$", line):
                values = [int(v) for v in line.split()]
                if len(values) != len(columns) + 1:
                    raise ImportFormatError(f"{where}: {len(values) - 1} counts for "
                                            f"{len(columns)} columns")
                if not counts_of:
                    counts_of = [IntColumn() for _ in columns]
                indexes.append(values[0])
                for column, value in zip(counts_of, values[1:], strict=True):
                    column.append(value)
        if not columns or "count" not in summary:
            raise ImportFormatError(f"{filename}: no rtla histogram (Index and count: rows)")
        for key, texts in summary.items():
            if len(texts) != len(columns):
                raise ImportFormatError(f"{filename}: '{key}:' has {len(texts)} values "
                                        f"for {len(columns)} columns")
        index_values = indexes.array()
        step = int(index_values[1]) - int(index_values[0]) if len(index_values) > 1 else 1
        by_context: dict[str, list[ToolSeries]] = {}
        for i, (context, cpu) in enumerate(columns):
            count = check_count(number(summary["count"][i], f"{filename}: count"),
                                f"{filename}: count")
            over = int(number(summary.get("over", ["0"] * len(columns))[i],
                              f"{filename}: over"))

            def figure(key: str, i: int = i, count: int = count) -> float | None:
                values = summary.get(key)
                if values is None or not count or values[i] in ("-", "nan"):
                    return None
                return number(values[i], f"{filename}: {key}") * unit_ns

            hist = Pairs(index_values, counts_of[i].array() if counts_of
                         else np.zeros(0, dtype=np.int64))
            by_context.setdefault(context, []).append(ToolSeries(
                label=f"cpu{cpu}", cpu=cpu, count=count, min_ns=figure("min"),
                max_ns=figure("max"), avg_ns=figure("avg"), hist=hist, hist_unit_ns=unit_ns,
                overflow=over,
                overflow_at=(int(index_values[-1]) + step) if len(index_values) else 0))
        measurements = [tool_measurement(
            name=_CONTEXT[context], test="timerlat" if kind == "timerlat" else "noise",
            series=series, where=f"{filename} {context}",
            data={"unit": "ns" if unit_ns == 1 else "us", "duration": duration,
                  "bucket_step": step})
            for context, series in by_context.items()]
        closing = [key for key in ("min", "avg", "max") if key not in summary]
        runs = [tool_run(tool="rtla", tool_version="", command_line=None, fmt=self.name,
                         measurements=measurements)]
        return complete(runs, filename, data, f"no '{closing[0]}:' line after 'count:'"
                        if closing else "")


_TIMERLAT_TOP = re.compile(r"^\s*(\d+)\s+#(\d+)\s*\|\s*([\d\s-]+?)\s*\|\s*([\d\s-]+?)\s*"
                           r"(?:\|\s*([\d\s-]+?)\s*)?$")


_TOP_ROW = re.compile(r"^\s*(\d+)\s+#(\d+)\s")
_TOP_ALL = re.compile(r"^\s*ALL\s+#(\d+)\s+e(\d+)\s*\|")


@dataclass
class _Screen:
    """One screen of rtla top: each CPU's count, and timerlat's `ALL #N eE` line."""

    counts: dict[int, int] = field(default_factory=dict)
    all_count: tuple[int, int] | None = None  # (N, E): the CPUs' sum is N * 10**E


def _screens(data: bytes) -> list[_Screen]:
    """The last two screens of an rtla top output, in order (all a check needs)."""
    screens: list[_Screen] = []
    for line in lines(data):
        if line.strip().startswith(("CPU COUNT", "CPU Period")):
            screens = [*screens[-1:], _Screen()]
        elif screens and (row := _TOP_ROW.match(line)):
            screens[-1].counts[int(row.group(1))] = int(row.group(2))
        elif screens and (total := _TOP_ALL.match(line)):
            screens[-1].all_count = (int(total.group(1)), int(total.group(2)))
    return screens


def _top_missing(screens: list[_Screen]) -> str:
    """What a cut output lacks: a last screen with fewer CPUs than the one before, or an
    `ALL` line whose count is not the sum of the CPU rows above it ("" when neither)."""
    if len(screens) > 1 and len(screens[-1].counts) < len(screens[-2].counts):
        return (f"the last screen lists {len(screens[-1].counts)} CPUs, the one before "
                f"{len(screens[-2].counts)}")
    if screens and screens[-1].all_count is not None:
        printed, exponent = screens[-1].all_count
        total = sum(screens[-1].counts.values())
        # rtla divides by ten until the count has six digits: e is small (a huge one
        # would only cost time to compute)
        if exponent > 40 or total // 10**exponent != printed:
            return (f"the CPU rows of the last screen count {total}, its 'ALL' line "
                    f"{printed}e{exponent}")
    return ""


class RtlaTopImporter(Importer):
    """rtla timerlat top / osnoise top summaries (the last screen of each CPU)."""

    name = "rtla-top"
    summary = "rtla timerlat top / osnoise top summary (per CPU; summary only)"

    def detect(self, head: bytes, filename: str) -> bool:
        """The top headers (not with an auto-analysis: rtla-timerlat-auto reads that)."""
        if re.search(rb"^## CPU \d+ hit stop tracing", head, re.M) or \
                b"rtla timerlat hit stop tracing" in head:
            return False
        return (b"Timer Latency" in head and b"CPU COUNT" in head) or \
            (b"Operating System Noise" in head and b"% CPU Aval" in head)

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run: timerlat's IRQ and thread (and user) measurements, or osnoise's."""
        check_text(data, filename)
        screens = _screens(data)
        if b"CPU COUNT" in data:
            runs = complete([self._timerlat(data, filename)], filename, data,
                            _top_missing(screens))
            if screens and screens[-1].all_count is not None:
                return runs  # the ALL line counts every CPU row above it
            return unverifiable(runs, filename, "timerlat top printed no 'ALL' line (rtla "
                                "before it had one) to count its CPU rows against")
        runs = complete([self._osnoise(data, filename)], filename, data,
                        _top_missing(screens))
        return unverifiable(runs, filename, "osnoise top prints neither the number of CPUs "
                            "nor a closing line (a cut reads as fewer CPUs)")

    def _timerlat(self, data: bytes, filename: str) -> RunDetail:
        """timerlat top: per CPU, COUNT and cur/min/avg/max per context."""
        unit_ns = 1 if b"Latency (ns)" in data else 1000
        last: dict[int, tuple[int, list[list[str]]]] = {}
        for line in lines(data):
            match = _TIMERLAT_TOP.match(line)
            if match:
                blocks = [g.split() for g in match.groups()[2:] if g is not None]
                if any(len(b) != 4 for b in blocks):
                    raise ImportFormatError(f"{filename}: a CPU line without cur/min/avg/max")
                last[int(match.group(1))] = (int(match.group(2)), blocks)
        if not last:
            raise ImportFormatError(f"{filename}: no timerlat top CPU lines")
        names = ["timerlat-irq", "timerlat-thread", "timerlat-user"]
        measurements: list[MeasurementDetail] = []
        for position in range(max(len(v[1]) for v in last.values())):
            series = []
            for cpu, (count, blocks) in sorted(last.items()):
                if position >= len(blocks):
                    continue
                _cur, lo, avg, hi = (number(v, f"{filename}: cpu {cpu}")
                                     for v in blocks[position])
                series.append(ToolSeries(label=f"cpu{cpu}", cpu=cpu, count=count,
                                         min_ns=lo * unit_ns if count else None,
                                         max_ns=hi * unit_ns if count else None,
                                         avg_ns=avg * unit_ns if count else None))
            measurements.append(tool_measurement(
                name=names[position], test="timerlat", series=series, where=filename,
                summary_only=True, data={"unit": "ns" if unit_ns == 1 else "us"}))
        return tool_run(tool="rtla", tool_version="", command_line=None, fmt=self.name,
                        measurements=measurements)

    def _osnoise(self, data: bytes, filename: str) -> RunDetail:
        """osnoise top: per CPU, periods, runtime, noise and the interference counters."""
        header: list[str] = []
        series = []
        counters: list[dict[str, Any]] = []
        for line in lines(data):
            if line.strip().startswith("CPU Period"):
                header = ["CPU", "Period", "Runtime", "Noise", "% CPU Aval", "Max Noise",
                          "Max Single", "HW", "NMI", "IRQ", "Softirq", "Thread"]
                continue
            match = re.match(r"^\s*(\d+)\s+#(\d+)\s+(.*)$", line)
            if header and match:
                values = match.group(3).split()
                if len(values) != len(header) - 2:
                    raise ImportFormatError(f"{filename}: CPU {match.group(1)} line has "
                                            f"{len(values)} values, expected {len(header) - 2}")
                cpu, periods = int(match.group(1)), int(match.group(2))
                facts = dict(zip(header[2:], (number(v, filename) for v in values),
                                 strict=True))
                counters.append({"cpu": cpu, "periods": periods, **facts})
                series.append(ToolSeries(
                    label=f"cpu{cpu}", cpu=cpu, count=periods, min_ns=None,
                    max_ns=facts["Max Single"] * 1000 if periods else None, avg_ns=None,
                    extra={"max_noise_per_period_us": facts["Max Noise"],
                           "noise_us": facts["Noise"], "cpu_available_pct": facts["% CPU Aval"]}))
        if not series:
            raise ImportFormatError(f"{filename}: no osnoise top CPU lines")
        m = tool_measurement(name="osnoise", test="noise", series=series, where=filename,
                             summary_only=True,
                             data={"unit": "us", "counters": counters,
                                   "meaning": "count = periods; max = longest single noise"})
        return tool_run(tool="rtla", tool_version="", command_line=None, fmt=self.name,
                        measurements=[m])
