"""The LTP realtime tests' logs: gtod_latency, sched_latency, async_handler, pi_perf.

They print min, max and average (and stddev, quantiles "99.9% < N", a criterion and
"Result: PASS|FAIL") in microseconds; the iteration count where the test prints it
(pi_perf does not: its series then has no count, and the figures stay in data).
The quantiles are kept as the test printed them (data["tool_quantiles_us"]); no
histogram is made up.  The result line becomes the verdict.
"""

from __future__ import annotations

import re
from typing import Any

from rtbench.bundle import RunDetail
from rtbench.interop._build import (
    NUMBER,
    ToolSeries,
    complete,
    number,
    tool_measurement,
    tool_run,
    unverifiable,
)
from rtbench.interop._lines import check_text, lines
from rtbench.interop.base import Importer, ImportFormatError

_BANNERS = (("Gettimeofday() Latency", "gtod_latency"),
            ("Scheduling Latency", "sched_latency"),
            ("Asynchronous Event Handling Latency", "async_handler"),
            ("Time taken for high prio thread to get the lock", "pi_perf"))
_FIGURES = (
    ("min", re.compile(rf"^(?:Min|Minimum|Min delay)\s*[:=]\s*({NUMBER})(?:\s*us)?")),
    ("max", re.compile(rf"^(?:Max|Maximum|Max delay)\s*[:=]\s*({NUMBER})(?:\s*us)?")),
    ("avg", re.compile(rf"^(?:Avg|Average|Average delay)\s*[:=]\s*({NUMBER})(?:\s*us)?")),
    ("stddev", re.compile(rf"^(?:StdDev|Standard Deviation)\s*[:=]\s*({NUMBER})")),
    ("start", re.compile(rf"^Start:\s*({NUMBER}) us")),
    ("failed", re.compile(r"^Failed Iterations:\s*(\d+)")),
)
_COUNT = re.compile(r"^(?:Iterations:\s*(\d+)|Running (\d+) iterations)")
_QUANTILE = re.compile(rf"^(\d+\.\d+)% < ({NUMBER})\s*$")


class LtpRealtimeImporter(Importer):
    """An LTP realtime test's stdout."""

    name = "ltp-realtime"
    summary = "LTP realtime logs: gtod_latency, sched_latency, async_handler, pi_perf"

    def detect(self, head: bytes, filename: str) -> bool:
        """One of the four tests' banners."""
        text = head.decode("utf-8", "replace")
        return any(banner in text for banner, _ in _BANNERS) and bool(
            re.search(r"^(Min|Minimum|Min delay)\s*[:=]", text, re.M)
            or "Running" in text or "Iterations:" in text)

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run with one measurement (one series) for the test."""
        check_text(data, filename)
        test = next((name for banner, name in _BANNERS if banner.encode() in data), None)
        if test is None:
            raise ImportFormatError(f"{filename}: not a gtod_latency, sched_latency, "
                                    "async_handler or pi_perf log")
        figures: dict[str, float] = {}
        quantiles: dict[str, float] = {}
        count: int | None = None
        criteria = result = None
        for lineno, raw in enumerate(lines(data), 1):
            line = raw.strip()
            where = f"{filename}: line {lineno}"
            if m := _COUNT.match(line):
                count = int(m.group(1) or m.group(2))
            elif m := _QUANTILE.match(line):
                quantiles[m.group(1)] = number(m.group(2), where)
            elif line.startswith("Criteria:"):
                criteria = line.split(":", 1)[1].strip()
            elif line.startswith("Result:"):
                result = line.split(":", 1)[1].strip()
            else:
                for key, pattern in _FIGURES:
                    if (m := pattern.match(line)) and key not in figures:
                        figures[key] = number(m.group(1), where)
        if "min" not in figures or "max" not in figures:
            raise ImportFormatError(f"{filename}: no Min/Max lines ({test} did not finish?)")
        if result not in (None, "PASS", "FAIL"):
            raise ImportFormatError(f"{filename}: result {result!r} is not PASS or FAIL")
        known = count if count is not None else 0
        series = ToolSeries(
            label=test, cpu=None, count=known,
            min_ns=figures["min"] * 1000 if known else None,
            max_ns=figures["max"] * 1000 if known else None,
            avg_ns=figures["avg"] * 1000 if known and "avg" in figures else None)
        verdicts: list[dict[str, Any]] = []
        if result is not None:
            verdicts.append({"name": criteria or f"{test} criterion",
                             "pass": result == "PASS", "detail": f"Result: {result}"})
        measurement = tool_measurement(
            name=test, test="ltp-realtime", series=[series], where=filename, summary_only=True,
            status="fail" if result == "FAIL" else "ok",
            data={"unit": "us", "tool_figures_us": figures, "tool_quantiles_us": quantiles,
                  "count_printed": count is not None})
        measurement.verdicts = verdicts
        runs = [tool_run(tool=f"ltp-{test}", tool_version="", command_line=None,
                         fmt=self.name, measurements=[measurement])]
        if test == "gtod_latency" and count is None:
            return unverifiable(complete(runs, filename, data, _missing(
                test, result, quantiles, count)), filename,
                "no 'Iterations:' line to count the quantile lines against")
        return complete(runs, filename, data, _missing(test, result, quantiles, count))


def gtod_quantile_labels(iterations: int) -> list[str]:
    """The quantiles gtod_latency prints for its iteration count: one per nine from two
    up to floor(log10(iterations)) nines ("99.0", "99.9", "99.99", ...)."""
    nines = len(str(iterations)) - 1 if iterations > 0 else 0
    return [f"99.{'9' * i if i else '0'}" for i in range(nines - 1)]


def _missing(test: str, result: str | None, quantiles: dict[str, float],
             count: int | None) -> str:
    """What the log of test lacks to be complete ("" when nothing)."""
    if test == "gtod_latency":
        if not quantiles:
            return "no quantile line after 'Quantiles:'"
        expected = gtod_quantile_labels(count) if count is not None else []
        absent = [label for label in expected if label not in quantiles]
        if absent:
            return (f"{len(expected) - len(absent)} of the {len(expected)} quantile lines "
                    f"that {count} iterations print (no '{absent[0]}% <' line)")
        return ""
    return "" if result is not None else f"no 'Result:' line ({test} did not finish)"
