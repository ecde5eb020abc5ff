"""oslat (rt-tests): its --json file and its text output.

oslat prints no sample count: the count is the sum of its histogram, whose last
bucket includes the overflows (oslat says so).  Bucket "v (us)" goes to the loglin7
bucket of v microseconds; min, average and max are the ones oslat printed.
"""

from __future__ import annotations

import math
import re
from typing import Any

from rtbench.bundle import RunDetail
from rtbench.interop._build import (
    ToolSeries,
    check_count,
    complete,
    member,
    number,
    parse_rt_tests_time,
    tool_measurement,
    tool_run,
)
from rtbench.interop._jsonhist import hist_rows, loose_json_hists
from rtbench.interop._lines import check_text, lines
from rtbench.interop.base import Importer, ImportFormatError
from rtbench.wire.histpairs import IntColumn, Pairs, exact_sum


def _number(obj: dict[str, Any], key: str, where: str) -> float | None:
    """A number member or None."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ImportFormatError(f"{where}: {key} must be a number")
    return float(value)


class OslatJsonImporter(Importer):
    """oslat --json=FILE."""

    name = "oslat-json"
    summary = "oslat --json file (rt-tests 2.x)"

    def detect(self, head: bytes, filename: str) -> bool:
        """An rt-tests JSON file whose command line is oslat's."""
        return head.lstrip().startswith(b"{") and b"rt_test_version" in head \
            and re.search(rb'"cmdline:?"\s*:\s*"[^"]*oslat', head) is not None

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run, a series per measured CPU."""
        doc = loose_json_hists(data, filename)
        if not isinstance(doc, dict):
            raise ImportFormatError(f"{filename}: expected a JSON object")
        cmdline = member(doc, "cmdline")
        if isinstance(cmdline, str) and "oslat" not in cmdline.split(" ", 1)[0]:
            raise ImportFormatError(f"{filename}: an rt-tests file of "
                                    f"{cmdline.split(' ', 1)[0][:60]!r}, not of oslat (its "
                                    "cmdline); give the format of the tool that wrote it")
        threads = member(doc, "thread")
        if not isinstance(threads, dict) or not threads:
            raise ImportFormatError(f"{filename}: no 'thread' object")
        series = []
        durations = []
        for key in sorted(threads, key=lambda k: (len(str(k)), str(k))):
            obj = threads[key]
            where = f"{filename}: thread {key}"
            if not isinstance(obj, dict):
                raise ImportFormatError(f"{where}: expected an object")
            raw = obj.get("histogram")
            if not isinstance(raw, (dict, Pairs)):
                raise ImportFormatError(f"{where}: no histogram object")
            hist = hist_rows(raw, where)
            count = exact_sum(hist.counts) if isinstance(hist, Pairs) \
                else sum(n for _, n in hist)
            cpu = obj.get("cpu")
            lo, avg, hi = (_number(obj, k, where) for k in ("min", "avg", "max"))
            durations.append(_number(obj, "duration", where))
            series.append(ToolSeries(
                label=f"cpu{cpu}" if isinstance(cpu, int) else f"T{key}",
                cpu=cpu if isinstance(cpu, int) and not isinstance(cpu, bool) else None,
                count=count, min_ns=None if lo is None or not count else lo * 1000,
                max_ns=None if hi is None or not count else hi * 1000,
                avg_ns=None if avg is None or not count else avg * 1000, hist=hist,
                extra={"freq_mhz": obj.get("freq"), "duration_s": obj.get("duration")}))
        cmdline = member(doc, "cmdline")
        cmdline = cmdline if isinstance(cmdline, str) else ""
        version = member(doc, "rt_test_version")
        version = version if isinstance(version, str) else ""
        sysinfo = member(doc, "sysinfo")
        sysinfo = sysinfo if isinstance(sysinfo, dict) else {}
        known = [d for d in durations if d is not None]
        m = tool_measurement(name="oslat", test="noise", series=series, where=filename,
                             command=cmdline.split(), tool_version=version,
                             data={"unit": "us", "overflow_in_last_bucket": True},
                             measured_ns=int(max(known) * 1e9) if known else None)
        return [tool_run(tool="oslat", tool_version=version, command_line=cmdline,
                         fmt=self.name, measurements=[m],
                         hostname=str(sysinfo.get("nodename") or ""),
                         kernel=str(sysinfo.get("release") or ""),
                         arch=str(sysinfo.get("machine") or ""),
                         started_at=parse_rt_tests_time(member(doc, "start_time")),
                         finished_at=parse_rt_tests_time(member(doc, "end_time")),
                         sysinfo={"rt_tests": sysinfo})]


_ROW = re.compile(r"^\s*(\d+) \(us\):\s*((?:\d+\s*)+?)(\(including overflows\))?\s*$")
_FIELD = re.compile(r"^\s*(Core|Counter Freq|Minimum|Average|Maximum|Max-Min|Duration):"
                    r"\s*(.*?)\s*(?:\((?:us|sec|Mhz)\))?\s*$")


class OslatTextImporter(Importer):
    """oslat's text output (one column per measured core)."""

    name = "oslat"
    summary = "oslat text output (histogram rows, Minimum/Average/Maximum per core)"

    def detect(self, head: bytes, filename: str) -> bool:
        """oslat's banner or its Core/Counter Freq rows."""
        text = head.decode("utf-8", "replace")
        return text.startswith("oslat V") or bool(
            re.search(r"^\s*Core:\s", text, re.M) and "Counter Freq:" in text)

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run, a series per core column."""
        check_text(data, filename)
        version = ""
        end = data.find(b"\n")
        first = data[:end if end >= 0 else len(data)].decode("utf-8")
        if first.startswith("oslat V"):
            version = first[len("oslat V"):].strip()
        fields: dict[str, list[str]] = {}
        # the histogram rows as columns: the buckets, then each core's counts
        buckets = IntColumn()
        columns: list[IntColumn] = []
        for lineno, line in enumerate(lines(data), 1):
            row = _ROW.match(line)
            if row:
                counts = [int(v) for v in row.group(2).split()]
                if columns and len(counts) != len(columns):
                    raise ImportFormatError(f"{filename}: line {lineno}: "
                                            f"{len(counts)} columns, earlier rows "
                                            f"{len(columns)}")
                if not columns:
                    columns = [IntColumn() for _ in counts]
                buckets.append(int(row.group(1)))
                for column, value in zip(columns, counts, strict=True):
                    column.append(value)
                continue
            match = _FIELD.match(line)
            if match:
                fields[match.group(1)] = match.group(2).split()
        cores = fields.get("Core")
        if not cores or not len(buckets):
            raise ImportFormatError(f"{filename}: no oslat histogram (Core: and "
                                    "'N (us):' rows)")
        closing = [key for key in ("Minimum", "Average", "Maximum") if key not in fields]
        if closing:
            raise ImportFormatError(f"{filename}: no '{closing[0]}:' line after the "
                                    "histogram: the output was cut short")
        n = len(cores)
        if len(columns) != n:
            raise ImportFormatError(f"{filename}: {n} cores but {len(columns)} columns")
        series = []
        values_of_rows = buckets.array()
        for i, core in enumerate(cores):
            hist = Pairs(values_of_rows, columns[i].array())
            count = exact_sum(hist.counts)
            values = []
            for key in ("Minimum", "Average", "Maximum"):
                printed = fields.get(key, [])
                values.append(number(printed[i], f"{filename}: {key}")
                              if i < len(printed) else None)
            lo, avg, hi = values
            series.append(ToolSeries(
                label=f"cpu{core}", cpu=int(core) if core.isdigit() else None, count=count,
                min_ns=None if lo is None or not count else lo * 1000,
                max_ns=None if hi is None or not count else hi * 1000,
                avg_ns=None if avg is None or not count else avg * 1000, hist=hist))
        duration = fields.get("Duration")
        measured = None
        if duration:
            duration_ns = number(duration[0], f"{filename}: Duration") * 1e9
            whole_ns = float(math.floor(duration_ns)) if math.isfinite(duration_ns) \
                else duration_ns
            measured = check_count(whole_ns, f"{filename}: Duration")
        m = tool_measurement(name="oslat", test="noise", series=series, where=filename,
                             tool_version=version, measured_ns=measured,
                             data={"unit": "us", "overflow_in_last_bucket": True})
        runs = [tool_run(tool="oslat", tool_version=version, command_line=None,
                         fmt=self.name, measurements=[m])]
        return complete(runs, filename, data,
                        "" if duration else "no 'Duration:' line (oslat prints it last)")
