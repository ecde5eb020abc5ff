"""Suites: tests x scenarios (loads) x parameter sweeps, read strictly from TOML.

The format is documented in docs/suites.md.  Every problem is a SuiteError naming the
file, the key path (e.g. ``tests[2].duration``) and the reason; nothing is run before the
whole file has been validated.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Protocol

from rtbench.cpulist import format_cpulist, parse_cpulist
from rtbench.rtprobe.locate import ProbeDescribeError, locate_probe, probe_describe

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

PACKAGE_DIR = Path(__file__).resolve().parent
BUILTIN_DIRS = (PACKAGE_DIR / "_suites", PACKAGE_DIR.parent / "suites")


# Tests that refuse --policy other (rtprobe says so when asked): their RT priorities are
# what they measure.
RT_ONLY_TESTS = frozenset({"pi"})


@dataclass(frozen=True)
class TestKind:
    """What a test kind takes of the options rtbench manages, as `rtprobe describe` says.

    An untimed test runs a fixed amount of work (ctx's repetitions x hops, pi's
    iterations, ipc --bandwidth's transfers, hackbench's loops); `nominal_s` is its
    expected length for the ETA and the hang limit.  `cpus` is how the scenario's
    measure_cpus reaches it: "--cpus LIST", "--cpu FIRST" (pi), or None (hackbench:
    the process is pinned instead).  `untimed_with` names a flag param that makes a
    timed test untimed (ipc's bandwidth).
    """

    timed: bool = True
    warmup: bool = True
    thresholds: bool = True
    cpus: str | None = "--cpus"
    nominal_s: float = 0.0
    untimed_with: str | None = None
    simulate: bool = True
    options: frozenset[str] = frozenset()


@dataclass(frozen=True)
class LoadKind:
    """A built-in load kind of rtprobe: its rate unit and range and its own options."""

    unit: str
    rate_min: float
    rate_max: float
    options: frozenset[str]


class CatalogueError(ValueError):
    """`rtprobe describe --json` printed something this rtbench cannot read."""


class ProbeMismatch(Exception):
    """The target's rtprobe cannot run the suite as asked: one line and its exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class _ProbeRunner(Protocol):
    """What target_catalogue needs of a target: running its rtprobe."""

    def run_probe(self, args: list[str], timeout_s: float = ...) -> Any: ...


@dataclass(frozen=True)
class ProbeCatalogue:
    """The tests and loads one rtprobe offers, read from `rtprobe describe --json`."""

    version: str
    tests: Mapping[str, TestKind]
    loads: Mapping[str, LoadKind]

    @classmethod
    def from_describe(cls, doc: Mapping[str, Any]) -> ProbeCatalogue:
        """Build it from the parsed rtprobe-describe/1 document."""
        try:
            if doc["schema"] != "rtprobe-describe/1":
                raise CatalogueError(f"unknown describe schema {doc['schema']!r}")
            tests = {str(t["name"]): _test_kind(t) for t in doc["tests"]}
            loads = {str(k["name"]): LoadKind(
                unit=str(k["unit"]), rate_min=float(k["rate_min"]),
                rate_max=float(k["rate_max"]),
                options=frozenset(str(o["name"]) for o in k["options"] + k["common_options"]))
                for k in doc["loads"]}
            return cls(version=str(doc["version"]), tests=tests, loads=loads)
        except (KeyError, TypeError, ValueError) as exc:
            raise CatalogueError(f"rtprobe describe --json: malformed ({exc})") from None

    @classmethod
    def from_text(cls, text: str) -> ProbeCatalogue:
        """Build it from the text `rtprobe describe --json` printed."""
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CatalogueError(f"rtprobe describe --json: not JSON ({exc})") from None
        if not isinstance(doc, dict):
            raise CatalogueError("rtprobe describe --json: not a JSON object")
        return cls.from_describe(doc)


def _test_kind(entry: Mapping[str, Any]) -> TestKind:
    """One test's traits from its describe entry."""
    cpu_option = entry["cpu_option"]
    return TestKind(
        timed=bool(entry["timed"]), warmup=bool(entry["warmup"]),
        thresholds=bool(entry["series"]),
        cpus=f"--{cpu_option}" if cpu_option else None,
        nominal_s=0.0 if entry["timed"] else int(entry["nominal_ns"]) / 1e9,
        untimed_with=entry["untimed_with"], simulate=bool(entry["simulate"]),
        options=frozenset(str(o["name"]) for o in entry["options"] + entry["common_options"]))


@functools.lru_cache(maxsize=1)
def local_catalogue() -> ProbeCatalogue:
    """The catalogue of the rtprobe this host runs (found as `rtbench run` finds it)."""
    probe = locate_probe()
    try:
        return ProbeCatalogue.from_text(probe_describe(probe))
    except CatalogueError as exc:
        raise ProbeDescribeError(f"{probe}: {exc}") from None


# Options rtbench sets itself: a test's params may not name them.
RESERVED_PARAMS = {
    "duration": "use the test's `duration` key",
    "warmup": "use the test's `warmup` key",
    "threshold": "use the test's `thresholds` key",
    "thresholds": "use the test's `thresholds` key",
    "cpus": "use the scenario's `measure_cpus` key",
    "output": "rtbench reads the probe's stdout",
    "simulate": "use `rtbench run --simulate`",
    "raw": "raw sample files are not collected by suites",
    "help": "not a parameter",
}
# Options rtbench sets itself on a built-in load: `options` may not name them.
RESERVED_LOAD_OPTIONS = {
    "rate": "use the load's `rate` key",
    "cpus": "use the load's `cpus` key or the scenario's `load_cpus`",
    "duration": "a load runs as long as its scenario",
    "output": "rtbench reads the load's stdout",
    "verbose": "not a parameter",
    "help": "not a parameter",
}

UNIT_NS = {
    "ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
    "m": 60_000_000_000, "h": 3_600_000_000_000, "d": 86_400_000_000_000,
}
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s|m|h|d)?\s*$")
# Limits that keep a typo from asking for millions of measurements or processes.
MAX_SWEEP = 1000
MAX_MEASUREMENTS = 10000
MAX_INSTANCES = 256
MAX_STRING = 65536
_CPULIST_RE = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
_PARAM_RE = re.compile(r"^[a-z][a-z0-9_-]*$")

ParamValue = str | int | float | bool | list[str | int | float]


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


def parse_duration_ns(value: object, default_unit: str) -> int:
    """Parse a duration (number with unit ns us ms s m h d, or bare number) to exact ns."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError("expected a duration such as \"10s\" or \"500us\"")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"{value!r} is negative")
        text, unit = repr(value), default_unit
    else:
        match = _DURATION_RE.match(value)
        if not match:
            raise ValueError(
                f"{value!r} is not a duration (a number and one of the units "
                "ns us ms s m h d, e.g. \"10s\")"
            )
        text, unit = match.group(1), match.group(2) or default_unit
    try:
        ns = Decimal(text) * UNIT_NS[unit]
    except InvalidOperation as exc:
        raise ValueError(f"{value!r} is not a number") from exc
    if ns != ns.to_integral_value():
        raise ValueError(f"{value!r} is not a whole number of nanoseconds")
    if ns >= 2**63:
        raise ValueError(f"{value!r} is too long")
    return int(ns)


def format_duration(ns: int) -> str:
    """Format ns with the largest unit that divides it exactly (what rtprobe accepts)."""
    for unit in ("d", "h", "m", "s", "ms", "us"):
        if ns and ns % UNIT_NS[unit] == 0:
            return f"{ns // UNIT_NS[unit]}{unit}"
    return f"{ns}ns"


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
        (fifo or rr only: pi, whose priorities are what it measures) or "none" (no
        --policy: hackbench runs as its caller, SCHED_OTHER)."""
        if "policy" not in self.kind.options:
            return "none"
        return "rt" if self.test in RT_ONLY_TESTS else "any"

    def runs(self) -> int:
        """How many times rtprobe runs warm-up + duration: wakeup once per mechanism."""
        mechanisms = self.params.get("mechanism")
        if self.test != "wakeup" or not isinstance(mechanisms, str | list):
            return 1
        count = len(mechanisms) if isinstance(mechanisms, list) \
            else len([m for m in mechanisms.split(",") if m.strip()])
        return max(1, count)

    def affinity(self, scenario: Scenario) -> str | None:
        """CPUs to pin the probe process to (tests without a CPU option only)."""
        return scenario.measure_cpus if self.traits().cpus is None else None

    def probe_args(self, scenario: Scenario, simulate: str | None,
                   policy: str | None = None) -> list[str]:
        """Return the rtprobe arguments (after the binary) for this test in scenario.

        policy "other" (rtbench run --policy other) runs the test as SCHED_OTHER: its own
        policy and priority params give way, as rtprobe takes no priority with it.
        """
        traits = self.traits()
        params = self.params
        if policy is not None and self.policy_use() == "any":
            params = {k: v for k, v in params.items() if k not in ("policy", "priority")}
        args = [self.test]
        if traits.timed:
            args += ["--duration", format_duration(self.duration_ns)]
        if traits.warmup:
            args += ["--warmup", format_duration(self.warmup_ns)]
        if self.thresholds_ns and traits.thresholds:
            args += ["--threshold", ",".join(format_duration(t) for t in self.thresholds_ns)]
        if scenario.measure_cpus is not None:
            if traits.cpus == "--cpus":
                args += ["--cpus", scenario.measure_cpus]
            elif traits.cpus == "--cpu" and "cpu" not in self.params:
                args += ["--cpu", str(min(parse_cpulist(scenario.measure_cpus)))]
        args += params_to_args(params)
        if policy is not None and self.policy_use() == "any":
            args += ["--policy", policy]
        if simulate is not None:
            args += ["--simulate", simulate]
        return args


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
        if window_ns % UNIT_NS["s"] or not UNIT_NS["s"] <= window_ns <= WINDOW_MAX_NS:
            raise SuiteError(self.source, "--window", f"{format_duration(window_ns)}: must "
                             "be whole seconds from 1s to 1h")
        value = format_duration(window_ns)
        return replace(self, tests=tuple(
            replace(t, params={**t.params, "window": value})
            if "window" in t.kind.options else t for t in self.tests))

    def estimated_seconds(self, per_measurement_overhead_s: float = 0.3) -> float:
        """Expected wall time of the whole suite."""
        per_test = sum(t.expected_seconds() + per_measurement_overhead_s for t in self.tests)
        return sum(s.settle_ns / 1e9 + per_test for s in self.scenarios)

    def load_kinds(self) -> set[str]:
        """Built-in load kinds the suite uses."""
        return {ld.kind for s in self.scenarios for ld in s.loads if ld.kind is not None}


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


def params_to_args(params: Mapping[str, ParamValue]) -> list[str]:
    """Turn a params table into --key value options (true: --key, false: omitted)."""
    args: list[str] = []
    for key, value in params.items():
        option = "--" + key.replace("_", "-")
        if value is True:
            args.append(option)
        elif value is False:
            continue
        elif isinstance(value, list):
            args += [option, ",".join(_scalar_text(v) for v in value)]
        else:
            args += [option, _scalar_text(value)]
    return args


def _scalar_text(value: str | int | float) -> str:
    """Text of one parameter value."""
    return value if isinstance(value, str) else repr(value)


class _Checker:
    """Validation helpers that know the file name (for messages) and the probe's kinds."""

    def __init__(self, source: str, catalogue: ProbeCatalogue) -> None:
        self.source = source
        self.catalogue = catalogue

    def fail(self, key: str, reason: str) -> SuiteError:
        """Build the error for key."""
        return SuiteError(self.source, key, reason)

    def table(self, value: object, key: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        """Check value is a table with only allowed keys."""
        if not isinstance(value, dict):
            raise self.fail(key, "must be a table")
        for name in value:
            if name not in allowed:
                path = f"{key}.{name}" if key else name
                raise self.fail(path, f"unknown key (allowed: {', '.join(allowed)})")
        return value

    def string(self, value: object, key: str) -> str:
        """Check value is a non-empty string."""
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, "must be a non-empty string")
        self.text(value, key)
        return value

    def text(self, value: str, key: str) -> None:
        """Refuse NUL bytes and over-long strings (they cannot be arguments or names)."""
        if "\x00" in value:
            raise self.fail(key, "contains a NUL byte")
        if len(value) > MAX_STRING:
            raise self.fail(key, f"longer than {MAX_STRING} characters")

    def duration(self, value: object, key: str, default_unit: str, *, zero_ok: bool) -> int:
        """Parse a duration at key."""
        try:
            ns = parse_duration_ns(value, default_unit)
        except ValueError as exc:
            raise self.fail(key, str(exc)) from None
        if ns == 0 and not zero_ok:
            raise self.fail(key, "must be greater than zero")
        return ns

    def thresholds(self, value: object, key: str) -> tuple[int, ...]:
        """Parse a list of thresholds (bare numbers are microseconds)."""
        items = value if isinstance(value, list) else [value]
        if len(items) > 8:
            raise self.fail(key, "at most 8 thresholds")
        result = [
            self.duration(v, f"{key}[{i}]", "us", zero_ok=False) for i, v in enumerate(items)
        ]
        return tuple(sorted(set(result)))

    def cpulist(self, value: object, key: str) -> str:
        """Check a CPU list such as "0-3,6"."""
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise self.fail(key, "must be a CPU list such as \"0-3,6\"")
        text = str(value)
        if not _CPULIST_RE.match(text):
            raise self.fail(key, f"{text!r} is not a CPU list such as \"0-3,6\"")
        try:
            parse_cpulist(text)
        except ValueError as exc:
            raise self.fail(key, f"{text!r}: {exc}") from None
        return text

    def number(self, value: object, key: str, *, integer: bool, minimum: float) -> float:
        """Check a number >= minimum."""
        ok_type = int if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, ok_type):
            raise self.fail(key, "must be an integer" if integer else "must be a number")
        if not math.isfinite(value) or abs(value) >= 2**63:
            raise self.fail(key, f"{value!r} is not a finite number below 2^63")
        if value < minimum:
            raise self.fail(key, f"must be >= {minimum:g}")
        return float(value)

    def params(self, value: object, key: str,
               reserved: Mapping[str, str] = RESERVED_PARAMS) -> dict[str, ParamValue]:
        """Check a params table: option names with scalar or list values."""
        if not isinstance(value, dict):
            raise self.fail(key, "must be a table of option = value")
        for name, item in value.items():
            path = f"{key}.{name}"
            if not _PARAM_RE.match(name):
                raise self.fail(path, "is not an option name (lower case letters, digits, - _)")
            if name in reserved:
                raise self.fail(path, f"not allowed here: {reserved[name]}")
            self.param_value(item, path)
        return dict(value)

    def param_value(self, value: object, key: str) -> None:
        """Check one parameter value."""
        if isinstance(value, list):
            if not value:
                raise self.fail(key, "an empty list")
            for i, item in enumerate(value):
                if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                    raise self.fail(f"{key}[{i}]", "list items must be strings or numbers")
                self.scalar(item, f"{key}[{i}]")
        elif not isinstance(value, (str, int, float, bool)):
            raise self.fail(key, "must be a string, number, boolean or list")
        else:
            self.scalar(value, key)

    def scalar(self, value: object, key: str) -> None:
        """Refuse a parameter value no command line can carry (NUL, inf, > 64 bits)."""
        if isinstance(value, str):
            self.text(value, key)
        elif isinstance(value, float) and not math.isfinite(value):
            raise self.fail(key, f"{value!r} is not a finite number")
        elif isinstance(value, int) and not -(2**63) <= value < 2**64:
            raise self.fail(key, f"{value} does not fit in 64 bits")


def _parse_load(check: _Checker, raw: object, key: str, load_cpus: str | None) -> LoadSpec:
    """Validate one load table."""
    table = check.table(raw, key, ("command", "kind", "rate", "instances", "cpus", "options",
                                   "on"))
    on = check.string(table.get("on", "target"), f"{key}.on")
    if on not in ("target", "host"):
        raise check.fail(f"{key}.on", "must be \"target\" or \"host\"")
    if on == "host" and table.get("kind") != "net":
        raise check.fail(f"{key}.on", "only the net load runs on the host (it floods the "
                         "target's address)")
    instances = int(check.number(table.get("instances", 1), f"{key}.instances",
                                 integer=True, minimum=1))
    if instances > MAX_INSTANCES:
        raise check.fail(f"{key}.instances", f"{instances}: at most {MAX_INSTANCES}")
    cpus = check.cpulist(table["cpus"], f"{key}.cpus") if "cpus" in table else load_cpus
    if ("command" in table) == ("kind" in table):
        raise check.fail(key, "give exactly one of `command` (external) or `kind` (built-in)")
    if "command" in table:
        for extra in ("rate", "options"):
            if extra in table:
                raise check.fail(f"{key}.{extra}", "only for built-in loads (`kind`)")
        return LoadSpec(instances=instances, command=check.string(table["command"],
                        f"{key}.command"), cpus=cpus)
    kind = check.string(table["kind"], f"{key}.kind")
    kinds = check.catalogue.loads
    if kind not in kinds:
        raise check.fail(f"{key}.kind",
                         f"unknown load kind {kind!r} (one of {', '.join(kinds)})")
    if "rate" not in table:
        raise check.fail(f"{key}.rate", "missing: a built-in load is defined by its rate")
    rate: float | str = table["rate"]
    if rate != "max":
        rate = check.number(rate, f"{key}.rate", integer=False, minimum=0)
        if rate == 0 or not math.isfinite(rate):
            raise check.fail(f"{key}.rate", "must be a finite number > 0 or \"max\" "
                             "(a load at rate 0 would not run; remove the load instead)")
    options = check.params(table.get("options", {}), f"{key}.options",
                           RESERVED_LOAD_OPTIONS)
    if kind == "io" and "dir" not in options:
        raise check.fail(f"{key}.options.dir",
                         "missing: the io load writes and walks files in a directory you "
                         "name (e.g. options = { dir = \"/var/tmp\" })")
    if on == "host":
        return LoadSpec(instances=instances, kind=kind, rate=rate, options=options, on="host")
    return LoadSpec(instances=instances, kind=kind, rate=rate, cpus=cpus, options=options)


def _parse_scenario(check: _Checker, raw: object, key: str, settle_ns: int,
                    defaults: dict[str, Any]) -> Scenario:
    """Validate one [[scenarios]] entry."""
    table = check.table(raw, key, ("name", "description", "loads", "load_cpus",
                                   "measure_cpus", "settle"))
    if "name" not in table:
        raise check.fail(f"{key}.name", "missing")
    name = check.string(table["name"], f"{key}.name")
    load_cpus = check.cpulist(table["load_cpus"], f"{key}.load_cpus") \
        if "load_cpus" in table else defaults["load_cpus"]
    measure = check.cpulist(table["measure_cpus"], f"{key}.measure_cpus") \
        if "measure_cpus" in table else defaults["measure_cpus"]
    loads_raw = table.get("loads", [])
    if not isinstance(loads_raw, list):
        raise check.fail(f"{key}.loads", "must be a list of load tables")
    loads = tuple(_parse_load(check, ld, f"{key}.loads[{i}]", load_cpus)
                  for i, ld in enumerate(loads_raw))
    if "settle" in table:
        settle_ns = check.duration(table["settle"], f"{key}.settle", "s", zero_ok=True)
    return Scenario(name=name, description=str(table.get("description", "")), loads=loads,
                    load_cpus=load_cpus, measure_cpus=measure,
                    settle_ns=settle_ns if loads else 0)


def _parse_tests(check: _Checker, raw: object, key: str, index: int,
                 defaults: dict[str, Any]) -> list[TestSpec]:
    """Validate one [[tests]] entry and expand its sweep."""
    table = check.table(raw, key, ("name", "test", "params", "sweep", "duration", "warmup",
                                   "thresholds"))
    kinds = check.catalogue.tests
    if "test" not in table:
        raise check.fail(f"{key}.test", f"missing (one of {', '.join(kinds)})")
    kind = check.string(table["test"], f"{key}.test")
    if kind not in kinds:
        raise check.fail(f"{key}.test",
                         f"unknown test kind {kind!r} (one of {', '.join(kinds)})")
    name = check.string(table.get("name", kind), f"{key}.name")
    duration = check.duration(table["duration"], f"{key}.duration", "s", zero_ok=False) \
        if "duration" in table else defaults["duration"]
    warmup = check.duration(table["warmup"], f"{key}.warmup", "s", zero_ok=True) \
        if "warmup" in table else defaults["warmup"]
    thresholds = check.thresholds(table["thresholds"], f"{key}.thresholds") \
        if "thresholds" in table else defaults["thresholds"]
    params = dict(defaults["params"])
    own = check.params(table.get("params", {}), f"{key}.params")
    params.update(own)
    sweep = check.params(table.get("sweep", {}), f"{key}.sweep")
    for sname, values in sweep.items():
        if not isinstance(values, list):
            raise check.fail(f"{key}.sweep.{sname}", "must be a list of values to sweep")
    base = TestSpec(name=name, test=kind, duration_ns=duration, warmup_ns=warmup,
                    thresholds_ns=thresholds, params=params, index=index,
                    own_params=frozenset(own), kind=kinds[kind])
    if not sweep:
        return [_fit_kind(check, base, table, key)]
    names = list(sweep)
    value_lists = [sweep[n] for n in names]
    combinations = 1
    for values in value_lists:
        combinations *= len(values) if isinstance(values, list) else 1
    if combinations > MAX_SWEEP:
        raise check.fail(f"{key}.sweep", f"{combinations} combinations; at most {MAX_SWEEP} "
                         "measurements per [[tests]] entry (split the sweep)")
    specs = []
    for combo in itertools.product(*value_lists):  # type: ignore[arg-type]
        swept = dict(params)
        swept.update(zip(names, combo, strict=True))
        label = ",".join(f"{n}={_scalar_text(v)}" for n, v in zip(names, combo, strict=True))
        specs.append(_fit_kind(check, replace(base, name=f"{name}[{label}]", params=swept,
                                              sweep_keys=frozenset(names)), table, key))
    return specs


def _fit_kind(check: _Checker, spec: TestSpec, table: dict[str, Any], key: str) -> TestSpec:
    """Drop what the test kind does not take; refuse it when the entry set it itself.

    Values from [defaults] simply do not apply to such a test (ctx has no duration).
    """
    traits = spec.traits()
    hint = (f"it runs a fixed amount of work, set by its own options in params "
            f"(see `rtprobe {spec.test} --help`)")
    for name, takes in (("duration", traits.timed), ("warmup", traits.warmup),
                        ("thresholds", traits.thresholds)):
        if name in table and not takes:
            raise check.fail(f"{key}.{name}",
                             f"{spec.test} takes no {name}: {hint}")
    return replace(spec, warmup_ns=spec.warmup_ns if traits.warmup else 0,
                   thresholds_ns=spec.thresholds_ns if traits.thresholds else ())


def parse_suite(text: str, source: str, catalogue: ProbeCatalogue | None = None) -> Suite:
    """Parse and validate suite TOML text; source names the file in errors.

    Test and load kinds are those of catalogue (default: the local rtprobe's).
    """
    check = _Checker(source, catalogue if catalogue is not None else local_catalogue())
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise check.fail("", f"not valid TOML ({exc})") from None
    except RecursionError:
        raise check.fail("", "not valid TOML (nested too deeply)") from None
    check.table(doc, "", ("suite", "defaults", "scenarios", "tests"))
    if "suite" not in doc:
        raise check.fail("suite", "missing: the [suite] table with at least `name`")
    head = check.table(doc["suite"], "suite", ("name", "description", "scale"))
    if "name" not in head:
        raise check.fail("suite.name", "missing")
    name = check.string(head["name"], "suite.name")
    scale = check.number(head.get("scale", 1.0), "suite.scale", integer=False, minimum=0)
    if scale == 0:
        raise check.fail("suite.scale", "must be greater than zero")
    dtable = check.table(doc.get("defaults", {}), "defaults",
                         ("duration", "warmup", "thresholds", "params", "settle",
                          "load_cpus", "measure_cpus"))
    defaults: dict[str, Any] = {
        "duration": check.duration(dtable.get("duration", "10s"), "defaults.duration", "s",
                                   zero_ok=False),
        "warmup": check.duration(dtable.get("warmup", "1s"), "defaults.warmup", "s",
                                 zero_ok=True),
        "thresholds": check.thresholds(dtable["thresholds"], "defaults.thresholds")
        if "thresholds" in dtable else (),
        "params": check.params(dtable.get("params", {}), "defaults.params"),
        "load_cpus": check.cpulist(dtable["load_cpus"], "defaults.load_cpus")
        if "load_cpus" in dtable else None,
        "measure_cpus": check.cpulist(dtable["measure_cpus"], "defaults.measure_cpus")
        if "measure_cpus" in dtable else None,
    }
    settle = check.duration(dtable.get("settle", "1s"), "defaults.settle", "s", zero_ok=True)
    scen_raw = doc.get("scenarios", [{"name": "idle"}])
    if not isinstance(scen_raw, list) or not scen_raw:
        raise check.fail("scenarios", "must be a non-empty array of tables ([[scenarios]])")
    scenarios = tuple(_parse_scenario(check, s, f"scenarios[{i}]", settle, defaults)
                      for i, s in enumerate(scen_raw))
    _unique([s.name for s in scenarios], check, "scenarios", "scenario name")
    tests_raw = doc.get("tests")
    if not isinstance(tests_raw, list) or not tests_raw:
        raise check.fail("tests", "missing: at least one [[tests]] table")
    tests: list[TestSpec] = []
    for i, t in enumerate(tests_raw):
        tests += _parse_tests(check, t, f"tests[{i}]", i, defaults)
        if len(tests) * len(scenarios) > MAX_MEASUREMENTS:
            raise check.fail("tests", f"more than {MAX_MEASUREMENTS} measurements "
                             "(scenarios x tests, sweeps expanded); split the suite")
    _unique([t.name for t in tests], check, "tests", "test name")
    suite = Suite(name=name, description=str(head.get("description", "")), source=source,
                  scale=1.0, scenarios=scenarios, tests=tuple(tests), text=text)
    return suite.scaled(scale)


def _unique(names: list[str], check: _Checker, key: str, what: str) -> None:
    """Refuse duplicate names."""
    seen: set[str] = set()
    for i, n in enumerate(names):
        if n in seen:
            raise check.fail(f"{key}[{i}]", f"duplicate {what} {n!r}")
        seen.add(n)


def builtin_suites() -> dict[str, Path]:
    """Map built-in suite names to their files (packaged copy first)."""
    found: dict[str, Path] = {}
    for directory in BUILTIN_DIRS:
        if directory.is_dir():
            for path in sorted(directory.glob("*.toml")):
                found.setdefault(path.stem, path)
    return found


def resolve_suite_path(name_or_path: str) -> Path:
    """Return the file of a built-in suite name or a path to a TOML file."""
    path = Path(name_or_path)
    looks_like_path = "/" in name_or_path or name_or_path.endswith(".toml")
    if looks_like_path or path.is_file():
        if not path.is_file():
            raise SuiteError(name_or_path, "", "no such suite file")
        return path
    builtin = builtin_suites()
    if name_or_path not in builtin:
        known = ", ".join(sorted(builtin)) or "none installed"
        raise SuiteError(name_or_path, "", f"no built-in suite of that name ({known}) "
                         "and no such file")
    return builtin[name_or_path]


def load_suite(name_or_path: str, scale: float = 1.0) -> Suite:
    """Read, validate and scale a suite given by built-in name or file path."""
    path = resolve_suite_path(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(str(path), "", f"cannot read ({exc})") from None
    suite = parse_suite(text, str(path))
    return suite.scaled(scale) if scale != 1.0 else suite


def check_options(suite: Suite, catalogue: ProbeCatalogue) -> None:
    """Refuse params that the probe's test does not take (per `rtprobe describe`)."""
    for test in suite.tests:
        kind = catalogue.tests.get(test.test)
        if kind is None:
            raise SuiteError(suite.source, f"tests[{test.index}].test",
                             f"this rtprobe ({catalogue.version}) has no test {test.test!r}; "
                             "update rtprobe or remove the test")
        for key in test.params:
            if key.replace("_", "-") in kind.options:
                continue
            where = f"defaults.params.{key}"
            if key in test.sweep_keys:
                where = f"tests[{test.index}].sweep.{key}"
            elif key in test.own_params:
                where = f"tests[{test.index}].params.{key}"
            option = "--" + key.replace("_", "-")
            raise SuiteError(suite.source, where,
                             f"rtprobe {test.test} has no option {option} "
                             f"(see `rtprobe {test.test} --help`)")


def check_load_options(suite: Suite, catalogue: ProbeCatalogue) -> None:
    """Refuse built-in loads and load options the probe does not have."""
    for i, scenario in enumerate(suite.scenarios):
        for j, load in enumerate(scenario.loads):
            if load.kind is None:
                continue
            kind = catalogue.loads.get(load.kind)
            where = f"scenarios[{i}].loads[{j}]"
            if kind is None:
                raise SuiteError(suite.source, f"{where}.kind",
                                 f"this rtprobe ({catalogue.version}) has no load "
                                 f"{load.kind!r}; use an external command load instead")
            for key in load.options:
                if key.replace("_", "-") not in kind.options:
                    raise SuiteError(suite.source, f"{where}.options.{key}",
                                     f"rtprobe load {load.kind} has no option "
                                     f"--{key.replace('_', '-')} "
                                     f"(see `rtprobe load {load.kind} --help`)")


def target_catalogue(target: _ProbeRunner) -> ProbeCatalogue:
    """The catalogue of the target's rtprobe (`rtprobe describe --json` run there)."""
    done = target.run_probe(["describe", "--json"], timeout_s=30.0)
    if done.returncode != 0:
        raise ProbeMismatch("the target's rtprobe has no `describe --json` (exit "
                            f"{done.returncode}): it is older than rtbench; update it", 3)
    try:
        return ProbeCatalogue.from_text(str(done.stdout))
    except CatalogueError as exc:
        raise ProbeMismatch(str(exc), 3) from None


def validate_for_probe(suite: Suite, catalogue: ProbeCatalogue, simulate: bool) -> None:
    """Before anything runs: the probe has every test kind, option and load the suite
    uses, and --simulate for every test of a simulated run.

    A kind the probe lacks is ProbeMismatch (exit 3: update the probe); an option it
    lacks is SuiteError (exit 2: fix the file); --simulate for a test without it is
    ProbeMismatch with exit 2.
    """
    for kind in sorted({t.test for t in suite.tests} - set(catalogue.tests)):
        raise ProbeMismatch(f"suite {suite.source}: this rtprobe ({catalogue.version}) has "
                            f"no test {kind!r}; update rtprobe or remove the test", 3)
    missing = sorted(suite.load_kinds() - set(catalogue.loads))
    if missing:
        raise ProbeMismatch(f"suite {suite.source}: this rtprobe ({catalogue.version}) has "
                            f"no built-in load {', '.join(missing)}; update rtprobe or use "
                            "an external command load (command = ...) instead", 3)
    if simulate:
        for test in suite.tests:
            if not catalogue.tests[test.test].simulate:
                raise ProbeMismatch(
                    f"--simulate: rtprobe {test.test} has no simulation, so the run would "
                    f"mix synthetic and real results; remove the {test.test} tests from "
                    f"{suite.source} or run without --simulate", 2)
    check_options(suite, catalogue)
    check_load_options(suite, catalogue)
