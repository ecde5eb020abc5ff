"""Write the synthetic per-arch trace fixtures of this folder (README.md): each arch's
timer interrupt chain in the kernel's own text formats (Linux 6.1 TP_printk), around four
spikes of a measuring thread (rtprobe, pid 500, SCHED_FIFO 80) on CPU 1 with an injected
SCHED_FIFO 90 thread (rtb-inject, pid 700) bursting over it, a scheduler tick of the
same timer interrupt inside each burst.  Run from the repository
root: python tests/host/data/trace/arch/make_synthetic.py"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
CPU = 1
OURS = ("rtprobe", 500, 19)
INJECT = ("rtb-inject", 700, 9)
LOAD = ("rtload-cpu", 650, 120)
IDLE = ("swapper/1", 0, 120)
BASE = ["sched:sched_waking", "sched:sched_wakeup", "sched:sched_switch",
        "irq:irq_handler_entry", "irq:irq_handler_exit", "irq:softirq_entry",
        "irq:softirq_exit", "irq:softirq_raise", "timer:hrtimer_expire_entry"]
# arch -> how its timer interrupt shows: an IRQ (number, name), x86's local timer vector,
# or PowerPC's decrementer (with its timer_interrupt events, or without them)
ARCHES: dict[str, dict[str, Any]] = {
    "arm64": {"irq": (11, "arch_timer")},
    "armhf": {"irq": (18, "arch_timer")},
    "mipsel": {"irq": (7, "timer")},
    "i386": {"vector": True},
    "i386-pit": {"irq": (0, "timer")},
    "ppc64el": {"decrementer": True},
    "ppc64el-nodec": {"decrementer": False},
}


def switch(prev: tuple[str, int, int], state: str, nxt: tuple[str, int, int]) -> str:
    """sched_switch text."""
    return (f"prev_comm={prev[0]} prev_pid={prev[1]} prev_prio={prev[2]} prev_state={state}"
            f" ==> next_comm={nxt[0]} next_pid={nxt[1]} next_prio={nxt[2]}")


def timer_chain(arch: dict[str, Any], at: int, length: int, cur: tuple[str, int, int],
                function: str = "hrtimer_wakeup", wakes: bool = True
                ) -> list[tuple[int, tuple[str, int, int], str, str]]:
    """The timer interrupt at `at` lasting `length` ns, expiring one hrtimer (ours when
    wakes) 2 us in; (ts, current task, event, text) tuples."""
    out: list[tuple[int, tuple[str, int, int], str, str]] = []
    if "irq" in arch:
        irq, name = arch["irq"]
        out.append((at, cur, "irq:irq_handler_entry", f"irq={irq} name={name}"))
        exit_ = ("irq:irq_handler_exit", f"irq={irq} ret=handled")
    elif arch.get("vector"):
        out.append((at, cur, "irq_vectors:local_timer_entry", "vector=236"))
        exit_ = ("irq_vectors:local_timer_exit", "vector=236")
    elif arch.get("decrementer"):
        out.append((at, cur, "powerpc:timer_interrupt_entry", "pt_regs=000000006f4c1a2e"))
        exit_ = ("powerpc:timer_interrupt_exit", "pt_regs=000000006f4c1a2e")
    else:
        exit_ = None
    out.append((at + 2_000, cur, "timer:hrtimer_expire_entry",
                f"hrtimer=00000000c0ffee{at % 97:02d} function={function} now={at + 2_000}"))
    if wakes:
        out.append((at + 3_000, cur, "sched:sched_waking",
                    f"comm={OURS[0]} pid={OURS[1]} prio={OURS[2]} target_cpu=001"))
    out.append((at + 4_000, cur, "irq:softirq_raise", "vec=1 [action=TIMER]"))
    if exit_ is not None:
        out.append((at + length, cur, *exit_))
    return out


def spike(arch: dict[str, Any], index: int, kind: str) -> dict[str, Any]:
    """One trace record: kind is inject, inject_stall, idle or load."""
    expected = 2_000_000_000 + index * 300_000_000
    ev: list[tuple[int, tuple[str, int, int], str, str]] = []
    if kind == "idle":  # idle at the expiry; the emulator stalls the guest 1.5 ms
        ev.append((expected - 80_000, OURS, "sched:sched_switch", switch(OURS, "S", IDLE)))
        ev += timer_chain(arch, expected + 1_500_000, 8_000, IDLE)
        switch_at = expected + 1_512_000
        ev.append((switch_at, IDLE, "sched:sched_switch", switch(IDLE, "R", OURS)))
    else:
        burst = 2_400_000 if kind == "inject" else 1_800_000
        ev.append((expected - 60_000, IDLE, "sched:sched_switch", switch(IDLE, "R", INJECT)))
        ev.append((expected + 500_000, INJECT, "irq:irq_handler_entry", "irq=40 name=virtio1"))
        ev.append((expected + 512_000, INJECT, "irq:irq_handler_exit", "irq=40 ret=handled"))
        stall = 300_000 if kind == "inject_stall" else 6_000
        ev += timer_chain(arch, expected + 3_000, stall, INJECT)
        # the scheduler tick, another interrupt of the same timer, during the burst
        ev += timer_chain(arch, expected + 1_000_000, 20_000, INJECT,
                          function="tick_sched_timer", wakes=False)
        end = expected + burst
        if kind == "load":  # the load held the CPU a moment after the injector slept
            ev.append((end, INJECT, "sched:sched_switch", switch(INJECT, "S", LOAD)))
            end += 40_000
            ev.append((end, LOAD, "sched:sched_switch", switch(LOAD, "R", OURS)))
        else:
            ev.append((end, INJECT, "sched:sched_switch", switch(INJECT, "S", OURS)))
        switch_at = end
    woke = switch_at + 9_000
    ev.sort(key=lambda e: e[0])
    events = [[ts, CPU, cur[1], cur[0], name, text] for ts, cur, name, text in ev]
    return {"schema": "rtprobe/1", "type": "trace", "series": 0, "cpu": CPU,
            "t_ns": expected - 1_000_000_000, "latency_ns": woke - expected,
            "expected_ns": expected, "woke_ns": woke,
            "window_start_ns": expected - 100_000, "window_end_ns": woke,
            "clock": "mono", "events": events, "events_in_window": len(events),
            "events_dropped": 0, "lost": 0, "replaces": None}


def fixture(name: str, arch: dict[str, Any]) -> dict[str, Any]:
    """The fixture of one arch."""
    enabled = list(BASE)
    missing = ["preemptirq:irq_disable", "preemptirq:irq_enable",
               "osnoise:irq_noise", "osnoise:softirq_noise", "osnoise:nmi_noise",
               "osnoise:thread_noise"]
    if arch.get("vector"):
        enabled += ["irq_vectors:local_timer_entry", "irq_vectors:local_timer_exit"]
    elif "decrementer" in arch:
        pair = ["powerpc:timer_interrupt_entry", "powerpc:timer_interrupt_exit"]
        (enabled if arch["decrementer"] else missing).extend(pair)
    kinds = ["inject", "inject_stall", "idle", "load", "inject"]
    traces = [spike(arch, i, k) for i, k in enumerate(kinds)]
    return {"comment": f"synthetic ({name}): written by make_synthetic.py in the kernel's "
            "event text formats; times illustrative", "arch": name,
            "trace_info": {"tracefs": "/sys/kernel/tracing", "clock": "mono",
                           "threshold_ns": 1_000_000, "buffer_kb": 1024, "max_spikes": 20,
                           "budget_bytes": 65536, "events_enabled": enabled,
                           "events_missing": missing, "spikes_over": len(traces),
                           "spikes_traced": len(traces), "spikes_untraced": 0,
                           "spikes_replaced": 0, "lost": 0, "restored": True, "note": None},
            "traces": traces}


def main() -> None:
    """Write every arch's fixture."""
    for name, arch in ARCHES.items():
        path = HERE / f"synthetic-{name}.json"
        path.write_text(json.dumps(fixture(name, arch), indent=1) + "\n")


if __name__ == "__main__":
    main()
