"""Who held the CPU during a spike, from its events (pure): the causes, the stretches of
IRQ, softirq, local timer, NMI and IRQs-off handlers paired entry to exit, and the thread
running from each moment (sched_switch, and the current task every event names).

Timer interrupts have a different event on each arch: an `irq_handler_entry` of the
timer's IRQ (`arch_timer` on ARM, `timer` on MIPS and the i386 PIT), x86's
`local_timer_entry` (irq_vectors), PowerPC's `timer_interrupt_entry` (powerpc; its
decrementer has no IRQ number).  Which of them ran *our* timer is decided by the event
chain (trace_spike.py), never by the name; an interrupt that ran timers is named by
them, and one whose timers the window does not show (the local timer's events, or an
IRQ that expired hrtimers elsewhere in the window) is "timer IRQ: no timer it ran was
seen", never by the arch's name for it.  Threads of rtprobe's own loads (comm
`rtload-KIND`, set by `rtprobe load`) are named as loads.

The serial console rtbench talks to the board over is rtbench's own transport: its IRQ
and that IRQ's thread are "rtbench's console traffic: IRQ 4 ttyS0", never the board's.

A handler's exit without its entry began before the window, and is counted from its
start; where the record lost or dropped events, its entry may have been lost instead:
the time from the CPU's event before that exit is then "not seen (events lost)".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rtbench.analysis.trace_events import Event, policy_of

KINDS = ("irq", "softirq", "nmi", "timer_irq", "irqs_off", "thread", "idle", "irq_late",
         "self", "unexplained")


@dataclass(frozen=True)
class Cause:
    """What held the CPU: key names it in a run (pid included), family across runs."""

    kind: str
    key: str
    family: str
    label: str


# a timer interrupt whose timers the window does not show (x86's local timer, PowerPC's
# decrementer, or an IRQ seen expiring hrtimers elsewhere): never named as the arch's IRQ
LOCAL_TIMER = Cause("timer_irq", "timer_irq:unseen", "timer_irq:unseen",
                    "timer IRQ: no timer it ran was seen")
# a stretch whose events were lost (an exit whose entry is missing from a window that
# lost or dropped events): nothing is known of it
UNSEEN = Cause("unexplained", "unseen", "unseen", "not seen: events lost")
# the timer interrupt events without an IRQ number: (entry, exit) of x86 and PowerPC
TIMER_EVENTS = {"local_timer_entry": "local_timer_exit",
                "timer_interrupt_entry": "timer_interrupt_exit"}
_TIMER_EXITS = frozenset(TIMER_EVENTS.values())
# sysinfo `transport` of a run rtbench made over the board's serial console (written by
# rtbench/targets/serial.py)
SERIAL_TRANSPORT = "serial console"
# the IRQ names of a console device beyond its own (the 8250's IRQ is named `ttyS0`):
# PL011 (`ttyAMA0`) and the POWER hypervisor console (`hvc0`)
_CONSOLE_IRQS = (("ttyAMA", "uart-pl011"), ("hvc", "hvc_console"))
# how a cause of rtbench's own console traffic is labelled
CONSOLE_LABEL = "rtbench's console traffic: "
# the comm `rtprobe load KIND` gives its threads (probe/src/loads/load.c)
LOAD_COMM_PREFIX = "rtload-"


@dataclass
class Span:
    """A handler or IRQs-off stretch (absolute ns) and its cause."""

    start: int
    end: int
    cause: Cause
    ours: bool = False


def handler_spans(events: list[Event], start: int, end: int, lossy: bool = False
                  ) -> list[Span]:
    """IRQ, softirq, local timer, NMI and IRQs-off stretches, paired entry to exit;
    lossy: the window lost or dropped events (an exit without its entry is unseen time
    from the event before it)."""
    spans: list[Span] = []
    open_: dict[tuple[str, Any], tuple[int, Cause]] = {}
    before = _Before(start, lossy)
    # an exit names its IRQ by number only: the name an entry of it gave
    names = {e.fields["irq"]: str(e.fields.get("name", "")) for e in events
             if e.event == "irq_handler_entry" and "irq" in e.fields}
    for e in events:
        before.previous, before.current = before.current, e.ts_ns
        f = e.fields
        ev = e.event
        if ev == "irq_handler_entry" and "irq" in f:
            irq = f["irq"]
            name = str(f.get("name", ""))
            cause = Cause("irq", f"irq:{irq}:{name}", f"irq:{irq}:{name}",
                          f"IRQ {irq} {name}".rstrip())
            open_[("irq", irq)] = (e.ts_ns, cause)
        elif ev == "irq_handler_exit" and "irq" in f:
            irq = f["irq"]
            named = names.get(irq, "")
            _close(spans, open_, ("irq", irq), e.ts_ns, before,
                   Cause("irq", f"irq:{irq}:{named}", f"irq:{irq}:{named}",
                         f"IRQ {irq} {named}".rstrip()))
        elif ev == "softirq_entry" and "vec" in f:
            open_[("softirq", f["vec"])] = (e.ts_ns, _softirq_cause(f["action"]))
        elif ev == "softirq_exit" and "vec" in f:
            _close(spans, open_, ("softirq", f["vec"]), e.ts_ns, before,
                   _softirq_cause(f["action"]))
        elif ev in TIMER_EVENTS:
            open_[("timer", 0)] = (e.ts_ns, LOCAL_TIMER)
        elif ev in _TIMER_EXITS:
            _close(spans, open_, ("timer", 0), e.ts_ns, before, LOCAL_TIMER)
        elif ev == "irq_disable":
            caller = str(f.get("caller", "")) or "unknown caller"
            label = f"IRQs off in {e.comm} (pid {e.pid}) at {caller}"
            open_[("irqs_off", 0)] = (e.ts_ns, Cause(
                "irqs_off", f"irqs_off:{e.comm}:{e.pid}:{caller}", f"irqs_off:{e.comm}:{caller}",
                label))
        elif ev == "irq_enable":
            _close(spans, open_, ("irqs_off", 0), e.ts_ns, before, Cause(
                "irqs_off", f"irqs_off:{e.comm}:{e.pid}:?", f"irqs_off:{e.comm}:?",
                f"IRQs off in {e.comm} (pid {e.pid})"))
        elif ev.endswith("_noise") and f:
            spans.append(Span(e.ts_ns - f["duration_ns"], e.ts_ns, _noise_cause(e)))
    for _key, (t0, cause) in open_.items():
        spans.append(Span(t0, end, cause))  # still running at the window's end
    return spans


@dataclass
class _Before:
    """What an exit without its entry is counted from: the window's start, or (lossy)
    the CPU's event before the exit."""

    start: int
    lossy: bool
    previous: int | None = None
    current: int | None = None


def _close(spans: list[Span], open_: dict[tuple[str, Any], tuple[int, Cause]],
           key: tuple[str, Any], ts: int, before: _Before, fallback: Cause) -> None:
    """End the open stretch of key at ts.  An exit without its entry began before the
    window, so its stretch is counted from its start (with the cause the exit names);
    in a window that lost events its entry may have been lost instead: from the CPU's
    event before the exit the time is unseen, never put on the handler."""
    if key in open_:
        t0, cause = open_.pop(key)
        spans.append(Span(t0, ts, cause))
    elif before.lossy:
        t0 = max(before.start, before.previous if before.previous is not None
                 else before.start)
        if ts > t0:
            spans.append(Span(t0, ts, UNSEEN))
    elif ts > before.start:
        spans.append(Span(before.start, ts, fallback))


def _softirq_cause(action: str) -> Cause:
    """The cause naming a softirq."""
    return Cause("softirq", f"softirq:{action}", f"softirq:{action}", f"softirq {action}")


def _noise_cause(e: Event) -> Cause:
    """The cause an osnoise noise event names."""
    what = str(e.fields.get("what", ""))
    kind = e.event.removesuffix("_noise")
    if kind == "irq":
        return Cause("irq", f"irq:{what}", f"irq:{what}", f"IRQ {what}")
    if kind == "softirq":
        return Cause("softirq", f"softirq:{what}", f"softirq:{what}", f"softirq {what}")
    if kind == "nmi":
        return Cause("nmi", "nmi", "nmi", "NMI")
    if kind == "thread":
        comm, _, pid = what.rpartition(":")
        return Cause("thread", f"thread:{comm}:{pid}", f"thread:{comm}",
                     f"{comm} (pid {pid})")
    return Cause("unexplained", f"noise:{what}", f"noise:{what}", f"{kind} noise {what}")


def thread_cause(comm: str, pid: int, prio: int | None) -> Cause:
    """The cause naming a thread that held the CPU (rtprobe's own loads as loads)."""
    if comm.startswith(LOAD_COMM_PREFIX) and len(comm) > len(LOAD_COMM_PREFIX):
        kind = comm[len(LOAD_COMM_PREFIX):]
        return Cause("thread", f"load:{kind}:{pid}", f"load:{kind}",
                     f"rtbench load {kind} (pid {pid}, {policy_of(prio)})")
    return Cause("thread", f"thread:{comm}:{pid}", f"thread:{comm}",
                 f"{comm} (pid {pid}, {policy_of(prio)})")


def running_threads(events: list[Event]) -> list[tuple[int, int, str, int | None]]:
    """Who held the CPU from when: (ts, pid, comm, prio), from sched_switch and the
    current task every event names."""
    prios: dict[int, int] = {}
    for e in events:
        if e.event == "sched_switch" and e.fields:
            prios[e.fields["prev_pid"]] = e.fields["prev_prio"]
            prios[e.fields["next_pid"]] = e.fields["next_prio"]
        elif e.event in ("sched_waking", "sched_wakeup") and e.fields:
            prios.setdefault(e.fields["pid"], e.fields["prio"])
    out: list[tuple[int, int, str, int | None]] = []
    for e in events:
        if e.event == "sched_switch" and e.fields:
            pid = e.fields["next_pid"]
            out.append((e.ts_ns, pid, e.fields["next_comm"], prios.get(pid)))
        elif not out or out[-1][1] != e.pid:
            out.append((e.ts_ns, e.pid, e.comm, prios.get(e.pid)))
    return out


def name_timer_interrupts(events: list[Event], spans: list[Span],
                          timer: Span | None) -> None:
    """Name every other interrupt that expired hrtimers by what it expired ("timer IRQ:
    tick_sched_timer"), whatever the arch calls it (arch_timer, timer, local timer): a
    timer interrupt is a cause through the timers it runs.  A stretch of an IRQ seen
    expiring hrtimers elsewhere in the window that shows none is "timer IRQ: no timer it
    ran was seen", never the arch's name for it.  Our own (timer) is left."""
    ran: dict[int, list[str]] = {}
    for span in spans:
        if span.cause.kind not in ("irq", "timer_irq"):
            continue
        ran[id(span)] = sorted({str(e.fields.get("function") or "?") for e in events
                                if e.event == "hrtimer_expire_entry"
                                and span.start <= e.ts_ns <= span.end})
    timer_irqs = {_irq_number(s.cause) for s in spans if ran.get(id(s)) and
                  s.cause.kind == "irq"} | {_irq_number(timer.cause) if timer else None}
    timer_irqs.discard(None)
    for span in spans:
        if span is timer or id(span) not in ran:
            continue
        functions = ran[id(span)]
        if functions:
            what = ", ".join(functions)
            span.cause = Cause("timer_irq", f"timer_irq:{what}", f"timer_irq:{what}",
                               f"timer IRQ: {what}")
        elif span.cause.kind == "irq" and _irq_number(span.cause) in timer_irqs:
            span.cause = LOCAL_TIMER


def _irq_number(cause: Cause) -> str | None:
    """The IRQ number an `irq:N:name` cause names (None: not an IRQ's)."""
    kind, _, rest = cause.key.partition(":")
    return rest.partition(":")[0] if kind == "irq" and rest else None


def join_raised_softirqs(events: list[Event], spans: list[Span],
                         timer: Span | None = None) -> None:
    """Name an IRQ and the softirq it raised as one cause ("IRQ 24 eth0 + NET_RX"): a
    `softirq_raise` inside an IRQ handler's stretch, followed by that softirq's run.
    The stretch of our own timer interrupt (timer) is never joined: it is not a cause."""
    irqs = [s for s in spans if s.cause.kind == "irq" and s is not timer]
    original = {id(s): s.cause for s in irqs}
    raised: list[tuple[int, str, Span]] = []  # (ts, action, the IRQ that raised it)
    for e in events:
        if e.event == "softirq_raise" and e.fields:
            inside = [s for s in irqs if s.start <= e.ts_ns <= s.end]
            if inside:
                raised.append((e.ts_ns, e.fields["action"], inside[-1]))
    for soft in spans:
        if soft.cause.kind != "softirq":
            continue
        action = soft.cause.key.partition(":")[2]
        by = [irq for ts, act, irq in raised if act == action and ts <= soft.start]
        if not by:
            continue
        irq = by[-1]
        base = original[id(irq)]
        joined = Cause("irq", f"{base.key}+{action}", f"{base.family}+{action}",
                       f"{base.label} + {action}")
        irq.cause = soft.cause = joined


def console_irq_names(sysinfo: dict[str, Any], target: str) -> frozenset[str]:
    """The IRQ names of the console rtbench talked to the board over (the last
    `console=` of the board's kernel command line); empty when the run was not made over
    a serial console."""
    if sysinfo.get("transport") != SERIAL_TRANSPORT and not target.startswith("serial:"):
        return frozenset()
    cmdline = sysinfo.get("cmdline")
    devices = [w.partition("=")[2].partition(",")[0] for w in str(cmdline or "").split()
               if w.startswith("console=")]
    if not devices or not devices[-1]:
        return frozenset()
    device = devices[-1]
    return frozenset({device, *(irq for prefix, irq in _CONSOLE_IRQS
                                if device.startswith(prefix))})


def own_console(cause: Cause, console: frozenset[str]) -> Cause:
    """The cause as rtbench's console traffic when it is an IRQ of the console rtbench
    talked over (console: its IRQ names), or that IRQ's thread (`irq/4-ttyS0`, its comm
    cut to 15 characters); else unchanged."""
    if not console or cause.key.startswith("console:"):
        return cause
    name = None
    if cause.kind == "irq" and cause.key.startswith("irq:"):
        name = cause.key.split(":", 2)[2].partition("+")[0]
        ours = name in console
    elif cause.kind == "thread" and cause.key.startswith("thread:"):
        comm = cause.family.partition(":")[2]
        head, _, name = comm.partition("-")
        ours = head.startswith("irq/") and len(name) >= 3 and \
            any(irq.startswith(name) for irq in console)
    else:
        return cause
    if not ours:
        return cause
    return Cause(cause.kind, f"console:{cause.key}", f"console:{cause.family}",
                 CONSOLE_LABEL + cause.label)
