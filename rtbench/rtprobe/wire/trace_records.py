"""rtprobe's `trace` and `trace_summary` records (docs/schema.md), checked and kept as dicts.

The probe copies the kernel's event text without interpreting it; this module checks the
record's shape only (members, types, the event tuples), so a reader of a stored trace can
rely on it.  Attribution (what the events mean) is the analysis layer's job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rtbench.rtprobe.wire.checks import RecordError, get, get_int

TRACE_CLOCKS = ("mono", "local+offset")
_TRACE_INTS = ("series", "cpu", "t_ns", "latency_ns", "expected_ns", "woke_ns",
               "window_start_ns", "window_end_ns", "events_in_window", "events_dropped", "lost")
_SUMMARY_INTS = ("threshold_ns", "max_spikes", "budget_bytes", "spikes_over", "spikes_traced",
                 "spikes_untraced", "lost")


@dataclass
class TraceRecord:
    """The kernel events of one spike's window (`raw` is the checked record)."""

    raw: dict[str, Any]


@dataclass
class TraceSummaryRecord:
    """How a run traced: events enabled and missing, spikes traced and not, restore."""

    raw: dict[str, Any]


def _check_event(event: Any, where: str, index: int) -> None:
    """One [ts_ns, cpu, pid, comm, "system:event", text] entry."""
    what = f"{where}'events'[{index}]"
    if not isinstance(event, list) or len(event) != 6:
        raise RecordError(f"{what} must be [ts_ns, cpu, pid, comm, event, text]")
    for pos in range(3):
        value = event[pos]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise RecordError(f"{what}[{pos}] must be a non-negative integer")
    if not all(isinstance(v, str) for v in event[3:]):
        raise RecordError(f"{what}: comm, event and text must be strings")
    system, _, name = event[4].partition(":")
    if not system or not name:
        raise RecordError(f"{what}: event {event[4][:60]!r} is not 'system:event'")


def parse_trace(obj: dict[str, Any], where: str) -> TraceRecord:
    """Check a `trace` record."""
    for key in _TRACE_INTS:
        if get_int(obj, key, where) < 0:
            raise RecordError(f"{where}member '{key}' must be >= 0")
    if get(obj, "clock", str, where) not in TRACE_CLOCKS:
        raise RecordError(f"{where}'clock' must be one of {', '.join(TRACE_CLOCKS)}")
    if not obj["window_start_ns"] <= obj["window_end_ns"]:
        raise RecordError(f"{where}'window_start_ns' is after 'window_end_ns'")
    events = get(obj, "events", list, where)
    for index, event in enumerate(events):
        _check_event(event, where, index)
    replaces = obj.get("replaces")
    if replaces is not None:
        if not isinstance(replaces, dict):
            raise RecordError(f"{where}'replaces' must be null or {{series, t_ns}}")
        for key in ("series", "t_ns"):
            if get_int(replaces, key, f"{where}'replaces': ") < 0:
                raise RecordError(f"{where}'replaces'.{key} must be >= 0")
    return TraceRecord(raw=obj)


def replaced_key(record: dict[str, Any]) -> tuple[int, int] | None:
    """(series, t_ns) of the earlier trace record this one replaces (None: none)."""
    replaces = record.get("replaces")
    if not isinstance(replaces, dict):
        return None
    return replaces["series"], replaces["t_ns"]


def parse_trace_summary(obj: dict[str, Any], where: str) -> TraceSummaryRecord:
    """Check a `trace_summary` record."""
    for key in _SUMMARY_INTS:
        if get_int(obj, key, where) < 0:
            raise RecordError(f"{where}member '{key}' must be >= 0")
    get_int(obj, "buffer_kb", where, nullable=True)
    for key in ("tracefs", "clock", "note"):
        get(obj, key, (str, type(None)), where)
    for key in ("events_enabled", "events_missing"):
        names = get(obj, key, list, where)
        if not all(isinstance(n, str) for n in names):
            raise RecordError(f"{where}'{key}' must list event names")
    get(obj, "restored", bool, where)
    return TraceSummaryRecord(raw=obj)
