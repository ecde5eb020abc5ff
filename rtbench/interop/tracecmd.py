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

Memory: the file is read a line at a time (no decoded copy of the whole text, no list of
its lines); each event is one tuple whose thread and event names are shared, about twice
the size of its line.  A spike's window keeps its newest events up to rtprobe's default
budget of 64 KiB of event text (`events_dropped` counts the rest, as rtprobe does), and
all windows together keep at most half the file's size: windows that overlap (huge
latencies, a clock the timers do not share) no longer copy the trace once per spike.

Completeness: a line cut short is refused (no newline at the end, or not a trace line).
A text trace has no closing line and `trace-cmd report` no count of its events, so a cut
between two lines reads as a shorter trace: the run is stored `partial` ("completeness
cannot be checked").  tracefs' `entries-in-buffer` header counts entries, not lines (an
event such as a stack trace spans several), so it is not checked against the lines.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from rtbench.bundle import RunDetail
from rtbench.interop._build import (
    ToolSeries,
    tool_measurement,
    tool_run,
    unverifiable,
)
from rtbench.interop.base import Importer, ImportFormatError
from rtbench.rtprobe.records import SpikeRecord

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


@dataclass
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
        events, lost = _events(data, filename)
        if not events:
            raise ImportFormatError(f"{filename}: no trace event lines")
        offset, clock = _clock_offset(events)
        wakes = _wakes(events, offset)
        if not wakes:
            raise ImportFormatError(
                f"{filename}: line 1: no thread woken by its own timer (hrtimer_wakeup): "
                "record with -e sched -e irq -e timer while the measuring thread runs")
        pid = _measured_pid(events, wakes)
        mine = [w for w in wakes if w.pid == pid and w.switch_ns is not None]
        if not mine:
            raise ImportFormatError(f"{filename}: thread {pid} was never switched in after "
                                    "its timer woke it")
        runs = [_run(filename, events, mine, lost, clock, pid, len(data) // 2)]
        return unverifiable(runs, filename, "a text trace has no closing line and no count "
                            "of its events: a cut between two lines reads as a shorter trace")


def _lines(data: bytes, filename: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of data, decoded one at a time; a file that is not
    UTF-8 text, holds NUL bytes or is cut inside its last line is refused."""
    if data.strip() and not data.endswith(b"\n"):
        last = data.count(b"\n") + 1
        raise ImportFormatError(f"{filename}: line {last}: cut short (the file does not "
                                "end with a newline); import the complete output")
    start, lineno, size = 0, 0, len(data)
    while start < size:
        end = data.find(b"\n", start)
        end = size if end < 0 else end
        raw = data[start:end]
        start, lineno = end + 1, lineno + 1
        if b"\x00" in raw:
            raise ImportFormatError(f"{filename}: not a text file (NUL bytes)")
        try:
            yield lineno, raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ImportFormatError(f"{filename}: not a text file (invalid UTF-8)") from None


def _events(data: bytes, filename: str) -> tuple[list[Event], int]:
    """Every event line as a contract tuple (ts_ns, cpu, pid, comm, name, text), in time
    order, and the events the trace says it lost; the first line that is neither is
    refused."""
    out: list[Event] = []
    lost = 0
    shared: dict[str, str] = {}  # one copy of each thread and event name
    ordered = True
    for lineno, line in _lines(data, filename):
        m = _LINE.match(line)
        if m is None:
            found = _LOST.search(line)
            if found:
                lost += int(found.group(1))
                continue
            if _HEADER.match(line):
                continue
            raise ImportFormatError(f"{filename}: line {lineno}: not a trace line "
                                    f"({line.strip()[:60]!r})")
        ts = int(m.group("secs")) * 10**9 + int(m.group("frac").ljust(9, "0"))
        event = m.group("event")
        name = event if ":" in event else f"{SYSTEMS.get(event, 'unknown')}:{event}"
        comm = m.group("comm").strip()
        ordered = ordered and (not out or out[-1][0] <= ts)
        out.append((ts, int(m.group("cpu")), int(m.group("pid")),
                    shared.setdefault(comm, comm), shared.setdefault(name, name),
                    m.group("text")))
    if not ordered:
        out.sort(key=lambda e: e[0])
    return out, lost


def _clock_offset(events: list[Event]) -> tuple[int, str]:
    """trace time minus timer time (0 when the trace clock is the timers' monotonic one)."""
    diffs = []
    for e in events:
        if e[4] == "timer:hrtimer_expire_entry":
            m = _NOW.search(e[5])
            if m:
                diffs.append(e[0] - int(m.group(1)))
    if not diffs:
        return 0, "mono"
    diffs.sort()
    median = diffs[len(diffs) // 2]
    if abs(median) < 2_000:  # a text trace prints microseconds
        return 0, "mono"
    return median, "unknown+offset"


def _wakes(events: list[Event], offset: int) -> list[_Wake]:
    """Every timer wake-up of a thread, with the switch that ran it."""
    armed: dict[int, int] = {}  # pid -> expires (trace clock)
    in_wakeup: dict[int, bool] = {}  # cpu -> inside hrtimer_expire_entry of hrtimer_wakeup
    pending: dict[int, _Wake] = {}  # pid -> woken, not yet run
    out: list[_Wake] = []
    for ts, cpu, pid, _comm, name, text in events:
        if name == "timer:hrtimer_start":
            m = _EXPIRES.search(text)
            if m:
                armed[pid] = int(m.group(1)) + offset
        elif name == "timer:hrtimer_expire_entry":
            in_wakeup[cpu] = "function=hrtimer_wakeup" in text
        elif name == "timer:hrtimer_expire_exit":
            in_wakeup[cpu] = False
        elif name == "sched:sched_waking" and in_wakeup.get(cpu):
            m = re.search(r"\bpid=(\d+)", text)
            if m and int(m.group(1)) in armed:
                woken = int(m.group(1))
                wake = _Wake(woken, cpu, armed.pop(woken))
                pending[woken] = wake
                out.append(wake)
        elif name == "sched:sched_switch":
            m = re.search(r"next_pid=(\d+)", text)
            if m and int(m.group(1)) in pending:
                wake = pending.pop(int(m.group(1)))
                wake.switch_ns, wake.cpu = ts, cpu
                continue
        if pid in pending and name != "sched:sched_switch":
            # running without a traced switch-in: some kernels do not trace every
            # switch out of the idle task; the thread's first own event stands for it
            wake = pending.pop(pid)
            wake.switch_ns, wake.cpu, wake.untraced_switch = ts, cpu, True
    return out


def _measured_pid(events: list[Event], wakes: list[_Wake]) -> int:
    """The real-time thread woken most often by its timer (any thread if none is RT)."""
    prio: dict[int, int] = {}
    for e in events:
        if e[4] == "sched:sched_switch":
            m = re.search(r"next_pid=(\d+) next_prio=(-?\d+)", e[5])
            if m:
                pid, value = int(m.group(1)), int(m.group(2))
                prio[pid] = min(value, prio.get(pid, value))
    counts: dict[int, int] = {}
    for w in wakes:
        counts[w.pid] = counts.get(w.pid, 0) + 1
    rt = {p: n for p, n in counts.items() if prio.get(p, 120) < 100}
    pool = rt or counts
    return max(sorted(pool), key=lambda p: pool[p])


def _run(filename: str, events: list[Event], mine: list[_Wake], lost: int, clock: str,
         pid: int, total_budget: int) -> RunDetail:
    """The run: one series of the thread's latencies, its spikes and their windows."""
    t0 = events[0][0]
    latencies = [max(0, (w.switch_ns or 0) - w.expires) for w in mine]
    comm = next((e[3] for e in events if e[2] == pid), str(pid))
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
    by_cpu: dict[int, list[Event]] = {}
    for e in events:
        by_cpu.setdefault(e[1], []).append(e)
    times = {cpu: [e[0] for e in cpu_events] for cpu, cpu_events in by_cpu.items()}
    over = [(w, lat) for w, lat in zip(mine, latencies, strict=True) if lat >= THRESHOLD_NS]
    for w, lat in over:
        m.spikes.append(SpikeRecord(series=0, t_ns=(w.switch_ns or 0) - t0, latency_ns=lat,
                                    threshold_ns=THRESHOLD_NS))
    traced = sorted(over, key=lambda p: -p[1])[:MAX_TRACED]
    kept_from: dict[int, int] = {}  # id(wake) -> index of its first kept event
    left = total_budget
    for w, _ in traced:  # the worst spikes first get their events within the budgets
        cpu_times = times.get(w.cpu, [])
        first = bisect_left(cpu_times, w.expires - MARGIN_NS)
        keep = bisect_right(cpu_times, w.switch_ns or 0)
        cpu_events, used = by_cpu.get(w.cpu, []), 0
        while keep > first:
            size = _EVENT_BYTES + len(cpu_events[keep - 1][3]) + len(cpu_events[keep - 1][5])
            if used + size > min(BUDGET_BYTES, left):
                break
            used += size
            keep -= 1
        left -= used
        kept_from[id(w)] = keep
    for w, lat in sorted(traced, key=lambda p: p[0].expires):
        start, end = w.expires - MARGIN_NS, w.switch_ns or 0
        cpu_times = times.get(w.cpu, [])
        first, last = bisect_left(cpu_times, start), bisect_right(cpu_times, end)
        keep = kept_from[id(w)]
        window = [list(e) for e in by_cpu.get(w.cpu, [])[keep:last]]
        m.traces.append({
            "schema": "rtprobe/1", "type": "trace", "series": 0, "cpu": w.cpu,
            "t_ns": end - t0, "latency_ns": lat, "expected_ns": w.expires, "woke_ns": end,
            "window_start_ns": start, "window_end_ns": end, "clock": clock,
            "events": window, "events_in_window": last - first,
            "events_dropped": keep - first, "lost": 0})
    seen = sorted({e[4] for e in events if not e[4].startswith("unknown:")})
    m.trace_info = {
        "tracefs": None, "clock": clock, "threshold_ns": THRESHOLD_NS, "buffer_kb": None,
        "max_spikes": MAX_TRACED, "budget_bytes": BUDGET_BYTES, "events_enabled": seen,
        "events_missing": [w for w in WANTED if w not in seen],
        "spikes_over": len(over), "spikes_traced": len(traced),
        "spikes_untraced": len(over) - len(traced), "lost": lost, "restored": None,
        "note": "imported from a text trace: 'events_missing' are events the file does "
                "not hold"}
    return tool_run(tool="trace-cmd", tool_version="", command_line=None,
                    fmt="trace-cmd", measurements=[m])

