"""Reading suites: TOML checked strictly into a Suite, built-in suites found by name.

The format is documented in docs/suites.md.  Every problem is a SuiteError naming the
file, the key path (e.g. ``tests[2].duration``) and the reason; nothing is run before the
whole file has been validated.
"""

from __future__ import annotations

import itertools
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from rtbench.core.readlimit import SUITE_MAX_BYTES, InputTooLarge, read_text_limited
from rtbench.rtprobe.argv import UNIT_NS, ParamValue, scalar_text
from rtbench.rtprobe.catalogue import ProbeCatalogue, local_catalogue
from rtbench.suites.model import LoadSpec, Scenario, Suite, SuiteError, TestSpec
from rtbench.util.cpulist import parse_cpulist

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

PACKAGE_DIR = Path(__file__).resolve().parents[1]
BUILTIN_DIRS = (PACKAGE_DIR / "_suites", PACKAGE_DIR.parent / "suites")


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
    "trace": "use the test's `trace` key",
}

# The values of a `trace` key (rtprobe --trace; docs/suites.md).
TRACE_MODES = ("auto", "on", "off")


# Options rtbench sets itself on a built-in load: `options` may not name them.
RESERVED_LOAD_OPTIONS = {
    "rate": "use the load's `rate` key",
    "cpus": "use the load's `cpus` key or the scenario's `load_cpus`",
    "duration": "a load runs as long as its scenario",
    "output": "rtbench reads the load's stdout",
    "verbose": "not a parameter",
    "help": "not a parameter",
}


_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s|m|h|d)?\s*$")


# Limits that keep a typo from asking for millions of measurements or processes.
MAX_SWEEP = 1000


MAX_MEASUREMENTS = 10000


MAX_INSTANCES = 256


MAX_STRING = 65536


_CPULIST_RE = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


_PARAM_RE = re.compile(r"^[a-z][a-z0-9_-]*$")


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
                                   "thresholds", "trace"))
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
    trace = _trace_mode(check, table["trace"], f"{key}.trace") if "trace" in table \
        else defaults["trace"]
    if trace != "off" and "trace" in kinds[kind].options:
        params["trace"] = trace
    elif trace != "off" and "trace" in table:
        raise check.fail(f"{key}.trace", f"{kind} takes no trace: --trace is offered by "
                         f"{', '.join(k for k, v in kinds.items() if 'trace' in v.options)}")
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
        label = ",".join(f"{n}={scalar_text(v)}" for n, v in zip(names, combo, strict=True))
        specs.append(_fit_kind(check, replace(base, name=f"{name}[{label}]", params=swept,
                                              sweep_keys=frozenset(names)), table, key))
    return specs


def _trace_mode(check: _Checker, value: object, key: str) -> str:
    """A `trace` key: "auto", "on" or "off" (docs/suites.md)."""
    mode = check.string(value, key)
    if mode not in TRACE_MODES:
        raise check.fail(key, f"{mode!r}: must be one of {', '.join(TRACE_MODES)}")
    return mode


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
                          "load_cpus", "measure_cpus", "trace"))
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
        "trace": _trace_mode(check, dtable["trace"], "defaults.trace")
        if "trace" in dtable else "off",
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
        text = read_text_limited(path, SUITE_MAX_BYTES)
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(str(path), "", f"cannot read ({exc})") from None
    except InputTooLarge:
        raise SuiteError(str(path), "", f"larger than {SUITE_MAX_BYTES >> 20} MiB; a suite "
                         "file is a few KiB of TOML") from None
    suite = parse_suite(text, str(path))
    return suite.scaled(scale) if scale != 1.0 else suite
