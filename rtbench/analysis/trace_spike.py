"""One spike split into the phases a reader understands, from its trace events (pure).

The time from the expected expiry to the actual wake-up (`expected_ns` to `woke_ns` of
a `trace` record) is cut at the moments the events show:

- *timer IRQ late*: expected expiry to the entry of the interrupt that ran our timer.
  Our timer is found by the event chain, on every arch: the last `hrtimer_expire_entry`
  before `sched_waking` of our thread, and the interrupt handler around it, whatever its
  event or name (`irq_handler_entry` of `arch_timer` on ARM or `timer` on MIPS,
  `local_timer_entry` on x86, `timer_interrupt_entry` on PowerPC; without one, the
  `hrtimer_expire_entry` itself).  What the events show inside the late stretch is named
  (another IRQ handler, IRQs off from preemptirq, the CPU idle: "exit from idle"); the
  rest is "hardware/hypervisor", or "hardware/hypervisor or IRQs off" when the kernel
  had no preemptirq events to tell the two apart.
- *timer IRQ*: that entry to `sched_waking` of our thread (the timer handlers before ours).
- *scheduling*: `sched_waking` to the `sched_switch` that runs our thread: every
  IRQ/softirq handler and every other thread that held the CPU is named; the rest of
  our own timer's handler is said as such, never as an interfering IRQ.
- *switch-in*: our thread running until it read the clock.

Every instant of the spike gets exactly one cause, so the causes add up to the spike;
an instant no event explains is "unexplained".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rtbench.analysis.trace_events import Event, parse_events
from rtbench.analysis.trace_spans import (
    KINDS,
    UNSEEN,
    Cause,
    Span,
    handler_spans,
    join_raised_softirqs,
    name_timer_interrupts,
    own_console,
    running_threads,
    thread_cause,
)


@dataclass
class Segment:
    """A stretch of the spike (ns from the expected expiry) and its cause."""

    start_ns: int
    end_ns: int
    phase: str
    cause: Cause

    @property
    def duration_ns(self) -> int:
        """Its length in ns."""
        return self.end_ns - self.start_ns


@dataclass
class SpikeExplanation:
    """One traced spike: its phases, what each stretch was, and what could not be seen."""

    series: int | None
    cpu: int | None
    t_ns: int | None
    latency_ns: int | None
    segments: list[Segment] = field(default_factory=list)
    # phase -> ns (timer_late, timer_irq, scheduling, switch_in, unknown)
    phases: dict[str, int] = field(default_factory=dict)
    # our thread as the events show it: (comm, pid, prio)
    thread: tuple[str, int, int | None] | None = None
    notes: list[str] = field(default_factory=list)
    # the handlers of the window as (label, start_ns, duration_ns) from the expected expiry
    handlers: list[tuple[str, int, int]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    approximate: bool = False
    # the expected expiry in the trace's time base (None: not known)
    expected_ns: int | None = None
    # the record held no event of its CPU: nothing about this spike is known
    blind: bool = False

    def causes(self) -> dict[Cause, int]:
        """ns per cause, largest first."""
        out: dict[Cause, int] = {}
        for seg in self.segments:
            out[seg.cause] = out.get(seg.cause, 0) + seg.duration_ns
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], KINDS.index(kv[0].kind))))

    def main_cause(self) -> Cause | None:
        """The cause holding the most of the spike (None when nothing was explained)."""
        causes = self.causes()
        return next(iter(causes), None)


UNEXPLAINED = Cause("unexplained", "unexplained", "unexplained", "unexplained")
OUR_TIMER = Cause("timer_irq", "timer_irq:ours", "timer_irq:ours",
                  "timer IRQ: its handlers up to our wake-up")
OUR_TIMER_AFTER = Cause("timer_irq", "timer_irq:ours_after", "timer_irq:ours_after",
                        "timer IRQ: the rest of its handler after our wake-up")
IDLE = Cause("idle", "idle", "idle", "CPU idle: exit from idle")
SELF = Cause("self", "self", "self", "our thread: switch-in to its clock read")


def _int(record: dict[str, Any], key: str) -> int | None:
    """An integer field of the record (None when absent or not an integer)."""
    value = record.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def explain_spike(record: dict[str, Any], missing: frozenset[str] = frozenset(),
                  console: frozenset[str] = frozenset()) -> SpikeExplanation:
    """The phases and causes of one `trace` record; missing: events the kernel lacked;
    console: the IRQ names of the serial console rtbench talked over (its own traffic)."""
    out = SpikeExplanation(series=_int(record, "series"), cpu=_int(record, "cpu"),
                           t_ns=_int(record, "t_ns"), latency_ns=_int(record, "latency_ns"))
    if record.get("clock") not in (None, "mono"):
        out.approximate = True
        out.notes.append(f"trace clock {record.get('clock')}: times aligned by a measured "
                         "offset, approximately")
    expected, woke = _int(record, "expected_ns"), _int(record, "woke_ns")
    out.expected_ns = expected
    if isinstance(record.get("analysis"), dict):
        _imported(out, record["analysis"])
        return out
    if expected is None or woke is None or woke < expected:
        out.notes.append("the record has no usable expected/actual wake-up time: "
                         "nothing can be attributed")
        return out
    parsed = parse_events(record.get("events"))
    if parsed.unreadable:
        out.notes.append(f"{parsed.unreadable} unreadable event(s) left out")
    events = [e for e in parsed.events if out.cpu is None or e.cpu == out.cpu]
    out.events = events
    if not events:
        out.blind = True
        out.notes.append("no event of its CPU in the window: nothing about this spike "
                         "is known")
    dropped = _int(record, "events_dropped") or 0
    if dropped:
        out.notes.append(f"{dropped} event(s) of the window left out by the probe's byte "
                         "budget: part of the window is not seen")
    if _int(record, "lost"):
        out.notes.append(f"{record.get('lost')} event(s) lost to ring-buffer overruns")
    lossy = bool(dropped or _int(record, "lost"))
    _attribute(out, events, (expected, woke), missing, lossy, console)
    return out


@dataclass
class _Marks:
    """The moments the phases are cut at (absolute ns; None: not seen)."""

    irq_entry: int | None = None
    waking: int | None = None
    switch_in: int | None = None
    our_pid: int | None = None
    timer: Span | None = None  # the handler stretch that ran our timer (None: not seen)


def _find_marks(events: list[Event], spans: list[Span], expected: int, woke: int
                ) -> _Marks:
    """Our thread, its switch-in, its wake-up and the timer interrupt that woke it."""
    marks = _Marks()
    switches = [e for e in events if e.event == "sched_switch" and e.fields
                and e.ts_ns <= woke]
    if switches:
        last = switches[-1]
        marks.our_pid, marks.switch_in = last.fields["next_pid"], last.ts_ns
    elif events:
        marks.our_pid = events[-1].pid  # the task current at the end of the window
    if marks.our_pid is None:
        return marks
    ours = [e for e in events if e.ts_ns <= woke and e.fields.get("pid") == marks.our_pid
            and e.event in ("sched_waking", "sched_wakeup")]
    if marks.switch_in is not None and ours and ours[-1].ts_ns > marks.switch_in:
        # woken while still on the CPU (switched in before, never out): no switch-in
        # follows the wake-up, our thread runs on from it
        after = [e for e in ours if e.ts_ns > marks.switch_in]
        marks.waking = next((e.ts_ns for e in reversed(after) if e.event == "sched_waking"),
                            after[-1].ts_ns)
        marks.switch_in = marks.waking
    else:
        limit = marks.switch_in if marks.switch_in is not None else woke
        wakings = [e.ts_ns for e in ours if e.ts_ns <= limit and e.event == "sched_waking"]
        wakeups = [e.ts_ns for e in ours if e.ts_ns <= limit and e.event == "sched_wakeup"]
        marks.waking = wakings[-1] if wakings else (wakeups[-1] if wakeups else None)
    if marks.waking is None:
        return marks
    waking = marks.waking
    expiry = next((e.ts_ns for e in reversed(events) if e.ts_ns <= waking
                   and e.event == "hrtimer_expire_entry"), None)
    if expiry is None:
        return marks
    # the innermost interrupt handler around that expiry ran our timer, whatever its name
    around = [sp for sp in spans if sp.cause.kind in ("irq", "timer_irq")
              and sp.start <= expiry <= sp.end]
    if around:
        marks.timer = max(around, key=lambda sp: sp.start)
        marks.irq_entry = marks.timer.start
    else:
        marks.irq_entry = expiry
    return marks


def _late_cause(missing: frozenset[str]) -> Cause:
    """The timer-late cause when no event inside it shows why."""
    if "preemptirq:irq_disable" in missing:
        return Cause("irq_late", "irq_late:unseen", "irq_late:unseen",
                     "timer IRQ late: hardware/hypervisor or IRQs off "
                     "(no preemptirq events)")
    return Cause("irq_late", "irq_late:hardware", "irq_late:hardware",
                 "timer IRQ late: hardware/hypervisor (no IRQs-off or IRQ seen)")


def _attribute(out: SpikeExplanation, events: list[Event], spike: tuple[int, int],
               missing: frozenset[str], lossy: bool, console: frozenset[str]) -> None:
    """Fill segments, phases and handlers of out over spike (expected, woke); lossy:
    the window lost or dropped events; console: the IRQ names of rtbench's console."""
    expected, woke = spike
    spans = handler_spans(events, expected, woke, lossy)
    marks = _find_marks(events, spans, expected, woke)
    if marks.our_pid is not None:
        comm = next((e.fields["next_comm"] for e in reversed(events)
                     if e.event == "sched_switch" and e.fields
                     and e.fields["next_pid"] == marks.our_pid), None)
        prio = next((e.fields["next_prio"] for e in reversed(events)
                     if e.event == "sched_switch" and e.fields
                     and e.fields["next_pid"] == marks.our_pid), None)
        out.thread = (comm or "?", marks.our_pid, prio)
    ours_timer = marks.timer
    name_timer_interrupts(events, spans, ours_timer)
    join_raised_softirqs(events, spans, ours_timer)
    for s in spans:
        s.cause = own_console(s.cause, console)
    for s in spans:
        if s.end > expected and s.start < woke and s is not ours_timer \
                and s.cause.kind != "irqs_off" and s.cause != UNSEEN:
            out.handlers.append((s.cause.label, s.start - expected, s.end - s.start))
    running = running_threads(events)
    cuts = {expected, woke}
    for s in spans:
        cuts.update(x for x in (s.start, s.end) if expected < x < woke)
    for ts, *_ in running:
        if expected < ts < woke:
            cuts.add(ts)
    for mark in (marks.irq_entry, marks.waking, marks.switch_in):
        if mark is not None and expected < mark < woke:
            cuts.add(mark)
    points = sorted(cuts)
    late = _late_cause(missing)
    for a, b in zip(points, points[1:], strict=False):
        phase, cause = _classify(a, marks, spans, ours_timer, running, late)
        cause = own_console(cause, console)
        if out.segments and out.segments[-1].cause == cause \
                and out.segments[-1].phase == phase and out.segments[-1].end_ns == a - expected:
            out.segments[-1].end_ns = b - expected
        else:
            out.segments.append(Segment(a - expected, b - expected, phase, cause))
    for seg in out.segments:
        out.phases[seg.phase] = out.phases.get(seg.phase, 0) + seg.duration_ns
    _note_missing(out, marks, missing)


def _classify(t: int, marks: _Marks, spans: list[Span], ours_timer: Span | None,
              running: list[tuple[int, int, str, int | None]], late: Cause
              ) -> tuple[str, Cause]:
    """The phase and the cause of the instant t."""
    phase = _phase(t, marks)
    inside = [s for s in spans if s.start <= t < s.end]
    unseen = [s for s in inside if s.cause == UNSEEN]
    if unseen:  # its events were lost: whatever else the window says of it
        return phase, unseen[-1].cause
    handlers = [s for s in inside if s is not ours_timer
                and s.cause.kind in ("irq", "softirq", "nmi", "timer_irq")]
    if handlers:
        # the innermost (latest begun) handler holds the CPU; an NMI above all
        handlers.sort(key=lambda s: (s.cause.kind == "nmi", s.start))
        return phase, handlers[-1].cause
    who = _who(t, running)
    idle = who is not None and who[0] == 0
    if phase == "timer_late":
        off = [s for s in inside if s.cause.kind == "irqs_off"]
        if idle:  # the idle task, its IRQs-off stretches included: exit from idle
            return phase, IDLE
        return phase, off[-1].cause if off else late
    if phase == "timer_irq":
        return phase, OUR_TIMER
    if ours_timer is not None and ours_timer in inside:
        return phase, OUR_TIMER_AFTER
    if phase == "switch_in":
        return phase, SELF
    if idle:
        return phase, IDLE
    if who is not None and who[0] != marks.our_pid:
        return phase, thread_cause(who[1], who[0], who[2])
    return phase, UNEXPLAINED


def _who(t: int, running: list[tuple[int, int, str, int | None]]
         ) -> tuple[int, str, int | None] | None:
    """(pid, comm, prio) of the task holding the CPU at t (None: no event says)."""
    who = None
    for ts, pid, comm, prio in running:
        if ts > t:
            break
        who = (pid, comm, prio)
    return who


def _phase(t: int, marks: _Marks) -> str:
    """Which phase the instant t belongs to, as far as the marks seen allow."""
    if marks.switch_in is not None and t >= marks.switch_in:
        return "switch_in"
    if marks.waking is not None and t >= marks.waking:
        return "scheduling"
    if marks.irq_entry is not None:
        return "timer_late" if t < marks.irq_entry else "timer_irq"
    return "unknown"


def _note_missing(out: SpikeExplanation, marks: _Marks, missing: frozenset[str]) -> None:
    """Say which part of the spike the events could not show."""
    if marks.switch_in is None:
        out.notes.append("no sched_switch to our thread in the window: the scheduling "
                         "phase cannot be cut")
    elif marks.waking is None:
        out.notes.append("no sched_waking of our thread in the window: the wake-up "
                         "cannot be placed")
    elif marks.irq_entry is None:
        out.notes.append("no timer interrupt before our wake-up in the window: the timer "
                         "phase cannot be cut")
    if any(m.startswith("irq:irq_handler") for m in missing):
        out.notes.append("irq_handler events missing: IRQ handlers cannot be seen")
    if "sched:sched_switch" in missing:
        out.notes.append("sched_switch missing: threads that ran cannot be named")


_PART_KINDS = {"irq", "softirq", "nmi", "timer_irq", "irqs_off", "thread", "idle",
               "irq_late", "self", "unexplained"}


def _imported(out: SpikeExplanation, analysis: dict[str, Any]) -> None:
    """Segments from another tool's own analysis (rtla timerlat -a): its parts in order,
    the rest of the latency unexplained."""
    start = 0
    parts = analysis.get("parts")
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        kind, label, ns = part.get("kind"), part.get("label"), part.get("ns")
        phase = part.get("phase")
        if kind not in _PART_KINDS or not isinstance(label, str) or \
                not isinstance(ns, int) or isinstance(ns, bool) or ns <= 0:
            continue
        key = str(part.get("key") or f"{kind}:{label}")
        family = str(part.get("family") or key)
        out.segments.append(Segment(start, start + ns, phase if isinstance(phase, str)
                                    else "unknown", Cause(kind, key, family, label)))
        start += ns
    total = out.latency_ns
    if total is not None and total > start:
        out.segments.append(Segment(start, total, "unknown", UNEXPLAINED))
    for seg in out.segments:
        out.phases[seg.phase] = out.phases.get(seg.phase, 0) + seg.duration_ns
    notes = analysis.get("notes")
    out.notes.extend(n for n in (notes if isinstance(notes, list) else [])
                     if isinstance(n, str))
    out.approximate = True
