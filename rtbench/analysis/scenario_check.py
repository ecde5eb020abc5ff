"""Did a scenario happen as defined? Loads that fell short of their target rate and an
"idle" scenario whose CPUs were busy (pure: takes the stored intensity record)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


def idle_busy(intensity: dict[str, Any], measure_cpus: str | None) -> str | None:
    """A sentence when the CPUs that did not measure were busy in a load-free scenario."""
    per_cpu = intensity.get("cpu_busy_pct_per_cpu")
    if not isinstance(per_cpu, dict):
        return None
    measuring = cpu_numbers(measure_cpus) if measure_cpus else set()
    others = [float(v) for name, v in per_cpu.items()
              if isinstance(v, (int, float)) and not isinstance(v, bool)
              and name.startswith("cpu") and name[3:].isdigit()
              and int(name[3:]) not in measuring]
    if not others:
        return None
    busy = sum(others) / len(others)
    if busy <= IDLE_BUSY_PCT:
        return None
    return (f"no load was defined, but the CPUs that did not measure were {busy:.0f} % "
            f"busy (above {IDLE_BUSY_PCT:.0f} %): something else ran")


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
