"""CPU placement: where a scenario's loads and tests run on a target (rteval-style)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rtbench.suites.model import Scenario, Suite, SuiteError
from rtbench.util.cpulist import format_cpulist, parse_cpulist

# Below this many CPUs loads and tests share every CPU (nothing to spare).
SPLIT_MIN_CPUS = 4


@dataclass(frozen=True)
class Placement:
    """Where a scenario's loads and tests run (rteval-style), as decided for a target.

    None means "not restricted": loads may use every CPU, tests use their own default.
    rule: "given" (the suite named CPUs), "split" (loads on the first half, tests on
    the rest) or "shared" (fewer than SPLIT_MIN_CPUS CPUs, or a suite without loads).
    """

    load_cpus: str | None
    measure_cpus: str | None
    rule: str
    cpus: str  # the CPUs the target allows

    def describe(self) -> dict[str, Any]:
        """The placement as stored with the scenario."""
        return {"rule": self.rule, "cpus": self.cpus, "load_cpus": self.load_cpus,
                "measure_cpus": self.measure_cpus}


def plan_placement(scenario: Scenario, allowed: set[int], suite_has_loads: bool) -> Placement:
    """Decide where scenario's loads and tests run on a target allowing CPUs `allowed`.

    Given CPU lists win; when only one of load_cpus/measure_cpus is given the other gets
    the remaining CPUs.  With neither, a suite with loads on a machine of at least
    SPLIT_MIN_CPUS CPUs puts loads on the first half and tests on the rest, in every
    scenario (idle ones too, so scenarios compare the same CPUs); otherwise all share.
    """
    everything = format_cpulist(allowed)
    load, measure = scenario.load_cpus, scenario.measure_cpus
    if load is not None or measure is not None:
        if load is not None and measure is None:
            rest = allowed - parse_cpulist(load)
            measure = format_cpulist(rest) if rest else None
        elif measure is not None and load is None:
            rest = allowed - parse_cpulist(measure)
            load = format_cpulist(rest) if rest else None
        return Placement(load, measure, "given", everything)
    if suite_has_loads and len(allowed) >= SPLIT_MIN_CPUS:
        ordered = sorted(allowed)
        half = len(ordered) // 2
        return Placement(format_cpulist(ordered[:half]), format_cpulist(ordered[half:]),
                         "split", everything)
    return Placement(None, None, "shared", everything)


def check_placement(suite: Suite, allowed: set[int]) -> None:
    """Refuse load_cpus/measure_cpus/a load's cpus naming CPUs the target does not offer."""
    for i, scenario in enumerate(suite.scenarios):
        named = [(f"scenarios[{i}].{key}", getattr(scenario, key))
                 for key in ("load_cpus", "measure_cpus")]
        named += [(f"scenarios[{i}].loads[{j}].cpus", load.cpus)
                  for j, load in enumerate(scenario.loads)]
        for key, text in named:
            missing = parse_cpulist(text) - allowed if text is not None else set()
            if missing:
                raise SuiteError(suite.source, key,
                                 f"CPU {format_cpulist(missing)} is not available on this "
                                 f"target (allowed: {format_cpulist(allowed)})")
