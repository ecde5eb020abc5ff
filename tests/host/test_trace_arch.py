"""Attribution by the event chain on every arch (issue 34): on each arch's trace (the
fixtures of tests/host/data/trace/arch/, README.md there says which are recorded and
which synthetic) the injected thread is the first cause, the timer's own interrupt is
never a cause whatever its name, idle at the expiry is "CPU idle: exit from idle",
rtbench's loads are named as loads; a cause holding 0 % of the latency never ranks first;
rtprobe captures only events the attribution reads."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from explain_helpers import synthetic_measurement

from rtbench.analysis.trace_causes import CellExplanation, explain_measurement
from rtbench.analysis.trace_spike import explain_spike
from rtbench.rtprobe.wire.records import ProbeOutput

ARCH = Path(__file__).parent / "data" / "trace" / "arch"
FIXTURES = sorted([*ARCH.glob("*.json"), *ARCH.glob("*.ndjson")])
TRACE_C = Path(__file__).parents[2] / "probe" / "src" / "engine" / "trace.c"
# how each arch's own timer interrupt is named when it is wrongly taken for a cause
# the injected thread: rtb-inject of the synthetic and earlier recorded traces, the zoo
# tests' fifoburst (tests/boards/fifoburst.c) of those recorded by `make test-boards`
INJECTED = ("rtb-inject (pid", "fifoburst (pid")
TIMER_LABELS = re.compile(r"arch_timer|IRQ \d+ timer\b|local timer IRQ|decrementer")


def _load(path: Path) -> dict[str, Any]:
    """A fixture as {"traces", "trace_info"}: synthetic JSON, or recorded rtprobe output
    read as the host reads it (a record that replaces another takes its place)."""
    if path.suffix == ".json":
        return dict(json.loads(path.read_text()))
    out = ProbeOutput.from_lines(path.read_text().splitlines())
    return {"traces": out.traces, "trace_info": out.trace_summary}


def _console(data: dict[str, Any]) -> frozenset[str]:
    """The console IRQ names of a zoo recording (made over the serial console; its
    `source` quotes the kernel command line), else none."""
    from rtbench.analysis.trace_spans import SERIAL_TRANSPORT, console_irq_names

    found = re.search(r"console='([^']*)'", str(data.get("source", "")))
    if not found or "serial console" not in data["source"]:
        return frozenset()
    return console_irq_names({"transport": SERIAL_TRANSPORT, "cmdline": found[1]}, "")


def _cell(path: Path) -> tuple[dict[str, Any], CellExplanation]:
    """A fixture and its explained cell (a zoo recording's console as rtbench's)."""
    data = _load(path)
    m = synthetic_measurement([np.full(100, 20_000, dtype=np.int64)])
    m.traces, m.trace_info = data["traces"], data["trace_info"]
    return data, explain_measurement(f"{path.stem}/cyclic", m, _console(data))


def test_every_arch_has_a_fixture() -> None:
    names = {p.stem.split("-", 1)[1] for p in FIXTURES}
    assert {"arm64", "armhf", "mipsel", "i386", "ppc64el"} <= names


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_the_injected_thread_is_first_and_the_timer_never_a_cause(path: Path) -> None:
    data, cell = _cell(path)
    first = cell.causes[0].cause
    assert first.kind == "thread" and first.label.startswith(INJECTED), \
        [r.cause.label for r in cell.causes]
    labels = [r.cause.label for r in cell.causes]
    assert not [lb for lb in labels if TIMER_LABELS.search(lb)], labels
    for record in data["traces"]:
        spike = explain_spike(record, frozenset(data["trace_info"]["events_missing"]))
        assert sum(s.duration_ns for s in spike.segments) == record["latency_ns"]
        if not spike.blind:
            assert spike.phases.get("timer_irq", 0) > 0  # our timer's entry was found
        assert not [h for h in spike.handlers if TIMER_LABELS.search(h[0])], spike.handlers


@pytest.mark.parametrize("path", [p for p in FIXTURES if p.stem.startswith("synthetic-")],
                         ids=lambda p: p.stem)
def test_idle_and_loads_are_named_as_such(path: Path) -> None:
    _data, cell = _cell(path)
    by_label = {r.cause.label: r for r in cell.causes}
    assert by_label["CPU idle: exit from idle"].spikes_main == 1
    assert "rtbench load cpu (pid 650, nice 0)" in by_label
    # the timer's other interrupts (the tick) are named by what they expired (where the
    # kernel traced the handler: not PowerPC without its timer_interrupt events)
    traced = not path.stem.endswith("-nodec")
    assert ("timer IRQ: tick_sched_timer" in by_label) == traced
    assert not [lb for lb in by_label if "rtprobe" in lb]
    # a TCG stall inside our own handler after the wake-up is said as such
    assert ("timer IRQ: the rest of its handler after our wake-up" in by_label) == traced


def test_recorded_runs_keep_the_worst_spikes_and_say_what_they_lack() -> None:
    clean = _load(ARCH / "recorded-arm64-rt.ndjson")
    info = clean["trace_info"]
    assert len(clean["traces"]) == info["spikes_traced"] == info["max_spikes"] == 10
    assert info["spikes_replaced"] > 0
    assert info["spikes_traced"] + info["spikes_untraced"] == info["spikes_over"]
    assert "timer:hrtimer_start" not in info["events_enabled"]
    _data, late = _cell(ARCH / "recorded-arm64-rt-late-collector.ndjson")
    blind = [s for s in late.spikes if s.blind]
    assert blind and any(f"{len(blind)} traced spike(s) had no event" in n
                         for n in late.notes)
    assert all(r.cause.kind != "unexplained" for r in late.causes[:1])


def test_a_cause_with_no_share_of_the_latency_never_ranks_first() -> None:
    # many tiny spikes led by one IRQ, one huge spike led by a thread
    small = {"series": 0, "cpu": 0, "t_ns": 1, "latency_ns": 3_000, "clock": "mono",
             "expected_ns": 1_000_000, "woke_ns": 1_003_000, "events": [
                 [999_000, 0, 9, "k", "irq:irq_handler_entry", "irq=30 name=eth0"],
                 [1_002_500, 0, 9, "k", "irq:irq_handler_exit", "irq=30 ret=handled"]]}
    big = {"series": 0, "cpu": 0, "t_ns": 2, "latency_ns": 10_000_000, "clock": "mono",
           "expected_ns": 5_000_000, "woke_ns": 15_000_000, "events": [
               [4_000_000, 0, 0, "swapper/0", "sched:sched_switch", (
                   "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
                   "next_comm=hog next_pid=77 next_prio=9")],
               [5_001_000, 0, 77, "hog", "timer:hrtimer_expire_entry",
                "hrtimer=1 function=hrtimer_wakeup now=5001000"],
               [5_002_000, 0, 77, "hog", "sched:sched_waking",
                "comm=rt pid=5 prio=19 target_cpu=000"],
               [14_990_000, 0, 77, "hog", "sched:sched_switch", (
                   "prev_comm=hog prev_pid=77 prev_prio=9 prev_state=S ==> "
                   "next_comm=rt next_pid=5 next_prio=19")]]}
    m = synthetic_measurement([np.full(10, 1_000, dtype=np.int64)])
    m.traces = [dict(small, t_ns=i) for i in range(5)] + [big]
    m.trace_info = {"events_missing": []}
    cell = explain_measurement("c/m", m)
    irq = next(r for r in cell.causes if r.cause.label == "IRQ 30 eth0")
    assert irq.spikes_main == 5 and irq.share_latency < 0.005
    assert cell.causes[0].cause.label == "hog (pid 77, RT 90)"


def _probe_events() -> set[str]:
    """Every event rtprobe's trace.c enables, on any arch."""
    text = TRACE_C.read_text()
    table = text[text.index("trace_wanted[] = {"):]
    table = table[:table.index("};")]
    return set(re.findall(r'"([a-z_]+:[a-z_*]+)"', table))


def test_rtprobe_captures_only_events_the_attribution_reads() -> None:
    from rtbench.analysis import trace_spans, trace_spike

    events = _probe_events()
    assert not [e for e in events if e.endswith(":*")], events  # no whole systems
    readers = Path(trace_spans.__file__).read_text() + Path(trace_spike.__file__).read_text()
    unread = [e for e in events if e.partition(":")[2] not in readers
              and not e.endswith("_noise")]
    assert not unread, unread
    assert {"powerpc:timer_interrupt_entry", "irq_vectors:local_timer_entry",
            "timer:hrtimer_expire_entry", "sched:sched_waking"} <= events


def _switch(ts: int, prev: tuple[str, int, int], nxt: tuple[str, int, int]) -> list[Any]:
    """A sched_switch event of CPU 0."""
    return [ts, 0, prev[1], prev[0], "sched:sched_switch",
            f"prev_comm={prev[0]} prev_pid={prev[1]} prev_prio={prev[2]} prev_state=R ==> "
            f"next_comm={nxt[0]} next_pid={nxt[1]} next_prio={nxt[2]}"]


HOG, RT = ("hog", 77, 9), ("rt", 5, 19)


def _woken_by_local_timer(entry: int) -> list[list[Any]]:
    """Our timer's chain on x86 from entry (ns): local timer, expiry, wake-up, switch."""
    return [[entry, 0, 77, "hog", "irq_vectors:local_timer_entry", "vector=236"],
            [entry + 100_000, 0, 77, "hog", "timer:hrtimer_expire_entry",
             f"hrtimer=1 function=hrtimer_wakeup now={entry + 100_000}"],
            [entry + 200_000, 0, 77, "hog", "sched:sched_waking",
             "comm=rt pid=5 prio=19 target_cpu=000"],
            [entry + 300_000, 0, 77, "hog", "irq_vectors:local_timer_exit", "vector=236"],
            _switch(entry + 400_000, HOG, RT)]


def _x86_record(lost: int) -> dict[str, Any]:
    """A spike of 9 ms whose window shows a local timer's exit at 8 ms without its entry
    (an emulated x86 guest whose ring buffer overran), then our timer's chain."""
    expected = 10_000_000
    return {"series": 0, "cpu": 0, "t_ns": 1, "latency_ns": 9_000_000, "clock": "mono",
            "expected_ns": expected, "woke_ns": expected + 9_000_000, "lost": lost,
            "events": [[expected + 8_000_000, 0, 77, "hog", "irq_vectors:local_timer_exit",
                        "vector=236"], *_woken_by_local_timer(expected + 8_100_000)]}


def test_a_timer_exit_without_its_entry_is_never_the_local_timer() -> None:
    # events lost: the entry may have been lost anywhere before the exit: unseen time
    lossy = explain_spike(_x86_record(lost=120))
    causes = {c.label: ns for c, ns in lossy.causes().items()}
    assert lossy.main_cause() is not None and lossy.main_cause().label == \
        "not seen: events lost", causes
    assert causes["not seen: events lost"] == 8_000_000
    assert not [lb for lb in causes if TIMER_LABELS.search(lb)], causes
    assert not [h for h in lossy.handlers if "not seen" in h[0]], lossy.handlers
    # nothing lost: the handler began before the window; it is a timer interrupt whose
    # timers are not seen, never "local timer IRQ"
    whole = explain_spike(_x86_record(lost=0))
    labels = {c.label for c in whole.causes()}
    assert "timer IRQ: no timer it ran was seen" in labels
    assert not [lb for lb in labels if TIMER_LABELS.search(lb)], labels
    assert sum(s.duration_ns for s in whole.segments) == 9_000_000


def test_an_irq_that_ran_our_timer_is_a_timer_interrupt_in_all_its_stretches() -> None:
    # ARM: IRQ 11 arch_timer runs twice; the first time no expiry shows (events of it
    # lost or none due), the second time it runs our timer: never "IRQ 11 arch_timer"
    expected = 1_000_000
    arch = [[expected + 100_000, 0, 77, "hog", "irq:irq_handler_entry",
             "irq=11 name=arch_timer"],
            [expected + 2_100_000, 0, 77, "hog", "irq:irq_handler_exit",
             "irq=11 ret=handled"],
            [expected + 3_000_000, 0, 77, "hog", "irq:irq_handler_entry",
             "irq=11 name=arch_timer"],
            [expected + 3_100_000, 0, 77, "hog", "timer:hrtimer_expire_entry",
             "hrtimer=1 function=hrtimer_wakeup now=4100000"],
            [expected + 3_200_000, 0, 77, "hog", "sched:sched_waking",
             "comm=rt pid=5 prio=19 target_cpu=000"],
            [expected + 3_300_000, 0, 77, "hog", "irq:irq_handler_exit",
             "irq=11 ret=handled"],
            _switch(expected + 3_400_000, HOG, RT)]
    record = {"series": 0, "cpu": 0, "t_ns": 1, "latency_ns": 3_500_000, "clock": "mono",
              "expected_ns": expected, "woke_ns": expected + 3_500_000,
              "events": [_switch(expected - 500_000, RT, HOG), *arch]}
    spike = explain_spike(record)
    labels = {c.label: ns for c, ns in spike.causes().items()}
    assert labels["timer IRQ: no timer it ran was seen"] == 2_000_000, labels
    assert not [lb for lb in labels if TIMER_LABELS.search(lb)], labels
    assert [h[0] for h in spike.handlers] == ["timer IRQ: no timer it ran was seen"]


def test_an_irq_exit_without_its_entry_is_named_by_the_irqs_other_entries() -> None:
    expected = 1_000_000
    tty = [[expected + 1_000_000, 0, 77, "hog", "irq:irq_handler_exit", "irq=4 ret=handled"],
           [expected + 1_500_000, 0, 77, "hog", "irq:irq_handler_entry", "irq=4 name=ttyS0"],
           [expected + 1_600_000, 0, 77, "hog", "irq:irq_handler_exit", "irq=4 ret=handled"],
           *_woken_by_local_timer(expected + 2_000_000)]
    record = {"series": 0, "cpu": 0, "t_ns": 1, "latency_ns": 2_500_000, "clock": "mono",
              "expected_ns": expected, "woke_ns": expected + 2_500_000, "events": tty}
    labels = {c.label: ns for c, ns in explain_spike(record).causes().items()}
    assert labels["IRQ 4 ttyS0"] == 1_100_000, labels


def test_the_console_rtbench_talks_over_is_named_as_its_own_traffic() -> None:
    from rtbench.analysis.trace_spans import SERIAL_TRANSPORT, console_irq_names
    from rtbench.targets.serial import TRANSPORT_SERIAL

    assert SERIAL_TRANSPORT == TRANSPORT_SERIAL
    serial = {"transport": SERIAL_TRANSPORT, "cmdline": "console=tty0 console=ttyS0,115200"}
    assert console_irq_names(serial, "labgrid-env:x.yaml") == {"ttyS0"}
    assert console_irq_names({"cmdline": "console=ttyAMA0"}, "serial:///dev/ttyUSB0") == \
        {"ttyAMA0", "uart-pl011"}
    assert console_irq_names({"cmdline": "console=hvc0"}, "serial:///dev/pts/3") == \
        {"hvc0", "hvc_console"}
    # over ssh the console's interrupts are the board's own
    assert console_irq_names({"cmdline": "console=ttyS0"}, "ssh://root@board") == set()
    assert console_irq_names({"transport": SERIAL_TRANSPORT}, "serial:///dev/x") == set()
    # a recorded zoo run over the serial console: its ttyS0 IRQ and that IRQ's thread
    data = json.loads((ARCH / "recorded-i386-rt-fifoburst.json").read_text())
    m = synthetic_measurement([np.full(100, 20_000, dtype=np.int64)])
    m.traces, m.trace_info = data["traces"], data["trace_info"]
    plain = {r.cause.label for r in explain_measurement("c/m", m).causes}
    named = {r.cause.label for r in explain_measurement("c/m", m, frozenset({"ttyS0"})).causes}
    assert "IRQ 4 ttyS0" in plain and "IRQ 4 ttyS0" not in named
    assert "rtbench's console traffic: IRQ 4 ttyS0" in named
    # a cell whose spikes it led says it is rtbench's own transport
    amd64 = json.loads((ARCH / "recorded-amd64-fifoburst.json").read_text())
    m.traces, m.trace_info = amd64["traces"], amd64["trace_info"]
    cell = explain_measurement("c/m", m, frozenset({"ttyS0"}))
    led = sum(r.spikes_main for r in cell.causes if r.cause.key.startswith("console:"))
    assert led > 0 and [n for n in cell.notes if n.startswith(
        f"rtbench's console traffic led {led} traced spike(s)")], cell.notes
    assert not [n for n in explain_measurement("c/m", m).notes if "console" in n]
    assert [lb for lb in named if lb.startswith("rtbench's console traffic: irq/4-ttyS0 (pid")]
    assert not [lb for lb in named if "ttyS0" in lb and "console traffic" not in lb]
    # the probe's collector (its comm: the pushed binary's name) is rtbench's own
    assert "rtbench's probe (its collector): rtprobe-eaff2fc (pid 1635, nice 0)" in named
    assert not [lb for lb in named if lb.startswith("rtprobe")]
    # the IRQ thread of a PL011 console, its comm cut to 15 characters
    spike = explain_spike({
        "series": 0, "cpu": 0, "t_ns": 1, "latency_ns": 2_500_000, "clock": "mono",
        "expected_ns": 1_000_000, "woke_ns": 3_500_000, "events": [
            _switch(500_000, RT, HOG), *_woken_by_local_timer(1_100_000)[:-1],
            _switch(1_500_000, HOG, ("irq/33-uart-pl0", 40, 49)),
            _switch(3_400_000, ("irq/33-uart-pl0", 40, 49), RT)]},
        console=frozenset({"ttyAMA0", "uart-pl011"}))
    assert "rtbench's console traffic: irq/33-uart-pl0 (pid 40, RT 50)" in \
        {c.label for c in spike.causes()}


def test_an_irq_seen_running_timers_in_one_window_is_a_timer_in_every_window() -> None:
    def arm(expected: int, with_timer: bool) -> dict[str, Any]:
        """A spike of 3.5 ms: IRQ 11 arch_timer from 0.1 to 2.1 ms, then our expiry
        (inside IRQ 11 again when with_timer, else with no handler around it)."""
        events = [_switch(expected - 500_000, RT, HOG),
                  [expected + 100_000, 0, 77, "hog", "irq:irq_handler_entry",
                   "irq=11 name=arch_timer"],
                  [expected + 2_100_000, 0, 77, "hog", "irq:irq_handler_exit",
                   "irq=11 ret=handled"]]
        if with_timer:
            events.append([expected + 3_000_000, 0, 77, "hog", "irq:irq_handler_entry",
                           "irq=11 name=arch_timer"])
        events += [[expected + 3_100_000, 0, 77, "hog", "timer:hrtimer_expire_entry",
                    "hrtimer=1 function=hrtimer_wakeup now=1"],
                   [expected + 3_200_000, 0, 77, "hog", "sched:sched_waking",
                    "comm=rt pid=5 prio=19 target_cpu=000"]]
        if with_timer:
            events.append([expected + 3_300_000, 0, 77, "hog", "irq:irq_handler_exit",
                           "irq=11 ret=handled"])
        events.append(_switch(expected + 3_400_000, HOG, RT))
        return {"series": 0, "cpu": 0, "t_ns": expected, "latency_ns": 3_500_000,
                "clock": "mono", "expected_ns": expected, "woke_ns": expected + 3_500_000,
                "events": events}

    alone = explain_spike(arm(10_000_000, with_timer=False))
    assert "IRQ 11 arch_timer" in {c.label for c in alone.causes()}  # nothing says more
    m = synthetic_measurement([np.full(100, 20_000, dtype=np.int64)])
    m.traces = [arm(10_000_000, with_timer=False), arm(20_000_000, with_timer=True)]
    m.trace_info = {"events_missing": []}
    cell = explain_measurement("c/m", m)
    labels = [r.cause.label for r in cell.causes]
    assert "timer IRQ: no timer it ran was seen" in labels
    assert not [lb for lb in labels if TIMER_LABELS.search(lb)], labels


def test_rtbench_s_own_console_traffic_ranks_after_the_board_s_causes() -> None:
    # mipsel over its serial console: IRQ 4 ttyS0's handler held the emulated CPU for
    # up to 120 ms (qemu stalled writing the console) and led 12 of 20 spikes
    data = json.loads((ARCH / "recorded-mipsel-console-fifoburst.json").read_text())
    m = synthetic_measurement([np.full(100, 20_000, dtype=np.int64)])
    m.traces, m.trace_info = data["traces"], data["trace_info"]
    cell = explain_measurement("c/m", m, frozenset({"ttyS0"}))
    console = next(r for r in cell.causes if r.cause.key.startswith("console:irq:4:"))
    first = cell.causes[0]
    assert console.spikes_main > first.spikes_main > 0
    assert first.cause.label.startswith("fifoburst (pid"), [r.cause.label for r in cell.causes]
    board = [r for r in cell.causes if not r.cause.key.startswith("console:")
             and r.cause.family != "probe" and r.share_latency >= 0.005]
    assert cell.causes[:len(board)] == board
    assert [n for n in cell.notes if n.startswith(
        f"rtbench's console traffic led {console.spikes_main} traced spike(s)")]
