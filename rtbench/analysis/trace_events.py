"""Kernel trace events of a `trace` record, read into typed values (pure).

A `trace` record (docs/schema.md) carries its events as
`[ts_ns, cpu, pid, comm, "system:event", text]`, `text` being the event's fields as the
kernel's text trace prints them.  This module reads the fields the attribution needs
(sched_switch in the modern `prev_comm=... ==> next_comm=...` form and the older
`comm:pid [prio] S ==> comm:pid [prio]` one, sched_waking/wakeup, IRQ and softirq
handlers, hrtimer expiry, the local timer, preemptirq and osnoise noise events).
Anything it cannot read is counted and left out, never raised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

# the softirq vectors as the kernel numbers them (include/linux/interrupt.h)
SOFTIRQ_NAMES = ("HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET",
                 "SCHED", "HRTIMER", "RCU")
_MAX_NS = 1 << 63
_KV = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(\S*)")
_SWITCH_MODERN = re.compile(
    r"prev_comm=(?P<pc>.*?) prev_pid=(?P<pp>-?\d+) prev_prio=(?P<ppr>-?\d+)"
    r"(?: prev_state=(?P<ps>\S*))? ==> next_comm=(?P<nc>.*?) next_pid=(?P<np>-?\d+)"
    r" next_prio=(?P<npr>-?\d+)")
# before Linux 3.x: "prev:12 [120] S ==> next:7 [49]" (state optional, maybe in parens)
_SWITCH_OLD = re.compile(
    r"^(?:task )?(?P<pc>.*):(?P<pp>-?\d+) \[(?P<ppr>-?\d+)\](?: \(?(?P<ps>[A-Za-z+|]*)\)?)?"
    r" ==> (?P<nc>.*):(?P<np>-?\d+) \[(?P<npr>-?\d+)\]")
_WAKE_MODERN = re.compile(r"comm=(?P<c>.*?) pid=(?P<p>-?\d+) prio=(?P<pr>-?\d+)")
_WAKE_OLD = re.compile(r"^(?:task )?(?P<c>.*):(?P<p>-?\d+) \[(?P<pr>-?\d+)\]")
# "vec=3 [action=NET_RX]"; kernels before 2.6.37 printed "softirq=3 action=NET_RX"
_SOFTIRQ = re.compile(r"(?:vec|softirq)=(?P<v>\d+)(?: \[?action=(?P<a>[A-Za-z_0-9]+)\]?)?")
_NOISE = re.compile(r"^(?P<what>.*?) start (?P<start>[\d.]+) duration (?P<dur>\d+) ns")


@dataclass(frozen=True)
class Event:
    """One trace event with the fields its kind carries (others left empty)."""

    ts_ns: int
    cpu: int
    pid: int  # the task that was current when the event fired
    comm: str
    name: str  # "system:event"
    text: str
    fields: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def event(self) -> str:
        """The event's name without its system ("sched_switch")."""
        return self.name.rpartition(":")[2]


@dataclass
class ParsedEvents:
    """The readable events of one record, in time order, and how many were not."""

    events: list[Event]
    unreadable: int


def parse_events(raw: Any) -> ParsedEvents:
    """The record's event list as Events sorted by time; malformed entries counted."""
    out: list[Event] = []
    bad = 0
    if not isinstance(raw, list):
        return ParsedEvents([], 0 if raw is None else 1)
    for item in raw:
        ev = parse_event(item)
        if ev is None:
            bad += 1
        else:
            out.append(ev)
    out.sort(key=lambda e: e.ts_ns)  # stable: same-time events keep the probe's order
    return ParsedEvents(with_known_comms(out), bad)


# What the kernel's text trace prints for a task whose name its comm cache no longer (or
# not yet) holds.
UNKNOWN_COMM = "<...>"


def with_known_comms(events: list[Event]) -> list[Event]:
    """events with each unknown task name (`<...>`) filled in from the names the same
    trace's events carry in their fields for that pid (sched_switch prev/next_comm,
    sched_waking/wakeup comm): the kernel names a task in the event line from a cache it
    may have lost the task from, but records the names in those events' own fields."""
    if not any(e.comm == UNKNOWN_COMM for e in events):
        return events
    names: dict[int, str] = {}
    for e in events:
        f = e.fields
        if e.event == "sched_switch" and f:
            for comm, pid in ((f["prev_comm"], f["prev_pid"]), (f["next_comm"], f["next_pid"])):
                if comm != UNKNOWN_COMM:
                    names.setdefault(pid, comm)
        elif e.event in ("sched_waking", "sched_wakeup") and f and f["comm"] != UNKNOWN_COMM:
            names.setdefault(f["pid"], f["comm"])
    return [replace(e, comm=names[e.pid]) if e.comm == UNKNOWN_COMM and e.pid in names
            else e for e in events]


def parse_event(item: Any) -> Event | None:
    """One `[ts_ns, cpu, pid, comm, name, text]` tuple as an Event (None if malformed)."""
    if not isinstance(item, (list, tuple)) or len(item) != 6:
        return None
    ts, cpu, pid, comm, name, text = item
    if not (_is_int(ts) and _is_int(cpu) and _is_int(pid)):
        return None
    if not (isinstance(comm, str) and isinstance(name, str) and isinstance(text, str)):
        return None
    if not (0 <= ts < _MAX_NS and 0 <= cpu < 1 << 20 and -1 <= pid < 1 << 31):
        return None
    return Event(ts, cpu, pid, comm, name, text, event_fields(name, text))


def _is_int(value: Any) -> bool:
    """A JSON integer (bool excluded)."""
    return isinstance(value, int) and not isinstance(value, bool)


def event_fields(name: str, text: str) -> dict[str, Any]:
    """The fields of one event's text that the attribution reads ({} if unreadable)."""
    event = name.rpartition(":")[2]
    try:
        if event == "sched_switch":
            return _switch(text)
        if event in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            return _wake(text)
        if event in ("softirq_entry", "softirq_exit", "softirq_raise"):
            return _softirq(text)
        if event.endswith("_noise"):
            return _noise(text)
        return _key_values(text)
    except (ValueError, OverflowError):
        return {}


def _switch(text: str) -> dict[str, Any]:
    """sched_switch in the modern or the older format."""
    m = _SWITCH_MODERN.search(text) or _SWITCH_OLD.search(text)
    if not m:
        return {}
    return {"prev_comm": m.group("pc"), "prev_pid": int(m.group("pp")),
            "prev_prio": int(m.group("ppr")), "prev_state": m.group("ps") or "",
            "next_comm": m.group("nc"), "next_pid": int(m.group("np")),
            "next_prio": int(m.group("npr"))}


def _wake(text: str) -> dict[str, Any]:
    """sched_waking / sched_wakeup: the woken task."""
    m = _WAKE_MODERN.search(text) or _WAKE_OLD.search(text)
    if not m:
        return {}
    return {"comm": m.group("c"), "pid": int(m.group("p")), "prio": int(m.group("pr"))}


def _softirq(text: str) -> dict[str, Any]:
    """softirq_entry/exit/raise: vector and its name."""
    m = _SOFTIRQ.search(text)
    if not m:
        return {}
    vec = int(m.group("v"))
    action = m.group("a") or (SOFTIRQ_NAMES[vec] if vec < len(SOFTIRQ_NAMES) else str(vec))
    return {"vec": vec, "action": action}


def _noise(text: str) -> dict[str, Any]:
    """osnoise irq/softirq/thread/nmi noise: what, and its duration."""
    m = _NOISE.search(text)
    if not m:
        return {}
    return {"what": m.group("what").strip(), "duration_ns": int(m.group("dur"))}


def _key_values(text: str) -> dict[str, Any]:
    """key=value fields (irq=24 name=eth0, function=..., vector=236, caller=...)."""
    out: dict[str, Any] = {}
    for key, value in _KV.findall(text):
        out.setdefault(key, value)
    for key in ("irq", "vector", "expires", "now"):
        if key in out:
            try:
                out[key] = int(out[key])
            except ValueError:
                del out[key]
    return out


def policy_of(prio: int | None) -> str:
    """The scheduling class a kernel prio names: "RT 95", "nice 0", "deadline"."""
    if prio is None:
        return "prio unknown"
    if prio < 0:
        return "deadline"
    if prio < 100:
        return f"RT {99 - prio}"
    if prio < 140:
        return f"nice {prio - 120}"
    return f"prio {prio}"
