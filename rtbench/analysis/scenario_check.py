"""Did a scenario happen as defined? Loads that fell short of their target rate and an
"idle" scenario whose CPUs were busy (pure: takes the stored intensity record)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rtbench.kinds import KindRegistry, packaged

RATE_TOLERANCE = 0.20  # a load whose achieved rate is below 80 % of its target falls short
IDLE_BUSY_PCT = 20.0  # an idle scenario's non-measuring CPUs busier than this were not idle
MAX_CPUS = 8192  # CPU numbers beyond this are not read (as suites refuse them)


def rate_text(value: float) -> str:
    """A rate as people write it: 10,630 or 36.8, never 1.063e+04."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}" if abs(value) >= 1e-3 else f"{value:.3f}"


def load_shortfalls(loads: Sequence[dict[str, Any]]) -> list[str]:
    """One sentence for each load whose achieved rate fell short of its target."""
    out = []
    for n, load in enumerate(loads):
        target, achieved = load.get("target"), load.get("achieved")
        if isinstance(target, bool) or not isinstance(target, (int, float)) or target <= 0:
            continue  # "max" or no target: nothing to fall short of
        kind = str(load.get("kind") or f"load {n + 1}")
        unit = str(load.get("unit") or "")
        if isinstance(achieved, bool) or not isinstance(achieved, (int, float)):
            out.append(f"load {kind}: its achieved rate was not measured (target "
                       f"{rate_text(target)} {unit})".replace(" )", ")"))
        elif achieved < (1.0 - RATE_TOLERANCE) * target:
            out.append(f"load {kind} reached {rate_text(achieved)} of its "
                       f"{rate_text(target)} {unit} target "
                       f"({achieved / target:.0%}, below the {1 - RATE_TOLERANCE:.0%} a "
                       "scenario needs)".replace("  ", " "))
    return out


def cpu_numbers(text: str) -> set[int]:
    """The CPUs of a stored list such as '0-3,6' (empty when it cannot be read)."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) \
                or not int(lo) <= int(hi or lo) < MAX_CPUS:
            return set()
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def start_cpus(start: dict[str, Any], kinds: KindRegistry | None = None) -> set[int] | None:
    """The CPUs a test kept busy, from its start record: for a test whose threads are
    its series (a kind described `own_cpus`: cyclic, periodic, clock, noise) their CPUs;
    for one with partners (ipc's sender, pi's hogs, wakeup's waker, ctx, hackbench)
    every CPU it was given (`common.cpus`); None when the record names none (it may
    have run on any CPU).  kinds: the run's (the packaged copy when not given)."""
    series = start.get("series")
    cpus = {int(s["cpu"]) for s in series if isinstance(s, dict)
            and isinstance(s.get("cpu"), int) and not isinstance(s["cpu"], bool)
            and 0 <= s["cpu"] < MAX_CPUS} if isinstance(series, list) else set()
    if cpus and (kinds or packaged()).traits(str(start.get("test"))).own_cpus:
        return cpus
    common = start.get("common")
    listed = common.get("cpus") if isinstance(common, dict) else None
    return (cpu_numbers(listed) or None) if isinstance(listed, str) else None


def measuring_cpus(starts: Sequence[dict[str, Any]],
                   kinds: KindRegistry | None = None) -> list[int] | None:
    """The CPUs a scenario's tests measured on (start_cpus of each start record), as
    stored with its intensity (`measuring_cpus`); None when one of them may have used
    any CPU, or none started."""
    found: set[int] = set()
    for start in starts:
        cpus = start_cpus(start, kinds)
        if cpus is None:
            return None
        found |= cpus
    return sorted(found) if found else None


def _busy_per_cpu(intensity: dict[str, Any]) -> dict[int, float]:
    """CPU number -> % busy over the scenario, from the stored intensity."""
    per_cpu = intensity.get("cpu_busy_pct_per_cpu")
    if not isinstance(per_cpu, dict):
        return {}
    return {int(name[3:]): float(v) for name, v in per_cpu.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
            and isinstance(name, str) and name.startswith("cpu") and name[3:].isdigit()}


def _measuring(intensity: dict[str, Any], measure_cpus: str | None) -> set[int] | None:
    """The CPUs that measured: the scenario's measure_cpus, else those its tests' start
    records named (stored as `measuring_cpus`); None when not known."""
    if measure_cpus:
        return cpu_numbers(measure_cpus) or None
    stored = intensity.get("measuring_cpus")
    if isinstance(stored, list) and stored and all(
            isinstance(c, int) and not isinstance(c, bool) for c in stored):
        return set(stored)
    return None


def _cpus_text(cpus: Sequence[int]) -> str:
    """'CPU 0', 'CPUs 0, 2'."""
    return ("CPU " if len(cpus) == 1 else "CPUs ") + ", ".join(str(c) for c in cpus)


def idle_busy(intensity: dict[str, Any], measure_cpus: str | None) -> str | None:
    """A sentence when the CPUs that did not measure were busy in a load-free scenario
    (None when every CPU measured, or which did is not known: see idle_unchecked)."""
    busy_of = _busy_per_cpu(intensity)
    measuring = _measuring(intensity, measure_cpus)
    if measuring is None:
        return None
    others = sorted(c for c in busy_of if c not in measuring)
    if not others:
        return None
    busy = sum(busy_of[c] for c in others) / len(others)
    if busy <= IDLE_BUSY_PCT:
        return None
    return (f"no load was defined, but the CPUs that did not measure "
            f"({_cpus_text(others)}) were {busy:.0f} % busy (above {IDLE_BUSY_PCT:.0f} %): "
            "something else ran")


def idle_unchecked(loads: Sequence[dict[str, Any]], intensity: dict[str, Any] | None,
                   measure_cpus: str | None) -> str | None:
    """A note for a load-free scenario whose idleness CPU time cannot show: every CPU
    measured (a one-CPU board), or which did is not known; it names the busy figure
    for what it is (the measuring CPUs, the tests' own work included).  None when the
    check could be made or the CPUs were not busy."""
    if loads or not intensity:
        return None
    busy_of = _busy_per_cpu(intensity)
    measuring = _measuring(intensity, measure_cpus)
    if not busy_of or (measuring is not None and set(busy_of) - measuring):
        return None
    cpus = sorted(busy_of)
    busy = sum(busy_of.values()) / len(busy_of)
    if busy <= IDLE_BUSY_PCT:
        return None
    which = ("every CPU measured" if measuring is not None
             else "the tests may have used every CPU")
    return (f"whether the idle scenario was idle cannot be told from CPU time: {which} "
            f"({_cpus_text(cpus)}), and {'it was' if len(cpus) == 1 else 'they were'} "
            f"{busy:.0f} % busy over the scenario, the tests' own work included")


def scenario_flags(loads: Sequence[dict[str, Any]], intensity: dict[str, Any] | None,
                   measure_cpus: str | None) -> list[str]:
    """Every way a scenario did not happen as defined (empty: as defined, or unknown)."""
    if not intensity:
        return []
    summary = intensity.get("loads")
    if loads:
        return load_shortfalls(summary if isinstance(summary, list) else [])
    flag = idle_busy(intensity, measure_cpus)
    return [flag] if flag else []


def deciding_flags(loads: Sequence[dict[str, Any]], intensity: dict[str, Any] | None,
                   measure_cpus: str | None, simulated: bool) -> list[str]:
    """The scenario_flags that make a run NOT AS DEFINED.  In a simulated run the
    latencies are synthetic: other tasks on a busy idle machine cannot disturb them, so
    only loads short of their target (the loads run for real) decide there."""
    if simulated and not loads:
        return []
    return scenario_flags(loads, intensity, measure_cpus)
