"""A kernel text trace (`trace-cmd report`, or tracefs' `trace` file) as a traced run.

Lines look like `comm-pid [cpu] (flags) secs.usecs: event: fields`; the flags column
(`d.h2.`) of tracefs' own text and of `trace-cmd report -l` is optional.  The measured
thread is the real-time thread (kernel prio below 100; else any thread) woken most
often by its own timer (`hrtimer_start` of `hrtimer_wakeup`, then `sched_waking` inside
`hrtimer_expire_entry`).  Each of its wake-ups is one sample: latency = the
`sched_switch` that runs it minus the `expires=` its timer was set to (where the kernel
traced no such switch, as some do not for switches out of the idle task, the first event
the thread itself emits after its wake-up, a little later than the switch).  Samples at or
above 100 us become spikes, each with a `trace` record of its CPU's events from 100 us
before the expected expiry to the switch-in: the same records rtprobe's `--trace` writes
(docs/schema.md), so `rtbench explain` attributes them alike.  The timer's clock is
matched to the trace's by `now=` of `hrtimer_expire_entry`; when they differ, the
median offset converts ("clock": "unknown+offset").  `[LOST n EVENTS]` lines are counted.

Memory: the file is read twice, a line at a time, and its events are not kept: the
first pass keeps the timer wake-ups of every thread (and the names, priorities and clock
samples they need), the second, knowing the spikes to trace, keeps per CPU the newest
64 KiB of event text (rtprobe's default `--trace-budget`), from which each spike's window
takes its events when its end passes (`events_dropped` counts the older ones, as rtprobe
does).  Windows that overlap (huge latencies, a timer clock the trace does not share)
share those events instead of copying the trace once per spike, and all windows together
keep at most half the file's size (the worst spikes first, each its newest events).
When the windows' events are more than that, the pass keeps none of them but the size
of each event (4 bytes an event), the share of each window is counted from those
sizes, and a third pass keeps only the shares: no window holds its CPU's whole recent
events while waiting for the budget (1,000 windows of 64 KiB held up to 2.9 times a
4 MiB file).  The records list the kept event tuples themselves, not a copy of each.
A file whose CPUs are not merged in time order is read in time order: each event's
time and line offset are sorted (16 bytes an event), and the events read again from
their lines in that order.

Completeness: a line cut short is refused (no newline at the end, or not a trace line).
A text trace has no closing line and `trace-cmd report` no count of its events, so a cut
between two lines reads as a shorter trace: the run is stored `partial` ("completeness
cannot be checked").  tracefs' `entries-in-buffer` header counts entries, not lines (an
event such as a stack trace spans several), so it is not checked against the lines.
"""

from __future__ import annotations

import re
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from rtbench.bundle import RunDetail
from rtbench.interop._build import (
    ToolSeries,
    tool_measurement,
    tool_run,
    unverifiable,
)
from rtbench.interop.base import Importer, ImportFormatError
from rtbench.rtprobe.wire.records import SpikeRecord

THRESHOLD_NS = 100_000
MARGIN_NS = 100_000
MAX_TRACED = 1000
# event text kept per spike window (rtprobe's default --trace-budget), and the bytes one
# event takes in a record besides its thread name and text
BUDGET_BYTES = 64 * 1024
_EVENT_BYTES = 48
# (ts_ns, cpu, pid, comm, name, text): an event of the trace contract (docs/schema.md)
Event = tuple[int, int, int, str, str, str]
_LINE = re.compile(
    r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d{1,6})\]"
    r"(?:\s+(?P<flags>[A-Za-z.0-9]{4,6}))?\s+(?P<secs>\d{1,12})\.(?P<frac>\d{1,9}):"
    r"\s+(?P<event>[A-Za-z_][\w:]*):\s?(?P<text>.*)$")
_LOST = re.compile(r"\[LOST (\d+) EVENTS?\]")
_HEADER = re.compile(r"^\s*(#|$|cpus=\d+|version\s*=|CPU\s*\d+ is empty|CPU:\d+\s|"
                     r"\[LOST|trace-cmd:|Trace clock|clock:)")
# the system of each event the attribution reads (a text trace prints the event alone)
SYSTEMS = {
    "sched_switch": "sched", "sched_waking": "sched", "sched_wakeup": "sched",
    "sched_wakeup_new": "sched", "irq_handler_entry": "irq", "irq_handler_exit": "irq",
    "softirq_entry": "irq", "softirq_exit": "irq", "softirq_raise": "irq",
    "hrtimer_start": "timer", "hrtimer_expire_entry": "timer",
    "hrtimer_expire_exit": "timer", "hrtimer_cancel": "timer",
    "local_timer_entry": "irq_vectors", "local_timer_exit": "irq_vectors",
    "irq_disable": "preemptirq", "irq_enable": "preemptirq",
    "preempt_disable": "preemptirq", "preempt_enable": "preemptirq",
    "irq_noise": "osnoise", "softirq_noise": "osnoise", "thread_noise": "osnoise",
    "nmi_noise": "osnoise", "sample_threshold": "osnoise", "timerlat_sample": "osnoise",
}
# the events a trace should hold for a full attribution (docs/tests/trace.md)
WANTED = ("sched:sched_waking", "sched:sched_wakeup", "sched:sched_switch",
          "irq:irq_handler_entry", "irq:irq_handler_exit", "irq:softirq_entry",
          "irq:softirq_exit", "irq:softirq_raise", "timer:hrtimer_start",
          "timer:hrtimer_expire_entry", "timer:hrtimer_expire_exit",
          "irq_vectors:local_timer_entry", "irq_vectors:local_timer_exit",
          "preemptirq:irq_disable", "preemptirq:irq_enable")
_EXPIRES = re.compile(r"function=hrtimer_wakeup\b.*?\bexpires=(\d+)")
_NOW = re.compile(r"\bnow=(\d+)")


@dataclass(slots=True)
class _Wake:
    """One wake-up of a thread by its timer."""

    pid: int
    cpu: int
    expires: int  # in the timer's clock
    switch_ns: int | None = None
    # run from the thread's first own event: the kernel traced no switch-in
    untraced_switch: bool = False


class TraceCmdImporter(Importer):
    """`trace-cmd report` / tracefs `trace` text with sched, irq and timer events."""

    name = "trace-cmd"
    summary = "trace-cmd report / tracefs trace text (sched, irq, timer events): spikes " \
              "with their trace windows"

    def detect(self, head: bytes, filename: str) -> bool:
        """A text trace: trace lines with sched or timer events."""
        text = head.decode("utf-8", "replace")
        lines = [ln for ln in text.splitlines()[:200] if _LINE.match(ln)]
        return len(lines) >= 3 and any(": sched_switch:" in ln or ": hrtimer_" in ln
                                       for ln in lines)

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run with one measurement: the measured thread's wake-ups and spikes."""
        scan = _Scan()
        for event in _events(data, filename, scan):
            scan.feed(event)
        source: Callable[[], Iterable[Event]] = lambda: _events(data, filename)  # noqa: E731
        if not scan.ordered:
            # CPU buffers not merged in time order: sorted, as a reader of the trace would
            source = _time_order(data, filename)
            lost, scan = scan.lost, _Scan()
            scan.lost = lost
            for event in source():
                scan.feed(event)
        if not scan.count:
            raise ImportFormatError(f"{filename}: no trace event lines")
        offset, clock = _clock_offset(scan.diffs)
        wakes = scan.wakes
        if not wakes:
            raise ImportFormatError(
                f"{filename}: line 1: no thread woken by its own timer (hrtimer_wakeup): "
                "record with -e sched -e irq -e timer while the measuring thread runs")
        for wake in wakes:
            wake.expires += offset
        pid = _measured_pid(scan.prio, wakes)
        mine = [w for w in wakes if w.pid == pid and w.switch_ns is not None]
        if not mine:
            raise ImportFormatError(f"{filename}: thread {pid} was never switched in after "
                                    "its timer woke it")
        runs = [_run(filename, source, scan, mine, clock, pid, len(data) // 2)]
        return unverifiable(runs, filename, "a text trace has no closing line and no count "
                            "of its events: a cut between two lines reads as a shorter trace")


def _lines(data: bytes, filename: str) -> Iterator[tuple[int, int, str]]:
    """(line number, offset, text) of each line of data, decoded one at a time; a file
    that is not UTF-8 text, holds NUL bytes or is cut inside its last line is refused."""
    if not data.endswith(b"\n") and data.strip():
        last = data.count(b"\n") + 1
        raise ImportFormatError(f"{filename}: line {last}: cut short (the file does not "
                                "end with a newline); import the complete output")
    start, lineno, size = 0, 0, len(data)
    while start < size:
        end = data.find(b"\n", start)
        end = size if end < 0 else end
        raw = data[start:end]
        at, start, lineno = start, end + 1, lineno + 1
        if b"\x00" in raw:
            raise ImportFormatError(f"{filename}: not a text file (NUL bytes)")
        try:
            yield lineno, at, raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ImportFormatError(f"{filename}: not a text file (invalid UTF-8)") from None


def _events(data: bytes, filename: str, scan: _Scan | None = None) -> Iterator[Event]:
    """Every event line as a contract tuple (ts_ns, cpu, pid, comm, name, text), in the
    file's order (a text trace is in time order; scan.ordered says whether it was), the
    events the trace says it lost counted in scan.lost; the first line that is neither
    is refused."""
    shared: dict[str, str] = {}  # one copy of each thread and event name
    for lineno, _, line in _lines(data, filename):
        m = _LINE.match(line)
        if m is None:
            found = _LOST.search(line)
            if found:
                if scan is not None:
                    scan.lost += int(found.group(1))
                continue
            if _HEADER.match(line):
                continue
            raise ImportFormatError(f"{filename}: line {lineno}: not a trace line "
                                    f"({line.strip()[:60]!r})")
        yield _event(m, shared)


def _stamp(m: re.Match[str]) -> int:
    """An event line's time in ns."""
    return int(m.group("secs")) * 10**9 + int(m.group("frac").ljust(9, "0"))


def _event(m: re.Match[str], shared: dict[str, str]) -> Event:
    """The contract tuple of a matched event line (names shared through shared)."""
    event = m.group("event")
    name = event if ":" in event else f"{SYSTEMS.get(event, 'unknown')}:{event}"
    comm = m.group("comm").strip()
    return (_stamp(m), int(m.group("cpu")), int(m.group("pid")),
            shared.setdefault(comm, comm), shared.setdefault(name, name), m.group("text"))


def _time_order(data: bytes, filename: str) -> Callable[[], Iterable[Event]]:
    """The events of a trace whose CPUs are not merged, in time order (ties in the file's
    order, as a stable sort by time gives), each read again from its line when iterated:
    only each event's time and line offset are kept (16 bytes an event; sorting the
    events themselves held about three times the file).  A time past 64 bits: sorted
    whole."""
    stamps, starts = array("q"), array("q")
    try:
        for _, start, line in _lines(data, filename):
            m = _LINE.match(line)
            if m is not None:
                stamps.append(_stamp(m))
                starts.append(start)
    except OverflowError:
        ordered = sorted(_events(data, filename), key=lambda e: e[0])
        return lambda: ordered
    order = np.argsort(np.frombuffer(stamps, dtype=np.int64), kind="stable")
    del stamps
    offsets = np.frombuffer(starts, dtype=np.int64)

    def events() -> Iterator[Event]:
        """The events in time order, each parsed from its line."""
        shared: dict[str, str] = {}
        for first in range(0, len(order), 65536):
            for start in offsets[order[first:first + 65536]].tolist():
                end = data.find(b"\n", start)
                m = _LINE.match(data[start:end if end >= 0 else len(data)].decode("utf-8"))
                assert m is not None  # matched when the offsets were taken
                yield _event(m, shared)
    return events


class _Scan:
    """What the first pass over the events keeps: counts, names, the timer-wake-ups of
    every thread (their expiry in the timer's clock) and the clock offset samples."""

    def __init__(self) -> None:
        self.count = 0
        self.lost = 0
        self.t0 = 0
        self.last_ts = 0
        self.ordered = True
        self.seen: set[str] = set()
        self.comms: dict[int, str] = {}  # pid -> its first comm
        self.prio: dict[int, int] = {}  # pid -> lowest next_prio it was switched in at
        self.diffs: list[int] = []  # hrtimer_expire_entry time minus its now=
        self.wakes: list[_Wake] = []
        self._armed: dict[int, int] = {}  # pid -> expires
        self._in_wakeup: dict[int, bool] = {}  # cpu -> inside hrtimer_wakeup's expiry
        self._pending: dict[int, _Wake] = {}  # pid -> woken, not yet run

    def feed(self, event: Event) -> None:
        """Take one event (in file order)."""
        ts, cpu, pid, comm, name, text = event
        if not self.count:
            self.t0 = ts
        self.ordered = self.ordered and ts >= self.last_ts
        self.count, self.last_ts = self.count + 1, ts
        self.comms.setdefault(pid, comm)
        if not name.startswith("unknown:"):
            self.seen.add(name)
        if name == "timer:hrtimer_start":
            m = _EXPIRES.search(text)
            if m:
                self._armed[pid] = int(m.group(1))
        elif name == "timer:hrtimer_expire_entry":
            self._in_wakeup[cpu] = "function=hrtimer_wakeup" in text
            now = _NOW.search(text)
            if now:
                self.diffs.append(ts - int(now.group(1)))
        elif name == "timer:hrtimer_expire_exit":
            self._in_wakeup[cpu] = False
        elif name == "sched:sched_waking" and self._in_wakeup.get(cpu):
            m = re.search(r"\bpid=(\d+)", text)
            if m and int(m.group(1)) in self._armed:
                woken = int(m.group(1))
                wake = _Wake(woken, cpu, self._armed.pop(woken))
                self._pending[woken] = wake
                self.wakes.append(wake)
        elif name == "sched:sched_switch":
            m = re.search(r"next_pid=(\d+) next_prio=(-?\d+)", text) or \
                re.search(r"next_pid=(\d+)", text)
            if m and m.lastindex == 2:
                woken, value = int(m.group(1)), int(m.group(2))
                self.prio[woken] = min(value, self.prio.get(woken, value))
            if m and int(m.group(1)) in self._pending:
                wake = self._pending.pop(int(m.group(1)))
                wake.switch_ns, wake.cpu = ts, cpu
                return
        if pid in self._pending and name != "sched:sched_switch":
            # running without a traced switch-in: some kernels do not trace every
            # switch out of the idle task; the thread's first own event stands for it
            wake = self._pending.pop(pid)
            wake.switch_ns, wake.cpu, wake.untraced_switch = ts, cpu, True


def _clock_offset(diffs: list[int]) -> tuple[int, str]:
    """trace time minus timer time (0 when the trace clock is the timers' monotonic one),
    from each hrtimer_expire_entry's time minus its now=."""
    if not diffs:
        return 0, "mono"
    diffs.sort()
    median = diffs[len(diffs) // 2]
    if abs(median) < 2_000:  # a text trace prints microseconds
        return 0, "mono"
    return median, "unknown+offset"


def _measured_pid(prio: dict[int, int], wakes: list[_Wake]) -> int:
    """The real-time thread woken most often by its timer (any thread if none is RT)."""
    counts: dict[int, int] = {}
    for w in wakes:
        counts[w.pid] = counts.get(w.pid, 0) + 1
    rt = {p: n for p, n in counts.items() if prio.get(p, 120) < 100}
    pool = rt or counts
    return max(sorted(pool), key=lambda p: pool[p])


def _run(filename: str, source: Callable[[], Iterable[Event]], scan: _Scan,
         mine: list[_Wake], clock: str, pid: int, total_budget: int) -> RunDetail:
    """The run: one series of the thread's latencies, its spikes and their windows."""
    latencies = [max(0, (w.switch_ns or 0) - w.expires) for w in mine]
    comm = scan.comms.get(pid, str(pid))
    cpus = sorted({w.cpu for w in mine})
    series = ToolSeries(label=f"{comm}-{pid}", cpu=cpus[0] if len(cpus) == 1 else None,
                        count=len(mine), min_ns=min(latencies), max_ns=max(latencies),
                        avg_ns=sum(latencies) / len(latencies), samples_ns=latencies)
    m = tool_measurement(name="trace-cmd", test="trace", series=[series], where=filename,
                         data={"measured_thread": f"{comm}:{pid}",
                               "latency": "sched_switch to the thread minus its timer's "
                                          "expiry",
                               # samples timed to the thread's first own event instead
                               "switch_in_untraced": sum(w.untraced_switch for w in mine)})
    m.thresholds_ns = [THRESHOLD_NS]
    over = [(w, lat) for w, lat in zip(mine, latencies, strict=True) if lat >= THRESHOLD_NS]
    for w, lat in over:
        m.spikes.append(SpikeRecord(series=0, t_ns=(w.switch_ns or 0) - scan.t0,
                                    latency_ns=lat, threshold_ns=THRESHOLD_NS))
    traced = sorted(over, key=lambda p: -p[1])[:MAX_TRACED]
    wakes = [w for w, _ in traced]
    windows, sizes, whole = _windows(source(), wakes, total_budget)
    if not whole:
        # the windows' events are more than the budget: the worst spikes first keep
        # their newest events within it, then a second pass keeps only those
        windows, _, _ = _windows(source(), wakes, total_budget,
                                 _shares(wakes, windows, sizes, total_budget))
    records: list[dict[str, Any]] = []
    for w, lat in sorted(traced, key=lambda p: p[0].expires):
        start, end = w.expires - MARGIN_NS, w.switch_ns or 0
        window = windows[id(w)]
        records.append({
            "schema": "rtprobe/1", "type": "trace", "series": 0, "cpu": w.cpu,
            "t_ns": end - scan.t0, "latency_ns": lat, "expected_ns": w.expires,
            "woke_ns": end, "window_start_ns": start, "window_end_ns": end, "clock": clock,
            "events": window.kept, "events_in_window": window.count,
            "events_dropped": window.count - len(window.kept), "lost": 0})
    m.traces = records
    m.trace_info = {
        "tracefs": None, "clock": clock, "threshold_ns": THRESHOLD_NS, "buffer_kb": None,
        "max_spikes": MAX_TRACED, "budget_bytes": BUDGET_BYTES,
        "events_enabled": sorted(scan.seen),
        "events_missing": [w for w in WANTED if w not in scan.seen],
        "spikes_over": len(over), "spikes_traced": len(traced),
        "spikes_untraced": len(over) - len(traced), "lost": scan.lost, "restored": None,
        "note": "imported from a text trace: 'events_missing' are events the file does "
                "not hold"}
    return tool_run(tool="trace-cmd", tool_version="", command_line=None,
                    fmt="trace-cmd", measurements=[m])


def _event_bytes(event: Event) -> int:
    """The bytes an event takes in a trace record (as the budget counts them)."""
    return _EVENT_BYTES + len(event[3]) + len(event[5])


@dataclass(slots=True)
class _Window:
    """One traced spike's window on its CPU: the events kept and how many it held."""

    start: int
    end: int
    count: int = 0  # events from start to end
    kept: list[Event] = field(default_factory=list)
    held: int = 0  # its newest events still held by its CPU when it closed
    last: int = 0  # the number of its CPU's events when it closed
    share: int = -1  # how many of its newest events it keeps (-1: all it can)


def _windows(events: Iterable[Event], wakes: list[_Wake], budget: int,
             shares: dict[int, int] | None = None
             ) -> tuple[dict[int, _Window], dict[int, array[int]], bool]:
    """The window of each wake (by id): its CPU's events from its expiry minus the margin
    to its switch-in, the newest kept up to BUDGET_BYTES.  One pass: per CPU the newest
    BUDGET_BYTES of events are held, and a window takes its part of them when its end
    passes, so overlapping windows share their events instead of copying the trace.

    With shares (by id: how many of its newest events each window keeps), each window
    keeps that many.  Without, every window keeps all it can while all windows' events
    together fit in budget bytes; once they do not, none keeps any (whole is False) and
    the byte size of each event of each CPU (sizes) is returned for _shares()."""
    found = {id(w): _Window(w.expires - MARGIN_NS, w.switch_ns or 0,
                            share=-1 if shares is None else shares[id(w)]) for w in wakes}
    starts: dict[int, list[_Window]] = {}
    ends: dict[int, list[_Window]] = {}
    for w in wakes:
        starts.setdefault(w.cpu, []).append(found[id(w)])
        ends.setdefault(w.cpu, []).append(found[id(w)])
    for cpu in starts:
        starts[cpu].sort(key=lambda win: -win.start)  # popped from the end: earliest first
        ends[cpu].sort(key=lambda win: -win.end)
    recent: dict[int, deque[Event]] = {cpu: deque() for cpu in starts}
    sizes = {cpu: array("I") for cpu in starts} if shares is None else {}
    held = dict.fromkeys(starts, 0)  # bytes in recent
    seen = dict.fromkeys(starts, 0)  # events of the CPU so far
    before: dict[int, int] = {}  # id(window) -> events of its CPU before its start
    keeping = _Keeping(budget)
    for event in events:
        ts, cpu = event[0], event[1]
        if cpu not in recent:
            continue
        pending_starts, pending_ends = starts[cpu], ends[cpu]
        while pending_starts and pending_starts[-1].start <= ts:
            before[id(pending_starts.pop())] = seen[cpu]
        while pending_ends and pending_ends[-1].end < ts:
            keeping.close(pending_ends.pop(), recent[cpu], seen[cpu], before)
        seen[cpu] += 1
        recent[cpu].append(event)
        size = _event_bytes(event)
        held[cpu] += size
        if shares is None:
            sizes[cpu].append(min(size, 0xFFFFFFFF))
        while held[cpu] > BUDGET_BYTES:
            held[cpu] -= _event_bytes(recent[cpu].popleft())
    for cpu, pending_ends in ends.items():
        for win in starts[cpu]:  # windows whose start no event reached: empty
            before[id(win)] = seen[cpu]
        while pending_ends:
            keeping.close(pending_ends.pop(), recent[cpu], seen[cpu], before)
    if not keeping.whole:
        for win in found.values():
            win.kept = []
    return found, sizes, keeping.whole


class _Keeping:
    """Which events a closing window keeps: its share, or all while they fit."""

    def __init__(self, budget: int) -> None:
        self.left = budget
        self.whole = True

    def close(self, win: _Window, recent: deque[Event], seen: int,
              before: dict[int, int]) -> None:
        """A window whose end has passed: its count, how many of its events its CPU
        still held, and those it keeps."""
        win.count = seen - before.get(id(win), seen)
        win.last = seen
        win.held = 0
        for event in reversed(recent):  # newest first: the window's are the newest
            if event[0] < win.start:
                break
            win.held += 1
        if win.share >= 0:
            share = win.share
            win.kept = list(islice(recent, len(recent) - share, None)) if share else []
            return
        if not self.whole:
            return
        kept = list(islice(recent, len(recent) - win.held, None))
        self.left -= sum(_event_bytes(e) for e in kept)
        if self.left < 0:
            self.whole = False  # dropped by _windows: a second pass keeps the shares
        else:
            win.kept = kept


def _shares(wakes: list[_Wake], windows: dict[int, _Window], sizes: dict[int, array[int]],
            budget: int) -> dict[int, int]:
    """How many of its newest events each window keeps (by id): the wakes in order (the
    worst spikes first) each keep their newest events while all kept fit in budget bytes."""
    shares: dict[int, int] = {}
    left = budget
    for w in wakes:
        win, cpu_sizes = windows[id(w)], sizes[w.cpu]
        kept = 0
        for index in range(win.last - 1, win.last - 1 - win.held, -1):
            if cpu_sizes[index] > left:
                break
            left -= cpu_sizes[index]
            kept += 1
        shares[id(w)] = kept
    return shares
