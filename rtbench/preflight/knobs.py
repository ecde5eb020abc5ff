"""One class per real-time knob; each turns sysinfo facts into a Fact with advice."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from rtbench import EMULATED_WORDS
from rtbench.core.valuetext import value_text
from rtbench.kinds import packaged

Severity = Literal["ok", "info", "warn", "bad"]

# Idle states with an exit latency above this (us) can show up in wake-up latencies.
DEEP_IDLE_US = 10
SLOW_CLOCKSOURCES = {"hpet", "acpi_pm", "jiffies", "pit", "refined-jiffies"}
STEAL_WARN = 0.01


@dataclass(frozen=True)
class Fact:
    """The state of one knob, how much it matters, and what to do about it."""

    name: str
    value: str
    severity: Severity
    advice: str

    def as_dict(self) -> dict[str, Any]:
        """Return the fact as stored with a run."""
        return {"name": self.name, "value": self.value, "severity": self.severity,
                "advice": self.advice}


class Check:
    """Base class: name plus evaluate(sysinfo, steal)."""

    name = "check"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """Return the fact for this knob."""
        raise NotImplementedError

    def fact(self, value: object, severity: Severity, advice: str = "") -> Fact:
        """Build a Fact for this check."""
        return Fact(self.name, "unknown" if value is None else str(value), severity, advice)

    def unknown(self, what: str) -> Fact:
        """The fact could not be read on the target."""
        return self.fact(None, "info", f"rtprobe sysinfo could not read {what}")


class PreemptRT(Check):
    """Is the kernel a PREEMPT_RT kernel?"""

    name = "preempt_rt"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """PREEMPT_RT is ok; full preemption warns; anything else is bad."""
        rt, model = info.get("preempt_rt"), info.get("preempt_model")
        if rt is None and model is None:
            return self.unknown("the preemption model")
        shown = f"{'PREEMPT_RT' if rt else 'not RT'} (model {model or 'unknown'})"
        if rt:
            return self.fact(shown, "ok")
        if model and "full" in str(model).lower():
            return self.fact(shown, "warn", "full preemption without RT: boot a PREEMPT_RT "
                             "kernel (CONFIG_PREEMPT_RT=y) for bounded latencies")
        return self.fact(shown, "bad", "boot a PREEMPT_RT kernel (CONFIG_PREEMPT_RT=y); "
                         "this kernel can hold off RT tasks for milliseconds")




def busy_loop_tests() -> tuple[str, ...]:
    """Tests whose threads run flat out at RT priority, so RT throttling stops them each
    period (the kinds described `busy_loop`): noise's busy loops always, periodic when
    its --busy work fills most of the period."""
    kinds = sorted(packaged().kinds.values(),
                   key=lambda k: (k.busy_loop != "always", k.name))
    return tuple(k.name if k.busy_loop == "always" else f"{k.name} with --{k.busy_loop} work"
                 for k in kinds if k.busy_loop is not None)


class RTThrottling(Check):
    """sched_rt_runtime_us / sched_rt_period_us."""

    name = "rt_throttling"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """Throttling on warns: it stops busy-loop RT tests for a slice of every period."""
        runtime, period = info.get("rt_runtime_us"), info.get("rt_period_us")
        if not isinstance(runtime, int) or isinstance(runtime, bool):
            return self.unknown("/proc/sys/kernel/sched_rt_runtime_us")
        if runtime < 0:
            return self.fact("disabled (runtime -1)", "ok",
                             "a runaway RT task can now lock a CPU; keep a watchdog")
        if not isinstance(period, int) or isinstance(period, bool) or period <= 0:
            period = 1_000_000
        stopped_ms = max(0, period - runtime) / 1000
        return self.fact(
            f"{runtime:,} µs per {period:,} µs", "warn",
            f"RT tasks are stopped for {stopped_ms:g} ms of every {period / 1e6:g} s once "
            f"they used {runtime / 1000:g} ms of it: busy-loop tests "
            f"({', '.join(busy_loop_tests())}) then show {stopped_ms:g} ms gaps "
            f"{period / 1e6:g} s apart; to measure them run "
            "`echo -1 > /proc/sys/kernel/sched_rt_runtime_us` (restore it after)")


class CpufreqGovernor(Check):
    """Frequency scaling governors of the online CPUs."""

    name = "cpufreq_governor"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """All 'performance' is ok; no cpufreq is info; others warn."""
        governors = info.get("governors")
        if not governors:
            return self.fact("no cpufreq", "info",
                             "frequency is fixed or set by firmware/hypervisor; check the "
                             "BIOS power profile")
        names = sorted({str(g) for g in governors.values()}) if isinstance(governors, dict) \
            else sorted({str(g) for g in governors})
        value = ",".join(names)
        if names == ["performance"]:
            return self.fact(value, "ok")
        return self.fact(value, "warn", "frequency changes add latency: "
                         "`cpupower frequency-set -g performance`")


class IdleStates(Check):
    """CPU idle states deeper than DEEP_IDLE_US."""

    name = "idle_states"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """Enabled deep idle states warn (rtprobe holds PM-QoS only while it runs)."""
        states = info.get("idle_states")
        driver = info.get("idle_driver") or "none"
        if states is None:
            return self.fact(f"driver {driver}", "info", "no cpuidle information")
        deep = [s for s in states if isinstance(s, dict) and not s.get("disabled")
                and (s.get("latency_us") or 0) > DEEP_IDLE_US]
        if not deep:
            return self.fact(f"driver {driver}, no state deeper than {DEEP_IDLE_US} µs", "ok")
        worst = max(deep, key=lambda s: int(s.get("latency_us") or 0))
        return self.fact(
            f"driver {driver}, deepest {worst.get('name')} {worst.get('latency_us')} µs",
            "warn",
            "rtprobe holds /dev/cpu_dma_latency at 0 while measuring; your application must "
            "do the same or boot with processor.max_cstate=1 / intel_idle.max_cstate=1")


class SMT(Check):
    """Simultaneous multithreading (hyper-threading)."""

    name = "smt"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """SMT active warns: a sibling thread shares the core's pipeline."""
        active, control = info.get("smt_active"), info.get("smt_control")
        if active is None:
            return self.fact(control, "info", "SMT state unknown")
        if active:
            return self.fact(f"active ({control})", "warn",
                             "sibling threads share a core: "
                             "`echo off > /sys/devices/system/cpu/smt/control` or keep "
                             "siblings of measuring CPUs idle")
        return self.fact(f"inactive ({control})", "ok")


class CpuIsolation(Check):
    """isolcpus / nohz_full / rcu_nocbs on the kernel command line."""

    name = "cpu_isolation"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """Any isolation is ok; none is info with the boot options to use."""
        cmdline = info.get("cmdline")
        if cmdline is None:
            return self.unknown("/proc/cmdline")
        found = [m.group(0) for m in
                 re.finditer(r"\b(isolcpus|nohz_full|rcu_nocbs)=\S+", str(cmdline))]
        if found:
            return self.fact(" ".join(found), "ok")
        return self.fact("none", "info", "for the best latencies keep the measuring CPUs "
                         "apart: boot with isolcpus=N nohz_full=N rcu_nocbs=N")


class Irqbalance(Check):
    """Is irqbalance running (it moves interrupts onto measuring CPUs)?"""

    name = "irqbalance"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """irqbalance running warns."""
        running = info.get("irqbalance_running")
        if running is None:
            return self.unknown("whether irqbalance runs")
        if running:
            return self.fact("running", "warn", "irqbalance may move interrupts onto measuring "
                             "CPUs: `systemctl stop irqbalance` or set IRQBALANCE_BANNED_CPUS")
        return self.fact("not running", "ok")


class TransparentHugepages(Check):
    """Transparent huge pages (compaction stalls)."""

    name = "thp"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """THP 'always' warns."""
        raw = info.get("thp_enabled")
        if raw is None:
            return self.unknown("/sys/kernel/mm/transparent_hugepage/enabled")
        chosen = re.search(r"\[(\w+)\]", str(raw))
        value = chosen.group(1) if chosen else str(raw).strip()
        if value == "always":
            return self.fact(value, "warn", "compaction can stall RT tasks: "
                             "`echo madvise > /sys/kernel/mm/transparent_hugepage/enabled`")
        return self.fact(value, "ok")


class Clocksource(Check):
    """The current clocksource (a slow one makes every clock read expensive)."""

    name = "clocksource"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """hpet/acpi_pm/jiffies warn; kvm-clock is info; others ok."""
        source = info.get("clocksource")
        if source is None:
            return self.unknown("the clocksource")
        available = info.get("clocksource_available")
        if source in SLOW_CLOCKSOURCES:
            advice = "slow clocksource: use tsc (boot with clocksource=tsc tsc=reliable)"
            if available and "tsc" not in str(available):
                advice = f"slow clocksource and no tsc available ({value_text(available)})"
            return self.fact(source, "warn", advice)
        if source == "kvm-clock":
            return self.fact(source, "info", "virtual machine clock; measure on bare metal "
                             "for numbers that describe the hardware")
        return self.fact(source, "ok")


class Virtualization(Check):
    """Running under a hypervisor or an emulator, and how much time it steals."""

    name = "virtualization"

    def evaluate(self, info: dict[str, Any], steal: float | None) -> Fact:
        """CPU emulation is bad, a VM warns (bad if steal >= 1 %); bare metal is ok only
        with evidence (rtprobe sysinfo's "none"); no evidence is unknown."""
        virt = info.get("virtualization")
        steal_text = "" if steal is None else f", steal {steal * 100:.2f} %"
        if info.get("emulated") is True or virt == "tcg":
            return self.fact(f"CPU emulated ({virt or 'emulator'}){steal_text}", "bad",
                             f"latencies are the emulator's: {EMULATED_WORDS}; measure on "
                             "the board itself (or under KVM for a virtual machine's)")
        if virt in (None, ""):
            return self.fact(None, "info", "no evidence of a hypervisor, an emulator or "
                             "bare metal: whether this is a board is unknown")
        if virt == "none":
            return self.fact(f"bare metal{steal_text}", "ok")
        if steal is not None and steal >= STEAL_WARN:
            return self.fact(f"{virt}{steal_text}", "bad",
                             "the hypervisor steals CPU time: pin and dedicate vCPUs, or "
                             "measure on bare metal")
        return self.fact(f"{virt}{steal_text}", "warn",
                         "latencies include hypervisor scheduling; measure on bare metal for "
                         "figures that describe the hardware")


CHECKS: tuple[type[Check], ...] = (
    PreemptRT, RTThrottling, CpufreqGovernor, IdleStates, SMT, CpuIsolation, Irqbalance,
    TransparentHugepages, Clocksource, Virtualization,
)
