"""The suite model: tests x scenarios (loads) x parameter sweeps, as checked and expanded.

suites/parse.py builds it from TOML; a test's rtprobe arguments come from
rtbench.rtprobe.argv.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rtbench.rtprobe.argv import ParamValue, format_duration, measure_args
from rtbench.rtprobe.catalogue import TestKind


class SuiteError(ValueError):
    """A suite file or name is wrong; str() is one line: file: key: reason."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        self.source = source
        self.key = key
        self.reason = reason
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {reason}")


# The widest --window rtprobe takes.
WINDOW_MAX_NS = 3600 * 10**9
WINDOW_MIN_NS = 100 * 10**6
WINDOW_STEP_NS = 10**6


@dataclass(frozen=True)
class LoadSpec:
    """One load of a scenario: an external command or a built-in `rtprobe load` kind."""

    instances: int = 1
    command: str | None = None
    kind: str | None = None
    rate: float | str | None = None  # a number, or "max"
    cpus: str | None = None
    options: Mapping[str, ParamValue] = field(default_factory=dict)
    # where it runs: "target" (default) or "host" (the net flood, aimed at the target)
    on: str = "target"

    def describe(self) -> dict[str, Any]:
        """Return the recipe as stored with the scenario."""
        recipe: dict[str, Any] = {"instances": self.instances}
        if self.on != "target":
            recipe["on"] = self.on
        if self.command is not None:
            recipe["command"] = self.command
        else:
            recipe["kind"] = self.kind
            recipe["rate"] = self.rate
            recipe["options"] = dict(self.options)
        if self.cpus is not None:
            recipe["cpus"] = self.cpus
        return recipe


@dataclass(frozen=True)
class Scenario:
    """The conditions tests run under: loads, CPU placement, settle time."""

    name: str
    description: str = ""
    loads: tuple[LoadSpec, ...] = ()
    load_cpus: str | None = None
    measure_cpus: str | None = None
    settle_ns: int = 1_000_000_000


@dataclass(frozen=True)
class TestSpec:
    """One measurement to make in every scenario (a sweep is already expanded)."""

    name: str
    test: str
    duration_ns: int
    warmup_ns: int
    thresholds_ns: tuple[int, ...] = ()
    params: Mapping[str, ParamValue] = field(default_factory=dict)
    index: int = 0  # position of the [[tests]] entry it came from, for messages
    own_params: frozenset[str] = frozenset()  # params set by the entry, not [defaults]
    sweep_keys: frozenset[str] = frozenset()
    kind: TestKind = TestKind()  # from the probe's catalogue

    def traits(self) -> TestKind:
        """What this test takes of the options rtbench manages."""
        flag = self.kind.untimed_with
        if flag is not None and self.params.get(flag) is True:
            return replace(self.kind, timed=False, warmup=False, thresholds=False,
                           nominal_s=self.kind.nominal_s or 1.0)
        return self.kind

    def expected_seconds(self) -> float:
        """How long one measurement should take (nominal for untimed tests)."""
        traits = self.traits()
        if not traits.timed:
            return traits.nominal_s + self.warmup_ns / 1e9
        return (self.duration_ns + self.warmup_ns) / 1e9 * self.runs()

    def policy_use(self) -> str:
        """How the test takes a scheduling policy: "any" (--policy fifo|rr|other), "rt"
        (fifo or rr only: a kind the probe describes as RT-only, pi, whose priorities
        are what it measures) or "none" (no --policy: hackbench runs as its caller,
        SCHED_OTHER)."""
        if "policy" not in self.kind.options:
            return "none"
        return "rt" if self.kind.host.rt_only else "any"

    def runs(self) -> int:
        """How many times rtprobe runs warm-up + duration: once per item of the kind's
        runs_per list (wakeup: once per mechanism)."""
        return self.kind.host.runs(self.params)

    def affinity(self, scenario: Scenario) -> str | None:
        """CPUs to pin the probe process to (tests without a CPU option only)."""
        return scenario.measure_cpus if self.traits().cpus is None else None

    def probe_args(self, scenario: Scenario, simulate: str | None,
                   policy: str | None = None) -> list[str]:
        """Return the rtprobe arguments (after the binary) for this test in scenario.

        policy "other" (rtbench run --policy other) runs the test as SCHED_OTHER: its own
        policy and priority params give way, as rtprobe takes no priority with it.
        """
        takes_policy = policy is not None and self.policy_use() == "any"
        return measure_args(
            self.test, self.traits(), duration_ns=self.duration_ns, warmup_ns=self.warmup_ns,
            thresholds_ns=self.thresholds_ns, params=self.params,
            measure_cpus=scenario.measure_cpus, policy=policy if takes_policy else None,
            simulate=simulate)


@dataclass(frozen=True)
class Suite:
    """A validated suite; durations already multiplied by its scale."""

    name: str
    description: str
    source: str
    scale: float
    scenarios: tuple[Scenario, ...]
    tests: tuple[TestSpec, ...]
    text: str = ""  # the TOML as read, stored with every run

    def scaled(self, factor: float) -> Suite:
        """Return the suite with every duration (duration, warmup, settle) times factor."""
        if not (math.isfinite(factor) and factor > 0):
            raise SuiteError(self.source, "--scale", f"{factor} must be a finite number > 0")

        def mul(ns: int) -> int:
            scaled = ns * factor
            if scaled >= 2**63:
                raise SuiteError(self.source, "--scale", f"{factor:g} makes a duration of "
                                 f"{scaled / 1e9:.3g} s, beyond the 2^63 ns limit")
            return int(round(scaled))

        return replace(
            self,
            scale=self.scale * factor,
            scenarios=tuple(replace(s, settle_ns=mul(s.settle_ns)) for s in self.scenarios),
            tests=tuple(
                replace(t, duration_ns=max(1, mul(t.duration_ns)), warmup_ns=mul(t.warmup_ns))
                for t in self.tests
            ),
        )

    def with_window(self, window_ns: int) -> Suite:
        """Return the suite with every test that takes --window set to window_ns (the
        period each window record covers; wider windows make fewer records)."""
        if window_ns % WINDOW_STEP_NS or not WINDOW_MIN_NS <= window_ns <= WINDOW_MAX_NS:
            raise SuiteError(self.source, "--window", f"{format_duration(window_ns)}: must "
                             "be whole milliseconds from 100ms to 1h")
        value = format_duration(window_ns)
        return replace(self, tests=tuple(
            replace(t, params={**t.params, "window": value})
            if "window" in t.kind.options else t for t in self.tests))

    def with_trace(self, mode: str) -> Suite:
        """The suite with `rtbench run --trace=MODE`: every test that offers --trace
        traces that way (the others run as they are)."""
        tests = tuple(replace(t, params={**t.params, "trace": mode})
                      if "trace" in t.traits().options else t for t in self.tests)
        return replace(self, tests=tests)

    def estimated_seconds(self, per_measurement_overhead_s: float = 0.3) -> float:
        """Expected wall time of the whole suite."""
        per_test = sum(t.expected_seconds() + per_measurement_overhead_s for t in self.tests)
        return sum(s.settle_ns / 1e9 + per_test for s in self.scenarios)

    def load_kinds(self) -> set[str]:
        """Built-in load kinds the suite uses."""
        return {ld.kind for s in self.scenarios for ld in s.loads if ld.kind is not None}
