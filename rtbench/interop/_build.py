"""Shared pieces of the importers: a run bundle from what another tool printed.

Every importer reduces its file to ToolSeries (one per thread/CPU) and calls
tool_run().  The numbers the tool printed are kept exactly: count, min and max as
series counters; the printed average in measurement data ("tool_avg_ns", one per
series, with sum_ns = round(avg * count) so rtbench's mean shows the same value);
the tool's own histogram in data ("tool_hist": [[value, count], ...] in the tool's
unit, "tool_hist_unit_ns"; a histogram of more than COMPACT_ROWS rows is held as Pairs
and stored, when its values go up by one step, as {"counts": [...], "first": v,
"step": d}: histpairs.rows() reads either form).  Our loglin7 histogram gets every
count of the tool's histogram, each in the loglin7 bucket of the tool bucket's lower
edge; overflow counts (samples beyond the tool's last bucket) go to the bucket of that
limit, so a percentile is still the lower bound of where its sample lies.  A format with no
distribution leaves the histogram empty: no percentile is invented.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from rtbench.bundle import (
    MeasurementDetail,
    RunDetail,
    ScenarioDetail,
    SeriesDetail,
    mark_beyond_hist,
)
from rtbench.interop._lines import line_count
from rtbench.interop.base import ImportFormatError, IncompleteOutput
from rtbench.rtprobe.wire import loglin7
from rtbench.wire.histpairs import Pairs

# the largest latency an import accepts: one day in ns (anything above is a broken file)
MAX_NS = 86_400 * 10**9
MAX_COUNT = 1 << 53
MAX_CPU = 1 << 20
# a tool's histogram longer than this is kept as Pairs in data["tool_hist"]
COMPACT_ROWS = 4096
NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"


@dataclass
class ToolSeries:
    """One thread's (or CPU's) figures as another tool printed them, in ns."""

    label: str
    cpu: int | None
    count: int
    min_ns: float | None
    max_ns: float | None
    avg_ns: float | None
    # (value, count) in the tool's unit; None: the format has no distribution
    hist: list[tuple[int, int]] | Pairs | None = None
    hist_unit_ns: int = 1000
    # samples beyond the tool's last bucket, and where that bucket ends (tool unit)
    overflow: int = 0
    overflow_at: int | None = None
    # raw per-sample values in ns (cyclictest -v, samples.raw): exact histogram
    samples_ns: list[int] | np.ndarray | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def check_ns(value: float, what: str) -> int:
    """A latency in ns as an int in 0..MAX_NS; ImportFormatError otherwise."""
    if not math.isfinite(value) or value < 0 or value > MAX_NS:
        raise ImportFormatError(f"{what}: {value!r} is not a latency rtbench can store")
    return int(round(value))


def check_count(value: float, what: str) -> int:
    """A count as an int in 0..2^53."""
    if not math.isfinite(value) or value < 0 or value > MAX_COUNT or value != int(value):
        raise ImportFormatError(f"{what}: {value!r} is not a count")
    return int(value)


def number(text: str, what: str) -> float:
    """A decimal number from text (nan and inf refused)."""
    try:
        value = float(text)
    except ValueError:
        raise ImportFormatError(f"{what}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ImportFormatError(f"{what}: {text!r} is not a finite number")
    return value


def _series(index: int, ts: ToolSeries, where: str) -> SeriesDetail:
    """A SeriesDetail from one ToolSeries, with the mapped histogram."""
    count = check_count(ts.count, f"{where}: count")
    if ts.cpu is not None and not 0 <= ts.cpu < MAX_CPU:
        raise ImportFormatError(f"{where}: CPU {ts.cpu} is not a CPU number")
    min_ns = None if ts.min_ns is None else check_ns(ts.min_ns, f"{where}: min")
    max_ns = None if ts.max_ns is None else check_ns(ts.max_ns, f"{where}: max")
    if min_ns is not None and max_ns is not None and min_ns > max_ns:
        raise ImportFormatError(f"{where}: min {min_ns} ns is above max {max_ns} ns")
    avg = ts.avg_ns
    if avg is not None and (not math.isfinite(avg) or avg < 0 or avg > MAX_NS):
        raise ImportFormatError(f"{where}: average {avg!r} is not a latency")
    hist: list[tuple[int, int]] = []
    if isinstance(ts.samples_ns, np.ndarray):
        hist = _samples_hist(ts.samples_ns, where)
    elif ts.samples_ns is not None:
        if ts.samples_ns:
            idx, cnt = loglin7.from_values([check_ns(v, where) for v in ts.samples_ns])
            hist = [(int(i), int(c)) for i, c in zip(idx, cnt, strict=True)]
    elif ts.hist is not None:
        if isinstance(ts.hist, Pairs):
            hist = _pairs_hist(ts, where)
        else:
            pairs: list[tuple[int, int]] = []
            for value, n in ts.hist:
                if n:
                    ns = check_ns(value * ts.hist_unit_ns, f"{where}: histogram bucket")
                    pairs.append((loglin7.index_one(ns),
                                  check_count(n, f"{where}: histogram")))
            if ts.overflow:
                limit = ts.overflow_at if ts.overflow_at is not None else 0
                ns = check_ns(limit * ts.hist_unit_ns, f"{where}: overflow limit")
                pairs.append((loglin7.index_one(ns),
                              check_count(ts.overflow, f"{where}: overflow")))
            if pairs:
                hist = loglin7.merge_pairs([[list(p) for p in pairs]])
        total = sum(c for _, c in hist)
        if hist and total != count:
            raise ImportFormatError(f"{where}: the histogram holds {total} samples but "
                                    f"the tool counted {count}")
    if avg is not None:
        sum_ns = int(round(avg * count))
    elif isinstance(ts.samples_ns, np.ndarray):
        sum_ns = int(ts.samples_ns.sum(dtype=object if ts.samples_ns.dtype.kind == "O"
                                       else np.int64))
    elif ts.samples_ns is not None:
        sum_ns = sum(int(v) for v in ts.samples_ns)
    else:
        sum_ns = 0
    if sum_ns >= 1 << 62:
        raise ImportFormatError(f"{where}: {count} samples of {avg} ns is more than "
                                "rtbench can store")
    return SeriesDetail(index=index, label=ts.label, cpu=ts.cpu, count=count, min_ns=min_ns,
                        max_ns=max_ns, sum_ns=sum_ns, overruns=0, early=0, exceed=[],
                        worst=[], warmup={}, hist=hist)


# values mapped to loglin7 buckets at a time
_SLICE = 1 << 14


def first_true(test: Callable[[slice], np.ndarray], length: int) -> int | None:
    """The first index where test (of a slice of the arrays) is true, a slice at a time
    (no boolean array as long as the file's rows); None when nowhere."""
    for start in range(0, length, _SLICE):
        hits = test(slice(start, start + _SLICE))
        if hits.any():
            return start + int(np.argmax(hits))
    return None


def _samples_hist(samples_ns: np.ndarray, where: str) -> list[tuple[int, int]]:
    """The loglin7 histogram of raw samples in ns (an array); check_ns's error on the
    first sample that is not a latency."""
    if not samples_ns.size:
        return []
    bad = first_true(lambda s: (samples_ns[s] < 0) | (samples_ns[s] > MAX_NS),
                     len(samples_ns))
    if bad is not None:
        check_ns(int(samples_ns[bad]), where)
    dense = _dense_counts(samples_ns, None)
    return [(int(i), int(dense[i])) for i in np.flatnonzero(dense)]


def _pairs_hist(ts: ToolSeries, where: str) -> list[tuple[int, int]]:
    """The loglin7 histogram of a tool's histogram held as Pairs (as the loop over a
    list does it, with the same error on the first row that is not a bucket)."""
    assert isinstance(ts.hist, Pairs)
    values, counts = ts.hist.values, ts.hist.counts
    limit_value = MAX_NS // ts.hist_unit_ns
    row = first_true(lambda s: (counts[s] != 0) & ((values[s] > limit_value)
                                                   | (counts[s] > MAX_COUNT)), len(values))
    if row is not None:
        check_ns(int(values[row]) * ts.hist_unit_ns, f"{where}: histogram bucket")
        check_count(int(counts[row]), f"{where}: histogram")
    dense = _dense_counts(values, counts, ts.hist_unit_ns)
    if ts.overflow:
        limit = ts.overflow_at if ts.overflow_at is not None else 0
        ns_one = check_ns(limit * ts.hist_unit_ns, f"{where}: overflow limit")
        dense[loglin7.index_one(ns_one)] += check_count(ts.overflow, f"{where}: overflow")
    return [(int(i), int(dense[i])) for i in np.flatnonzero(dense)]


def _dense_counts(values: np.ndarray, counts: np.ndarray | None, unit_ns: int = 1
                  ) -> np.ndarray:
    """Every loglin7 bucket's count of values (times unit_ns; each counted counts[i]
    times, or once), a slice at a time: the temporaries of loglin7.index() stay small.
    The values (times unit_ns) are checked to be latencies."""
    dense = np.zeros(loglin7.BUCKETS, dtype=np.int64)
    for start in range(0, len(values), _SLICE):
        part = values[start:start + _SLICE]
        weights = None if counts is None else counts[start:start + _SLICE]
        if weights is not None:
            used = weights != 0
            part, weights = part[used], weights[used].astype(np.int64)
        ns = part.astype(np.uint64) * np.uint64(unit_ns)
        if weights is None:
            dense += np.bincount(loglin7.index(ns), minlength=loglin7.BUCKETS)
        else:
            np.add.at(dense, loglin7.index(ns), weights)
    return dense


def tool_hist(hist: list[tuple[int, int]] | Pairs) -> list[list[int]] | Pairs:
    """A tool's histogram for data["tool_hist"]: [[value, count], ...]; a long one stays
    Pairs (compact; it reads, compares and is stored as the same list)."""
    if isinstance(hist, Pairs) and len(hist) > COMPACT_ROWS:
        return hist
    return [list(p) for p in hist]


def tool_measurement(*, name: str, test: str, series: list[ToolSeries], where: str,
                     params: dict[str, Any] | None = None, command: list[str] | None = None,
                     data: dict[str, Any] | None = None, summary_only: bool = False,
                     measured_ns: int | None = None, status: str = "ok",
                     tool_version: str = "") -> MeasurementDetail:
    """A measurement holding one series per ToolSeries and the tool's own figures."""
    out = [_series(i, ts, f"{where}: {ts.label}") for i, ts in enumerate(series)]
    if measured_ns is not None and not 0 <= measured_ns < 1 << 62:
        raise ImportFormatError(f"{where}: a duration of {measured_ns} ns is not a duration")
    extra: dict[str, Any] = dict(data or {})
    extra["summary_only"] = summary_only or not any(s.hist for s in out)
    extra["tool_avg_ns"] = [ts.avg_ns for ts in series]
    if any(ts.extra for ts in series):
        extra["tool_series"] = [ts.extra for ts in series]
    if any(ts.hist is not None for ts in series):
        # last: the longest entry, so `rtbench show` lists the short facts first
        extra["tool_overflow"] = [ts.overflow for ts in series]
        extra["tool_hist_unit_ns"] = series[0].hist_unit_ns if series else 1000
        extra["tool_hist"] = [None if ts.hist is None else tool_hist(ts.hist)
                              for ts in series]
    return mark_beyond_hist(MeasurementDetail(
        id=0, name=name, test=test, params=dict(params or {}), command=list(command or []),
        status=status, exit_code=0 if status == "ok" else 1, reason=None, thresholds_ns=[],
        simulated=False, probe_version=tool_version, t0_unix_ns=None,
        measured_ns=measured_ns, elapsed_ns=None, verdicts=[], data=extra, start={},
        series=out))


def tool_run(*, tool: str, tool_version: str, command_line: str | list[str] | None,
             fmt: str, measurements: list[MeasurementDetail], hostname: str = "",
             kernel: str = "", arch: str = "", started_at: datetime | None = None,
             finished_at: datetime | None = None, sysinfo: dict[str, Any] | None = None
             ) -> RunDetail:
    """A run bundle for one imported file (the import command adds file and sha256)."""
    argv = command_line.split() if isinstance(command_line, str) else list(command_line or [])
    source: dict[str, Any] = {"tool": tool, "format": fmt}
    if tool_version:
        source["tool_version"] = tool_version
    if started_at is None:
        source["started_at"] = "unknown"  # the import command uses the file's mtime
    if command_line:
        source["command_line"] = command_line if isinstance(command_line, str) \
            else " ".join(command_line)
    run = RunDetail(
        id=0, suite=f"import:{tool}", suite_source=fmt, scale=1.0, status="ok",
        started_at=started_at or datetime.fromtimestamp(0, timezone.utc),
        finished_at=finished_at, hostname=hostname or "unknown", target="import",
        kernel=kernel or "unknown", arch=arch or "unknown", sysinfo=dict(sysinfo or {}),
        preflight=[], tool_versions={tool: tool_version} if tool_version else {},
        command_line=argv, simulated=False, source=source)
    run.scenarios.append(ScenarioDetail(id=0, name="imported", loads=[], load_cpus=None,
                                        measure_cpus=None, intensity=None,
                                        measurements=measurements))
    return run


def complete(runs: list[RunDetail], filename: str, text: str | bytes, missing: str
             ) -> list[RunDetail]:
    """The runs of a complete output (text, or its bytes); IncompleteOutput naming the last
    line and what is missing (the runs kept for `import --partial`) when missing is not
    empty."""
    if not missing:
        return runs
    last = line_count(text) if isinstance(text, bytes) else len(text.splitlines())
    raise IncompleteOutput(f"{filename}: line {last}: cut short: {missing}", runs)


def mark_partial(run: RunDetail, reason: str) -> None:
    """Store run as 'partial' with reason (one line): status, tag and source say it."""
    run.status = "partial"
    run.tags = {**run.tags, "partial": reason[:200]}
    run.source = {**run.source, "partial": reason}


def unverifiable(runs: list[RunDetail], filename: str, why: str) -> list[RunDetail]:
    """The runs of an output that carries no evidence of being whole, marked 'partial'
    (never 'ok'): why says what the tool leaves out that would show a cut."""
    reason = f"{filename}: completeness cannot be checked: {why}"
    for run in runs:
        mark_partial(run, reason)
    return runs


def text_of(data: bytes, filename: str, whole_lines: bool = True) -> str:
    """The file as text; binary noise is refused with one line, and so is a line-based
    file cut inside its last line (whole_lines)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportFormatError(f"{filename}: not a text file (invalid UTF-8)") from None
    if "\x00" in text:
        raise ImportFormatError(f"{filename}: not a text file (NUL bytes)")
    if whole_lines and text.strip() and not text.endswith("\n"):
        # every tool this reads ends its output with a newline: a file without one was
        # cut (a full disk, a killed tool, a copy stopped halfway) inside its last line
        last = text.count("\n") + 1
        raise ImportFormatError(f"{filename}: line {last}: cut short (the file does not "
                                "end with a newline); import the complete output")
    return text


_NAN = re.compile(r"(?<![\w.])-?(?:nan|inf)(?![\w.])", re.IGNORECASE)


def loose_json(data: bytes, filename: str) -> Any:
    """JSON as rt-tests and jitterdebugger write it: `-nan`/`nan`/`inf` become null.
    A JSON document's end is its closing bracket (the parser refuses a cut one), so a file
    saved without a final newline is still whole."""
    text = text_of(data, filename, whole_lines=False)

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not a number")

    def finite(number: str) -> float:
        """A JSON number as a float; 1e999 and the like are refused, not infinite."""
        value = float(number)
        if value in (float("inf"), float("-inf")):
            raise ValueError(f"{number[:24]} is out of range")
        return value

    try:
        return json.loads(_NAN.sub("null", text), parse_constant=refuse, parse_float=finite)
    except (ValueError, RecursionError) as exc:
        raise ImportFormatError(f"{filename}: not valid JSON "
                                f"({str(exc).splitlines()[0][:80]})") from None


def parse_rt_tests_time(value: Any) -> datetime | None:
    """rt-tests' "Mon, 23 Nov 2026 10:53:37 +0000" as a datetime (None if absent/odd)."""
    if not isinstance(value, str):
        return None
    for fmt in ("%a, %d %b %Y %H:%M:%S %z", "%Y-%m-%dT%H:%M:%S%z"):
        try:
            return datetime.strptime(value.strip(), fmt)
        except ValueError:
            continue
    return None


def member(obj: Any, *names: str) -> Any:
    """The first of names present in the dict obj (rt-tests writes "cmdline:" too)."""
    if not isinstance(obj, dict):
        return None
    for name in names:
        if name in obj:
            return obj[name]
        if name + ":" in obj:
            return obj[name + ":"]
    return None


def run_uid(sha256_hex: str, index: int) -> str:
    """The uid of the index-th run of a file: "sha256-" and 56 hex digits (63 chars)."""
    digest = hashlib.sha256(f"{sha256_hex}:{index}".encode()).hexdigest()
    return f"sha256-{digest[:56]}"
