"""The run bundle as a versioned JSON document ("schema": "rtbench-run/1").

This is rtbench's own exchange form: `rtbench export RUN --format json`, `rtbench import`,
and the body of an upload to `rtbench serve`.  Reading is strict: unknown fields, wrong
types, NaN/Infinity, integers outside 64 bits and counts that do not add up are refused
with one line naming the place.  A run written and read back is equal to the original
(ids aside), so storing it again stores the same run (same uid: stored once).

Text is decoded by msgspec into the nesting below (run, scenarios, measurements,
windows): the syntax, the nesting and unknown fields are checked in C, windows
are typed there (checked in C too), and each window's histogram -- nearly all of a
long run's bytes -- stays raw JSON text, checked as text with numpy for all windows
of a measurement at once and stored as it is, never turned into millions of Python
objects.  The field checks below then run on the few remaining values.
"""

from __future__ import annotations

import json
import re
from contextvars import ContextVar
from datetime import datetime
from operator import itemgetter
from typing import Annotated, Any

import msgspec
import numpy as np

from rtbench.bundle import (
    MeasurementDetail,
    RunDetail,
    ScenarioDetail,
    SeriesDetail,
    board_of,
    mark_beyond_hist,
)
from rtbench.interop._jsoncolumns import _place, object_with_columns
from rtbench.interop._jsonstream import Column, cut_columns
from rtbench.interop.base import Exporter, Importer, ImportFormatError
from rtbench.rtprobe.wire.records import SpikeRecord, WindowRecord, no_gc
from rtbench.wire import histpairs

SCHEMA = "rtbench-run/1"
INT64_MAX = (1 << 63) - 1
# while a skeleton of load_path() is read: its token, its columns, the indices placed
_CUT: ContextVar[tuple[str, list[Column], set[int]] | None] = ContextVar("_CUT",
                                                                         default=None)


def run_to_json(run: RunDetail) -> dict[str, Any]:
    """The run as a JSON-ready dict (schema rtbench-run/1; `reason` only when set)."""
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "uid": run.uid,
        "suite": run.suite,
        "suite_source": run.suite_source,
        "scale": run.scale,
        "status": run.status,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "hostname": run.hostname,
        "board": run.board or board_of(run.target, run.hostname),
        "target": run.target,
        "kernel": run.kernel,
        "arch": run.arch,
        "sysinfo": run.sysinfo,
        "preflight": run.preflight,
        "tool_versions": run.tool_versions,
        "command_line": run.command_line,
        "simulated": run.simulated,
        "tags": run.tags,
        "source": run.source,
        "scenarios": [_scenario_to_json(sc) for sc in run.scenarios],
    }
    if run.reason is not None:
        out["reason"] = run.reason
    return out


def _scenario_to_json(sc: ScenarioDetail) -> dict[str, Any]:
    """One scenario as a dict."""
    return {
        "name": sc.name, "loads": sc.loads, "load_cpus": sc.load_cpus,
        "measure_cpus": sc.measure_cpus, "intensity": sc.intensity,
        "measurements": [_measurement_to_json(m) for m in sc.measurements],
    }


def _measurement_to_json(m: MeasurementDetail) -> dict[str, Any]:
    """One measurement as a dict."""
    return {
        "name": m.name, "test": m.test, "params": m.params, "command": m.command,
        "status": m.status, "exit_code": m.exit_code, "reason": m.reason,
        "thresholds_ns": m.thresholds_ns, "simulated": m.simulated,
        "probe_version": m.probe_version, "t0_unix_ns": m.t0_unix_ns,
        "measured_ns": m.measured_ns, "elapsed_ns": m.elapsed_ns,
        "verdicts": m.verdicts, "data": m.data, "start": m.start,
        "series": [{
            "index": s.index, "label": s.label, "cpu": s.cpu, "count": s.count,
            "min_ns": s.min_ns, "max_ns": s.max_ns, "sum_ns": s.sum_ns,
            "overruns": s.overruns, "early": s.early,
            "exceed": [list(p) for p in s.exceed], "worst": [list(p) for p in s.worst],
            "warmup": s.warmup, "hist": [list(p) for p in s.hist],
            "spikes_dropped": s.spikes_dropped, "raw_dropped": s.raw_dropped,
            "error": s.error,
        } for s in m.series],
        "windows": [{
            "series": w.series, "index": w.index, "warmup": w.warmup,
            "start_ns": w.start_ns, "end_ns": w.end_ns, "count": w.count,
            "min_ns": w.min_ns, "max_ns": w.max_ns, "sum_ns": w.sum_ns,
            "overruns": w.overruns, "early": w.early, "exceed": w.exceed,
            "hist": json.loads(w.hist_json),
        } for w in m.windows],
        "spikes": [{"series": s.series, "t_ns": s.t_ns, "latency_ns": s.latency_ns,
                    "threshold_ns": s.threshold_ns} for s in m.spikes],
        "traces": list(m.traces),
        "trace_info": m.trace_info,
    }


# The nesting msgspec decodes: every field is optional here (a missing one is
# reported by the field checks, as for a plain dict); a field not named is refused.
_Unset = msgspec.UnsetType
_UNSET: Any = msgspec.UNSET


Int64 = Annotated[int, msgspec.Meta(ge=-INT64_MAX - 1, le=INT64_MAX)]
Count = Annotated[int, msgspec.Meta(ge=0, le=INT64_MAX)]


class _WindowDoc(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A window as decoded and type-checked; its histogram kept as raw JSON text."""

    series: Count
    index: Count
    warmup: bool
    start_ns: Int64
    end_ns: Int64
    count: Count
    min_ns: Int64 | None = None
    max_ns: Int64 | None = None
    sum_ns: Int64
    overruns: Count
    early: Count
    exceed: list[Count]
    hist: msgspec.Raw


class _MeasurementDoc(msgspec.Struct, forbid_unknown_fields=True):
    """A measurement as decoded."""

    name: Any = _UNSET
    test: Any = _UNSET
    params: Any = _UNSET
    command: Any = _UNSET
    status: Any = _UNSET
    exit_code: Any = _UNSET
    reason: Any = _UNSET
    thresholds_ns: Any = _UNSET
    simulated: Any = _UNSET
    probe_version: Any = _UNSET
    t0_unix_ns: Any = _UNSET
    measured_ns: Any = _UNSET
    elapsed_ns: Any = _UNSET
    verdicts: Any = _UNSET
    # kept as its text: its long arrays are read into compact columns (_data)
    data: msgspec.Raw = msgspec.Raw()
    start: Any = _UNSET
    series: Any = _UNSET
    windows: list[_WindowDoc] | _Unset = _UNSET
    spikes: Any = _UNSET
    traces: Any = _UNSET
    trace_info: Any = _UNSET


class _ScenarioDoc(msgspec.Struct, forbid_unknown_fields=True):
    """A scenario as decoded."""

    name: Any = _UNSET
    loads: Any = _UNSET
    load_cpus: Any = _UNSET
    measure_cpus: Any = _UNSET
    intensity: Any = _UNSET
    measurements: list[_MeasurementDoc] | _Unset = _UNSET


class _RunDoc(msgspec.Struct, forbid_unknown_fields=True):
    """A run document as decoded."""

    schema: Any = _UNSET
    uid: Any = _UNSET
    suite: Any = _UNSET
    suite_source: Any = _UNSET
    scale: Any = _UNSET
    status: Any = _UNSET
    started_at: Any = _UNSET
    finished_at: Any = _UNSET
    hostname: Any = _UNSET
    board: Any = _UNSET
    target: Any = _UNSET
    kernel: Any = _UNSET
    arch: Any = _UNSET
    sysinfo: Any = _UNSET
    preflight: Any = _UNSET
    tool_versions: Any = _UNSET
    command_line: Any = _UNSET
    simulated: Any = _UNSET
    tags: Any = _UNSET
    source: Any = _UNSET
    scenarios: list[_ScenarioDoc] | _Unset = _UNSET
    reason: Any = _UNSET


_DECODER = msgspec.json.Decoder(_RunDoc)


def _fields(doc: msgspec.Struct) -> dict[str, Any]:
    """A decoded struct as a dict of the fields the document had."""
    out = {}
    for name in doc.__struct_fields__:
        value = getattr(doc, name)
        if value is not msgspec.UNSET and not (isinstance(value, msgspec.Raw)
                                               and not len(value)):
            out[name] = value
    return out


def dumps(run: RunDetail) -> str:
    """The run as compact JSON text (RFC 8259: no NaN or Infinity)."""
    return histpairs.dumps(run_to_json(run), separators=(",", ":"), allow_nan=False,
                           ensure_ascii=False)


class _Reader:
    """Strict field access that names the place of every error."""

    def __init__(self, obj: Any, where: str) -> None:
        if isinstance(obj, msgspec.Struct):
            obj = _fields(obj)
        if not isinstance(obj, dict):
            raise ImportFormatError(f"{where}: expected an object")
        self.obj = obj
        self.where = where
        self.used: set[str] = set()

    def _get(self, key: str, optional: bool) -> Any:
        """The raw value of key (None when optional and absent)."""
        self.used.add(key)
        if key not in self.obj:
            if optional:
                return None
            raise ImportFormatError(f"{self.where}: missing field {key!r}")
        return self.obj[key]

    def get_int(self, key: str, *, optional: bool = False, minimum: int | None = None) -> Any:
        """An integer within 64 bits (None allowed when optional)."""
        value = self._get(key, optional)
        if value is None and optional:
            return None
        return _int(value, f"{self.where}.{key}", minimum)

    def get_str(self, key: str, *, optional: bool = False) -> Any:
        """A string (None allowed when optional)."""
        value = self._get(key, optional)
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise ImportFormatError(f"{self.where}.{key}: expected a string")
        return value

    def get_bool(self, key: str) -> bool:
        """A boolean."""
        value = self._get(key, False)
        if not isinstance(value, bool):
            raise ImportFormatError(f"{self.where}.{key}: expected true or false")
        return value

    def get_float(self, key: str) -> float:
        """A finite number."""
        value = self._get(key, False)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or value != value or value in (float("inf"), float("-inf")):
            raise ImportFormatError(f"{self.where}.{key}: expected a finite number")
        return float(value)

    def get_dict(self, key: str, *, optional: bool = False) -> Any:
        """An object (None allowed when optional)."""
        value = self._get(key, optional)
        if value is None and optional:
            return None
        if not isinstance(value, dict):
            raise ImportFormatError(f"{self.where}.{key}: expected an object")
        return value

    def get_list(self, key: str) -> list[Any]:
        """An array."""
        value = self._get(key, False)
        if not isinstance(value, list):
            raise ImportFormatError(f"{self.where}.{key}: expected an array")
        return value

    def get_time(self, key: str, *, optional: bool = False) -> datetime | None:
        """An ISO 8601 time with its offset."""
        value = self.get_str(key, optional=optional)
        if value is None:
            return None
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ImportFormatError(f"{self.where}.{key}: not an ISO 8601 time") from None
        if parsed.tzinfo is None:
            raise ImportFormatError(f"{self.where}.{key}: the time needs its UTC offset")
        return parsed

    def done(self) -> None:
        """Refuse fields nobody asked for."""
        extra = sorted(set(self.obj) - self.used)
        if extra:
            raise ImportFormatError(f"{self.where}: unknown field {extra[0]!r}")


def _int(value: Any, where: str, minimum: int | None = None) -> int:
    """value as a 64-bit integer; ImportFormatError naming where otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ImportFormatError(f"{where}: expected an integer")
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise ImportFormatError(f"{where}: integer outside 64 bits")
    if minimum is not None and value < minimum:
        raise ImportFormatError(f"{where}: must be at least {minimum}")
    return value


def _pairs(value: Any, where: str) -> list[tuple[int, int]]:
    """A list of [int, int] pairs."""
    if not isinstance(value, list):
        raise ImportFormatError(f"{where}: expected an array of pairs")
    fast = _fast_pairs(value)
    if fast is not None:
        return list(zip(fast[0], fast[1], strict=True))
    out = []
    for i, pair in enumerate(value):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ImportFormatError(f"{where}[{i}]: expected a pair [a, b]")
        out.append((_int(pair[0], f"{where}[{i}]"), _int(pair[1], f"{where}[{i}]")))
    return out


def _fast_pairs(value: list[Any]) -> tuple[list[int], list[int]] | None:
    """(firsts, seconds) when value is a list of [int, int] pairs within 64 bits, else None.

    Uploads carry millions of histogram pairs: every check here runs in C (map,
    set, min, max); the slow loop in _pairs words the error when there is one.
    """
    if not value:
        return [], []
    if set(map(type, value)) != {list} or set(map(len, value)) != {2}:
        return None
    firsts = [p[0] for p in value]
    seconds = [p[1] for p in value]
    if set(map(type, firsts)) != {int} or set(map(type, seconds)) != {int}:
        return None
    low, high = -INT64_MAX - 1, INT64_MAX
    if min(firsts) < low or max(firsts) > high or min(seconds) < low or max(seconds) > high:
        return None
    return firsts, seconds


def _hist(value: Any, where: str) -> list[tuple[int, int]]:
    """A sparse histogram: increasing bucket indices, non-negative counts."""
    if isinstance(value, list):
        fast = _fast_pairs(value)
        if fast is not None:
            buckets, counts = fast
            if (not buckets or (min(buckets) >= 0 and min(counts) >= 0
                                and buckets == sorted(set(buckets)))):
                return list(zip(buckets, counts, strict=True))
    pairs = _pairs(value, where)
    last = -1
    for bucket, count in pairs:
        if bucket <= last or count < 0:
            raise ImportFormatError(f"{where}: buckets must increase and counts be >= 0")
        last = bucket
    return pairs


def run_from_json(obj: Any, where: str = "run") -> RunDetail:
    """A run bundle from a parsed rtbench-run/1 document (id 0); strict."""
    r = _Reader(obj, where)
    schema = r.get_str("schema")
    if schema != SCHEMA:
        raise ImportFormatError(f"{where}.schema: {schema!r} is not {SCHEMA!r}; "
                                "a newer rtbench may be needed")
    started = r.get_time("started_at")
    assert started is not None
    run = RunDetail(
        id=0, suite=r.get_str("suite"), suite_source=r.get_str("suite_source"),
        scale=r.get_float("scale"), status=r.get_str("status"), started_at=started,
        finished_at=r.get_time("finished_at", optional=True), hostname=r.get_str("hostname"),
        target=r.get_str("target"), kernel=r.get_str("kernel"), arch=r.get_str("arch"),
        sysinfo=r.get_dict("sysinfo"), preflight=r.get_list("preflight"),
        tool_versions=r.get_dict("tool_versions"),
        command_line=[_text(v, f"{where}.command_line") for v in r.get_list("command_line")],
        simulated=r.get_bool("simulated"),
        tags={str(k): _text(v, f"{where}.tags") for k, v in r.get_dict("tags").items()},
        source=r.get_dict("source"), uid=r.get_str("uid"),
        reason=r.get_str("reason", optional=True))
    # documents written before boards were stored have none: the target's host then
    board = r.get_str("board", optional=True)
    if board is not None and not 0 < len(board) <= 255:
        raise ImportFormatError(f"{where}.board: must be 1 to 255 characters")
    run.board = board or board_of(run.target, run.hostname)
    for i, sc in enumerate(r.get_list("scenarios")):
        run.scenarios.append(_scenario_from_json(sc, f"{where}.scenarios[{i}]"))
    r.done()
    return run


def _text(value: Any, where: str) -> str:
    """A string value."""
    if not isinstance(value, str):
        raise ImportFormatError(f"{where}: expected a string")
    return value


def _scenario_from_json(obj: Any, where: str) -> ScenarioDetail:
    """One scenario, strictly."""
    r = _Reader(obj, where)
    sc = ScenarioDetail(id=0, name=r.get_str("name"), loads=r.get_list("loads"),
                        load_cpus=r.get_str("load_cpus", optional=True),
                        measure_cpus=r.get_str("measure_cpus", optional=True),
                        intensity=r.get_dict("intensity", optional=True))
    for i, m in enumerate(r.get_list("measurements")):
        sc.measurements.append(_measurement_from_json(m, f"{where}.measurements[{i}]"))
    r.done()
    return sc


def _measurement_from_json(obj: Any, where: str) -> MeasurementDetail:
    """One measurement with its series, windows and spikes, strictly."""
    r = _Reader(obj, where)
    m = MeasurementDetail(
        id=0, name=r.get_str("name"), test=r.get_str("test"), params=r.get_dict("params"),
        command=[_text(v, f"{where}.command") for v in r.get_list("command")],
        status=r.get_str("status"), exit_code=r.get_int("exit_code", optional=True),
        reason=r.get_str("reason", optional=True),
        thresholds_ns=[_int(v, f"{where}.thresholds_ns", 0)
                       for v in r.get_list("thresholds_ns")],
        simulated=r.get_bool("simulated"), probe_version=r.get_str("probe_version"),
        t0_unix_ns=r.get_int("t0_unix_ns", optional=True),
        measured_ns=r.get_int("measured_ns", optional=True),
        elapsed_ns=r.get_int("elapsed_ns", optional=True), verdicts=r.get_list("verdicts"),
        data=_data(r, where), start=r.get_dict("start"))
    for i, s in enumerate(r.get_list("series")):
        m.series.append(_series_from_json(s, f"{where}.series[{i}]"))
    indices = {s.index for s in m.series}
    if len(indices) != len(m.series):
        raise ImportFormatError(f"{where}.series: two series share an index")
    m.windows.extend(_windows_from_json(r.get_list("windows"), f"{where}.windows"))
    for i, sp in enumerate(r.get_list("spikes")):
        s = _Reader(sp, f"{where}.spikes[{i}]")
        m.spikes.append(SpikeRecord(series=s.get_int("series", minimum=0), t_ns=s.get_int("t_ns"),
                                    latency_ns=s.get_int("latency_ns"),
                                    threshold_ns=s.get_int("threshold_ns", minimum=0)))
        s.done()
    # trace records and summary (issue 23): absent from older bundles
    traces = r._get("traces", True)
    if traces is not None:
        if not isinstance(traces, list):
            raise ImportFormatError(f"{where}.traces: expected an array")
        m.traces = [_trace(t, f"{where}.traces[{i}]") for i, t in enumerate(traces)]
    m.trace_info = r.get_dict("trace_info", optional=True)
    r.done()
    return mark_beyond_hist(m)


def _data(r: _Reader, where: str) -> dict[str, Any]:
    """A measurement's data object; from its JSON text, with each long array of
    [int,int] rows (a tool's histogram) or of floats (a tool's repeated results) read
    as a compact column (issue 36)."""
    raw = r._get("data", False)
    cut = _CUT.get()
    if isinstance(raw, msgspec.Raw):
        try:
            if cut is not None:  # the file's long arrays were cut out as it was read
                raw = _place(msgspec.json.decode(raw), *cut)
            else:
                raw = object_with_columns(raw, msgspec.json.decode)
        except msgspec.DecodeError as exc:
            raise ImportFormatError(f"{where}.data: not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise ImportFormatError(f"{where}.data: expected an object")
    return raw


def _trace(obj: Any, where: str) -> dict[str, Any]:
    """One trace record: an object whose link fields are integers (or null) and whose
    events are an array; the events themselves are read leniently by the analysis."""
    if not isinstance(obj, dict):
        raise ImportFormatError(f"{where}: expected an object")
    for key in ("series", "cpu", "t_ns", "latency_ns", "expected_ns", "woke_ns"):
        if obj.get(key) is not None:
            _int(obj[key], f"{where}.{key}")
    if not isinstance(obj.get("events", []), list):
        raise ImportFormatError(f"{where}.events: expected an array")
    return obj


def _series_from_json(obj: Any, where: str) -> SeriesDetail:
    """One series; its histogram must add up to its count."""
    r = _Reader(obj, where)
    s = SeriesDetail(
        index=r.get_int("index", minimum=0), label=r.get_str("label"),
        cpu=r.get_int("cpu", optional=True), count=r.get_int("count", minimum=0),
        min_ns=r.get_int("min_ns", optional=True), max_ns=r.get_int("max_ns", optional=True),
        sum_ns=r.get_int("sum_ns"), overruns=r.get_int("overruns", minimum=0),
        early=r.get_int("early", minimum=0), exceed=_pairs(r.get_list("exceed"), f"{where}.exceed"),
        worst=_pairs(r.get_list("worst"), f"{where}.worst"), warmup=r.get_dict("warmup"),
        hist=_hist(r.get_list("hist"), f"{where}.hist"),
        spikes_dropped=r.get_int("spikes_dropped", minimum=0),
        raw_dropped=r.get_int("raw_dropped", minimum=0), error=r.get_str("error", optional=True))
    r.done()
    if s.hist and sum(map(itemgetter(1), s.hist)) != s.count:
        raise ImportFormatError(f"{where}: histogram counts add up to "
                                f"{sum(map(itemgetter(1), s.hist))}, not count {s.count}")
    return s


def _windows_from_json(items: list[Any], where: str) -> list[WindowRecord]:
    """A measurement's windows; each histogram must add up to its window's count."""
    docs = [w if isinstance(w, _WindowDoc) else _window_doc(w, f"{where}[{i}]")
            for i, w in enumerate(items)]
    if not docs:
        return []
    # whitespace outside strings sits between tokens: without it, the compact form (a
    # histogram with a string in it fails the fast check and is read from the original)
    raws = [bytes(w.hist).translate(None, _WHITESPACE) for w in docs]
    texts = [raw.decode("utf-8") for raw in raws]
    if not _hists_add_up(raws, [w.count for w in docs]):
        # find and word the first bad one; re-encode them all compactly
        texts = [_window_hist(json.loads(bytes(w.hist)), w.count, f"{where}[{i}].hist")
                 for i, w in enumerate(docs)]
    return [WindowRecord(
        series=w.series, index=w.index, warmup=w.warmup, start_ns=w.start_ns,
        end_ns=w.end_ns, count=w.count, min_ns=w.min_ns, max_ns=w.max_ns,
        sum_ns=w.sum_ns, overruns=w.overruns, exceed=list(w.exceed), hist_json=text,
        early=w.early) for w, text in zip(docs, texts, strict=True)]


def _window_doc(obj: Any, where: str) -> _WindowDoc:
    """A window given as a plain dict (run_from_json callers), checked like decoded text."""
    try:
        return msgspec.json.decode(msgspec.json.encode(obj), type=_WindowDoc)
    except (msgspec.DecodeError, msgspec.EncodeError, TypeError):
        raise ImportFormatError(f"{where}: not a JSON object of JSON values") from None
    except msgspec.ValidationError as exc:
        raise ImportFormatError(_validation_line(str(exc), where)) from None


_DIGITS = b"0123456789"
_WHITESPACE = b" \t\n\r"
_SPACES = bytes.maketrans(b"[],", b"   ")
_FAST_LIMIT = 1 << 31  # values below it: a window's sum cannot overflow int64


def _hists_add_up(texts: list[bytes], counts: list[int]) -> bool:
    """True when every text is a compact list of [bucket, count] pairs of plain
    non-negative integers, buckets increasing, counts adding up to counts[i]
    (an empty histogram says nothing about its count, as in _window_hist).

    The texts are valid JSON (msgspec checked them), so a text whose only
    non-digit characters are "[[,],[,],...]" holds nothing but such integers.
    All windows are read by numpy in one pass.  False means "not sure": the caller
    then checks each window the slow way, which words the error.
    """
    pairs = []
    for text in texts:
        skeleton = text.translate(None, _DIGITS)
        n = (len(skeleton) - 1) // 4
        if skeleton != (b"[" + b"[,]," * (n - 1) + b"[,]]" if n else b"[]"):
            return False
        pairs.append(n)
    joined = b" ".join(t for t, n in zip(texts, pairs, strict=True) if n)
    values = (np.fromstring(joined.translate(_SPACES), dtype=np.int64, sep=" ")
              if joined else np.zeros(0, dtype=np.int64))
    if values.size != 2 * sum(pairs) or (values.size and int(values.max()) >= _FAST_LIMIT):
        return False
    buckets, sample_counts = values[0::2], values[1::2]
    sizes = np.array(pairs, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    full = sizes > 0
    expected = np.array(counts, dtype=object)[full]
    if values.size and not np.array_equal(
            np.add.reduceat(sample_counts, starts[full]).astype(object), expected):
        return False
    rising = buckets[1:] > buckets[:-1]
    rising[starts[full][1:] - 1] = True  # a window's first bucket follows another window
    return bool(rising.all())


def _window_hist(value: Any, count: int, where: str) -> str:
    """A window's histogram as compact JSON text, checked pair by pair."""
    hist = _hist(value, where)
    if hist and sum(map(itemgetter(1), hist)) != count:
        raise ImportFormatError(f"{where}: histogram counts do not add up to count")
    return json.dumps([list(p) for p in hist], separators=(",", ":"))


class NotJson(ImportFormatError):
    """The text is not JSON at all (as opposed to JSON that is not a valid run)."""


def loads(text: str | bytes | bytearray, where: str = "run") -> RunDetail:
    """A run bundle from rtbench-run/1 JSON text; ImportFormatError when invalid
    (NotJson when it is not JSON at all)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        with no_gc():  # many small objects, no cycles: the collector only slows it
            doc = _DECODER.decode(data)
    except msgspec.ValidationError as exc:  # (a subclass of DecodeError)
        _refuse_if_not_json(data, where)  # the shape is checked while parsing
        raise ImportFormatError(_validation_line(str(exc), where)) from None
    except msgspec.DecodeError as exc:
        raise NotJson(f"{where}: not valid JSON ({_near(str(exc), data)})") from None
    except UnicodeDecodeError as exc:
        raise NotJson(f"{where}: not valid JSON (not UTF-8 at byte {exc.start})") from None
    except RecursionError:
        raise NotJson(f"{where}: not valid JSON (nested too deeply)") from None
    try:
        with no_gc():
            return run_from_json(doc, where)
    except RecursionError:
        raise ImportFormatError(f"{where}: nested too deeply") from None


def load_path(path: str, where: str) -> RunDetail:
    """loads() of the file at path, read a chunk at a time with its long arrays of
    numbers cut out as columns (_jsonstream): the file is not held whole beside them.
    Read whole, as loads() reads, when that cannot be done or the document is refused
    (its message then names the place in the file), or when an array cut out is not
    in a measurement's data."""
    with open(path, "rb") as handle:
        cut = cut_columns(handle)
    if cut is not None:
        skeleton, token, columns = cut
        if not columns:
            return loads(skeleton, where)  # the file's bytes as they are
        placed: set[int] = set()
        mark = _CUT.set((token, columns, placed))
        try:
            run = loads(skeleton, where)
        except (ImportFormatError, ValueError, TypeError, KeyError, IndexError,
                OverflowError, AttributeError):
            run = None  # read whole below: the message is about the file
        finally:
            _CUT.reset(mark)
        del skeleton
        if run is not None and len(placed) == len(columns):
            return run
        del cut, columns, run
    with open(path, "rb") as handle:
        return loads(handle.read(), where)


def _refuse_if_not_json(data: bytes | bytearray, where: str) -> None:
    """NotJson when data is not JSON at all (a document of the wrong shape stops
    the typed decoder before it reaches a syntax error further on)."""
    try:
        with no_gc():
            msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise NotJson(f"{where}: not valid JSON ({_near(str(exc), data)})") from None
    except UnicodeDecodeError as exc:
        raise NotJson(f"{where}: not valid JSON (not UTF-8 at byte {exc.start})") from None
    except RecursionError:
        raise NotJson(f"{where}: not valid JSON (nested too deeply)") from None


def _near(message: str, data: bytes | bytearray) -> str:
    """msgspec's syntax error with the text at the byte it names (e.g. NaN)."""
    found = re.search(r"\(byte (\d+)\)", message)
    if not found:
        return message
    at = int(found.group(1))
    return f"{message} at {data[at:at + 12].decode('utf-8', 'replace')!r}"


def _validation_line(message: str, where: str) -> str:
    """msgspec's "... - at `$.a[0]`" as "where.a[0]: ..." in this module's words."""
    text, _, path = message.partition(" - at `$")
    text = text.replace("Object contains unknown field", "unknown field")
    text = re.sub(r"`([^`]*)`", r"'\1'", text)
    return f"{where}{path.rstrip('`')}: {text[:1].lower()}{text[1:]}"


class RunJsonExporter(Exporter):
    """rtbench's own JSON form of a run."""

    name = "json"
    summary = "rtbench-run/1 JSON: the whole run, re-importable and uploadable"
    suffix = ".json"

    def export(self, run: RunDetail) -> bytes:
        """The run as rtbench-run/1 JSON."""
        return (dumps(run) + "\n").encode("utf-8")


class RunJsonImporter(Importer):
    """Reads rtbench-run/1 JSON (one run)."""

    name = "json"
    summary = "rtbench-run/1 JSON written by `rtbench export --format json`"

    def detect(self, head: bytes, filename: str) -> bool:
        """The document names its schema near the start."""
        return b'"schema"' in head[:200] and SCHEMA.encode() in head[:200]

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """The one run in the file."""
        return [loads(data, filename)]

    def read_path(self, path: str, filename: str) -> list[RunDetail]:
        """The one run in the file at path, which is not read whole (load_path)."""
        return [load_path(path, filename)]
