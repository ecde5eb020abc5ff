"""Parse rtprobe's NDJSON output (schema ``rtprobe/1``, see docs/schema.md)."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from rtbench.rtprobe.wire.checks import INT64_MAX as _INT64_MAX
from rtbench.rtprobe.wire.checks import RecordError as RecordError
from rtbench.rtprobe.wire.checks import get as _get
from rtbench.rtprobe.wire.checks import get_int as _get_int
from rtbench.rtprobe.wire.checks import short as _short
from rtbench.rtprobe.wire.loglin7 import BUCKETS as HIST_BUCKETS
from rtbench.rtprobe.wire.trace_records import (
    TraceRecord,
    TraceSummaryRecord,
    parse_trace,
    parse_trace_summary,
    replaced_key,
)

SCHEMA_NAME = "rtprobe/1"

# a window's count above this goes the slow way: the fast path sums int64
# counts, and HIST_BUCKETS counts of at most this much cannot overflow
_FAST_MAX_COUNT = 1 << 50
_NO_DIGITS = str.maketrans("", "", "0123456789")
_NO_BRACKETS = str.maketrans("[]", "  ")
# 10^1 .. 10^18: searchsorted(value) + 1 is the number of decimal digits
_POWERS_OF_TEN = 10 ** np.arange(1, 19, dtype=np.int64)


@dataclass
class StartRecord:
    """The first record of a run: effective parameters, version, sysinfo."""

    raw: dict[str, Any]
    test: str
    simulated: bool
    params: dict[str, Any]
    common: dict[str, Any]
    series: list[dict[str, Any]]
    sysinfo: dict[str, Any]
    t0_unix_ns: int
    version: str
    argv: list[str] = field(default_factory=list)
    window_ns: int = 1_000_000_000
    hist_layout: str = "loglin7"
    load: str | None = None

    @property
    def thresholds_ns(self) -> list[int]:
        """The thresholds the probe counted exceedances against."""
        values = self.common.get("thresholds_ns") or []
        return [int(v) for v in values]


@dataclass
class WindowRecord:
    """One second of one series (warm-up windows are flagged)."""

    series: int
    index: int
    warmup: bool
    start_ns: int
    end_ns: int
    count: int
    min_ns: int | None
    max_ns: int | None
    sum_ns: int
    overruns: int
    exceed: list[int]
    # the sparse histogram as compact JSON text, "[[bucket,count],...]"
    # (exactly what the database stores); decoded only when asked for, as
    # a run of 10^7 samples holds millions of pairs nobody may look at
    hist_json: str
    early: int = 0
    # collection (docs/schema.md): windows merged into this one because the
    # probe's collector fell behind, and time the probe itself kept the thread
    # from measuring (gaps); not stored per window, summed in the result
    merged: int = 0
    gaps: int = 0
    gap_ns: int = 0

    @property
    def hist(self) -> list[tuple[int, int]]:
        """The sparse histogram as (bucket index, count) pairs."""
        return [(int(i), int(c)) for i, c in json.loads(self.hist_json)]

    def hist_arrays(self) -> tuple[npt.NDArray[np.int64],
                                   npt.NDArray[np.int64]]:
        """The sparse histogram as (indices, counts) numpy arrays."""
        values = _hist_values(self.hist_json)
        return values[0::2].copy(), values[1::2].copy()


@dataclass
class SpikeRecord:
    """One sample at or above the lowest threshold."""

    series: int
    t_ns: int
    latency_ns: int
    threshold_ns: int


@dataclass
class ResultRecord:
    """The final record: per-series totals, status, verdicts."""

    raw: dict[str, Any]
    status: str
    exit_code: int
    series: list[dict[str, Any]]
    verdicts: list[dict[str, Any]]
    data: dict[str, Any]
    test: str = ""
    reason: str | None = None
    simulated: bool = False
    elapsed_ns: int | None = None
    measured_ns: int | None = None


@dataclass
class RateRecord:
    """One second of a load's achieved rate."""

    load: str
    index: int
    t_ns: int
    achieved: float
    unit: str
    raw: dict[str, Any]


Record = (StartRecord | WindowRecord | SpikeRecord | ResultRecord | RateRecord | TraceRecord
          | TraceSummaryRecord)

RESULT_STATUSES = ("ok", "fail", "break", "interrupted", "error")


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector during a bulk load.

    Decoding a long run allocates millions of small lists and tuples and
    no reference cycles; CPython's collector would rescan them all again
    and again (4-6x the decoding time).  Reference counting still frees
    everything; the collector's previous state is restored on exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _where(lineno: int | None) -> str:
    """Prefix naming the line, when known."""
    return f"line {lineno}: " if lineno is not None else ""


def _get_opt_int(obj: dict[str, Any], key: str, where: str) -> int | None:
    """Member key of obj as an int, None when missing or null."""
    if obj.get(key) is None:
        return None
    return int(_get_int(obj, key, where))


def _check_series_entry(entry: dict[str, Any], where: str) -> None:
    """Every member of a result's series entry that the store reads, checked."""
    for key in ("index", "count", "sum_ns"):
        _get_int(entry, key, where)
    for key in ("cpu", "tid", "min_ns", "max_ns", "overruns", "early", "spikes_dropped",
                "raw_dropped", "windows_merged", "gaps", "gap_ns", "start_ns"):
        _get_opt_int(entry, key, where)
    for key, members in (("exceed", ("threshold_ns", "count")),
                         ("worst", ("t_ns", "latency_ns"))):
        items = _get(entry, key, list, where, [])
        for item in items:
            if not isinstance(item, dict):
                raise RecordError(f"{where}'{key}' entries must be objects")
            for member in members:
                _get_int(item, member, where)
    _get(entry, "warmup", (dict, type(None)), where, None)
    _get(entry, "label", (str, int), where, "")
    _get(entry, "error", (str, type(None)), where, None)


def _parse_hist(value: Any, where: str) -> list[tuple[int, int]]:
    """A sparse [[index, count], ...] list, indices strictly increasing."""
    if not isinstance(value, list):
        raise RecordError(f"{where}member 'hist' must be a list of pairs")
    # exact type checks (bool is not an int here); this runs for every
    # window, so it is kept to plain loops over already-decoded lists
    last = -1
    for pair in value:
        if (type(pair) is not list or len(pair) != 2
                or type(pair[0]) is not int or type(pair[1]) is not int
                or pair[1] > _INT64_MAX):
            raise RecordError(f"{where}'hist' entry {_short(pair)} is not an "
                              "[index, count] pair of 64-bit integers")
        if pair[0] <= last or pair[1] < 0:
            raise RecordError(f"{where}'hist' indices must increase and "
                              f"counts be >= 0 (at {pair!r})")
        last = pair[0]
    if last >= HIST_BUCKETS:
        raise RecordError(f"{where}'hist' bucket index {last} is past the "
                          f"last loglin7 bucket ({HIST_BUCKETS - 1})")
    return list(map(tuple, value))


def windows_hist_arrays(windows: list[WindowRecord]
                        ) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """WindowRecord.hist_arrays() of each window (read-only views), the texts of all
    read by one numpy call: a check reads tens of windows of each of tens of runs.
    Each text's count of numbers is known from its commas; where numpy reads another
    count in all, every window is read on its own."""
    texts = [w.hist_json.translate(_NO_BRACKETS) if w.hist_json.count("[") > 1 else ""
             for w in windows]
    if any(text and not text.strip() for text in texts):  # "[[]]": not a pair list
        return [w.hist_arrays() for w in windows]
    sizes = [text.count(",") + 1 if text else 0 for text in texts]
    joined = ",".join(text for text, n in zip(texts, sizes, strict=True) if n)
    values = (np.fromstring(joined, dtype=np.int64, sep=",") if joined
              else np.zeros(0, dtype=np.int64))
    if values.size != sum(sizes):
        return [w.hist_arrays() for w in windows]
    out = []
    start = 0
    for n in sizes:
        mine = values[start:start + n]
        start += n
        out.append((mine[0::2], mine[1::2]))
    return out


def _hist_values(hist_json: str) -> npt.NDArray[np.int64]:
    """Flat [bucket, count, bucket, count ...] array of a compact hist text."""
    if hist_json.count("[") <= 1:  # "[]": fromstring would read one 0
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(hist_json.translate(_NO_BRACKETS),
                         dtype=np.int64, sep=",")


def _fast_hist(text: str, count: int) -> str | None:
    """Canonical compact text of a window's hist member, checked, or None.

    The fast path for the millions of pairs of a long run: the text is not
    decoded into Python objects.  Its skeleton (the text without digits)
    must be exactly "[[,],[,],...]", and the digits must be exactly those
    of the numbers numpy read (an empty field reads as 0, one digit; a
    zero-padded one has more digits than its value), so the text is a
    JSON list of pairs of non-negative integers; numpy then checks the
    indices and counts.  None means "not sure": the caller decodes the
    member with json and checks it the slow way, which words the error.
    """
    if ", " in text:  # json.dumps' default separators
        text = text.replace(", ", ",")
    skeleton = text.translate(_NO_DIGITS)
    pairs = (len(skeleton) - 1) // 4
    if pairs == 0:
        return text if skeleton == "[]" and count == 0 else None
    if (skeleton != "[" + "[,]," * (pairs - 1) + "[,]]"
            or not 0 < count < _FAST_MAX_COUNT):
        return None
    values = _hist_values(text)
    digits = int(np.searchsorted(_POWERS_OF_TEN, values, side="right").sum())
    if values.size != 2 * pairs or digits + values.size != len(text) - len(
            skeleton):
        return None
    indices = values[0::2]
    counts = values[1::2]
    # a number too long for int64 reads as INT64_MAX and fails here
    if (int(indices[-1]) >= HIST_BUCKETS or int(counts.max()) > count
            or int(counts.sum()) != count
            or (pairs > 1 and not bool((indices[1:] > indices[:-1]).all()))):
        return None
    return text


def _split_hist(text: str) -> tuple[str, str] | None:
    """(record without its hist member, hist text) when hist comes last.

    rtprobe writes a window's "hist" as its last member; such a line is
    cut there so that json decodes only the few other members.  None
    when the line is shaped otherwise.
    """
    if not text.endswith("]}"):
        return None
    at = text.rfind('"hist"')
    if at < 0:
        return None
    head = text[:at].rstrip()
    tail = text[at + 6:].lstrip()
    if not head.endswith(",") or not tail.startswith(":"):
        return None
    return head[:-1] + "}", tail[1:-1].strip()


def _parse_window_fast(text: str, where: str) -> WindowRecord | None:
    """A window line parsed without decoding its histogram, or None when
    the line is not a plain window record (then parse it the usual way)."""
    parts = _split_hist(text)
    if parts is None:
        return None
    rest, hist_text = parts
    try:
        obj = _DECODER.decode(rest)
    except ValueError:
        return None
    if (not isinstance(obj, dict) or obj.get("schema") != SCHEMA_NAME
            or obj.get("type") != "window"):
        return None
    count = obj.get("count")
    if type(count) is not int:
        return None
    hist_json = _fast_hist(hist_text, count)
    if hist_json is None:
        return None
    return _parse_window(obj, where, hist_json)


def _parse_start(obj: dict[str, Any], where: str) -> StartRecord:
    """Build a StartRecord from a decoded object."""
    for entry in _get(obj, "series", list, where, []):
        if not isinstance(entry, dict):
            raise RecordError(f"{where}'series' entries must be objects")
        _get_opt_int(entry, "index", where)
        _get_opt_int(entry, "cpu", where)
    if "window_ns" in obj:
        _get_int(obj, "window_ns", where)
    return StartRecord(
        raw=obj,
        test=_get(obj, "test", str, where),
        simulated=bool(_get(obj, "simulated", bool, where, False)),
        params=_get(obj, "params", dict, where, {}),
        common=_get(obj, "common", dict, where, {}),
        series=_get(obj, "series", list, where, []),
        sysinfo=_get(obj, "sysinfo", dict, where, {}),
        t0_unix_ns=_get_int(obj, "t0_unix_ns", where) if "t0_unix_ns" in obj
        else 0,
        version=_get(obj, "version", str, where, ""),
        argv=_get(obj, "argv", list, where, []),
        window_ns=_get(obj, "window_ns", int, where, 1_000_000_000),
        hist_layout=_get(obj, "hist_layout", str, where, "loglin7"),
        load=_get(obj, "load", (str, type(None)), where, None),
    )


def _parse_window(obj: dict[str, Any], where: str,
                  hist_json: str | None = None) -> WindowRecord:
    """Build a WindowRecord from a decoded object (hist_json: its hist
    member, already checked against 'count', or None to check obj's)."""
    exceed = _get(obj, "exceed", list, where, [])
    if not all(isinstance(x, int) and not isinstance(x, bool)
               for x in exceed):
        raise RecordError(f"{where}member 'exceed' must list integers")
    rec = WindowRecord(
        series=_get_int(obj, "series", where),
        index=_get_int(obj, "index", where),
        warmup=bool(_get(obj, "warmup", bool, where)),
        start_ns=_get_int(obj, "start_ns", where),
        end_ns=_get_int(obj, "end_ns", where),
        count=_get_int(obj, "count", where),
        min_ns=_get_int(obj, "min_ns", where, nullable=True),
        max_ns=_get_int(obj, "max_ns", where, nullable=True),
        sum_ns=_get_int(obj, "sum_ns", where),
        overruns=_get_int(obj, "overruns", where),
        exceed=list(exceed),
        hist_json="" if hist_json is None else hist_json,
        early=_get_opt_int(obj, "early", where) or 0,
        merged=_get_opt_int(obj, "merged", where) or 0,
        gaps=_get_opt_int(obj, "gaps", where) or 0,
        gap_ns=_get_opt_int(obj, "gap_ns", where) or 0,
    )
    if rec.count < 0 or rec.series < 0 or rec.index < 0:
        raise RecordError(f"{where}'count', 'series' and 'index' must be >= 0")
    if hist_json is None:
        pairs = _parse_hist(obj.get("hist", []), where)
        total = sum([c for _, c in pairs])
        if total != rec.count:
            raise RecordError(f"{where}window histogram holds {total} "
                              f"samples but 'count' is {rec.count}")
        rec.hist_json = json.dumps(pairs, separators=(",", ":"))
    return rec


def _parse_spike(obj: dict[str, Any], where: str) -> SpikeRecord:
    """Build a SpikeRecord from a decoded object."""
    return SpikeRecord(
        series=_get_int(obj, "series", where),
        t_ns=_get_int(obj, "t_ns", where),
        latency_ns=_get_int(obj, "latency_ns", where),
        threshold_ns=_get_int(obj, "threshold_ns", where),
    )


def _parse_result(obj: dict[str, Any], where: str) -> ResultRecord:
    """Build a ResultRecord from a decoded object."""
    status = _get(obj, "status", str, where)
    if status not in RESULT_STATUSES:
        raise RecordError(f"{where}unknown result status {status!r} "
                          f"(expected one of {', '.join(RESULT_STATUSES)})")
    series = _get(obj, "series", list, where, [])
    for entry in series:
        if not isinstance(entry, dict):
            raise RecordError(f"{where}'series' entries must be objects")
        entry["hist"] = _parse_hist(entry.get("hist", []), where)
        _check_series_entry(entry, where)
    return ResultRecord(
        raw=obj,
        status=status,
        exit_code=_get_int(obj, "exit_code", where),
        series=series,
        verdicts=_verdicts(obj, where),
        data=_get(obj, "data", dict, where, {}),
        test=_get(obj, "test", str, where, ""),
        reason=_get(obj, "reason", (str, type(None)), where, None),
        simulated=bool(_get(obj, "simulated", bool, where, False)),
        elapsed_ns=_get_opt_int(obj, "elapsed_ns", where),
        measured_ns=_get_opt_int(obj, "measured_ns", where),
    )


def _verdicts(obj: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The result's verdicts: a list of objects."""
    verdicts = _get(obj, "verdicts", list, where, [])
    if not all(isinstance(v, dict) for v in verdicts):
        raise RecordError(f"{where}'verdicts' entries must be objects")
    return list(verdicts)


def _parse_rate(obj: dict[str, Any], where: str) -> RateRecord:
    """Build a RateRecord from a decoded object."""
    achieved = _get(obj, "achieved", (int, float), where)
    return RateRecord(
        load=_get(obj, "load", str, where),
        index=_get_int(obj, "index", where),
        t_ns=_get_int(obj, "t_ns", where),
        achieved=float(achieved),
        unit=_get(obj, "unit", str, where, ""),
        raw=obj,
    )


_PARSERS: dict[str, Callable[[dict[str, Any], str], Record]] = {
    "start": _parse_start,
    "window": _parse_window,
    "spike": _parse_spike,
    "result": _parse_result,
    "rate": _parse_rate,
    "trace": parse_trace,
    "trace_summary": parse_trace_summary,
}


def _reject_constant(name: str) -> Any:
    """json hook: NaN and Infinity are not allowed by the schema."""
    raise ValueError(f"non-finite number {name} is not allowed")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def parse_record(line: str, lineno: int | None = None) -> Record:
    """Parse one NDJSON line into its record; RecordError names the problem."""
    where = _where(lineno)
    text = line.strip()
    if not text:
        raise RecordError(f"{where}empty line")
    window = _parse_window_fast(text, where)
    if window is not None:
        return window
    try:
        obj = _DECODER.decode(text)
    except ValueError as exc:
        raise RecordError(f"{where}not valid JSON: {exc}") from None
    except RecursionError:
        raise RecordError(f"{where}JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise RecordError(f"{where}a record must be a JSON object")
    schema = obj.get("schema")
    if schema != SCHEMA_NAME:
        raise RecordError(f"{where}schema is {schema!r}, expected "
                          f"{SCHEMA_NAME!r} (rtprobe and rtbench versions "
                          "differ?)")
    kind = obj.get("type")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise RecordError(f"{where}unknown record type {kind!r}")
    return parser(obj, where)


@dataclass
class ProbeOutput:
    """Every record of one rtprobe run, in arrival order per kind."""

    start: StartRecord | None = None
    windows: list[WindowRecord] = field(default_factory=list)
    spikes: list[SpikeRecord] = field(default_factory=list)
    rates: list[RateRecord] = field(default_factory=list)
    result: ResultRecord | None = None
    # `trace` records (checked, kept as plain dicts) and the `trace_summary` record
    traces: list[dict[str, Any]] = field(default_factory=list)
    trace_summary: dict[str, Any] | None = None

    def add(self, record: Record) -> None:
        """File a parsed record under its kind."""
        if isinstance(record, StartRecord):
            self.start = record
        elif isinstance(record, WindowRecord):
            self.windows.append(record)
        elif isinstance(record, SpikeRecord):
            self.spikes.append(record)
        elif isinstance(record, RateRecord):
            self.rates.append(record)
        elif isinstance(record, ResultRecord):
            self.result = record
        elif isinstance(record, TraceRecord):
            gone = replaced_key(record.raw)
            if gone is not None:  # the run keeps its worst spikes traced (docs/schema.md)
                self.traces = [t for t in self.traces
                               if (t.get("series"), t.get("t_ns")) != gone]
            self.traces.append(record.raw)
        elif isinstance(record, TraceSummaryRecord):
            self.trace_summary = record.raw
        else:  # pragma: no cover - the union above is exhaustive
            raise TypeError(f"not a record: {record!r}")

    @property
    def complete(self) -> bool:
        """True when the result record arrived (the probe ended normally)."""
        return self.result is not None

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> ProbeOutput:
        """Parse a whole NDJSON stream (blank lines skipped)."""
        out = cls()
        with no_gc():
            for lineno, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                out.add(parse_record(line, lineno))
        return out
