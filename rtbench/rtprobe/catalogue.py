"""What one rtprobe offers, from `rtprobe describe --json`: its tests, loads and options.

The host learns a probe's tests and loads only from here: `local_catalogue()` asks the
rtprobe this host runs, `target_catalogue()` the target's (through its run_probe).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from rtbench.kinds import KindTraits, packaged, traits_from_host
from rtbench.rtprobe.util.locate import ProbeDescribeError, locate_probe, probe_describe


@dataclass(frozen=True)
class TestKind:
    """What a test kind takes of the options rtbench manages, as `rtprobe describe` says.

    An untimed test runs a fixed amount of work (ctx's repetitions x hops, pi's
    iterations, ipc --bandwidth's transfers, hackbench's loops); `nominal_s` is its
    expected length for the ETA and the hang limit.  `cpus` is how the scenario's
    measure_cpus reaches it: "--cpus LIST", "--cpu FIRST" (pi), or None (hackbench:
    the process is pinned instead).  `untimed_with` names a flag param that makes a
    timed test untimed (ipc's bandwidth).  `host` is what rtbench does with its
    results (rtbench/kinds): from the probe's `host` object, or the packaged copy for
    a probe older than it.
    """

    timed: bool = True
    warmup: bool = True
    thresholds: bool = True
    cpus: str | None = "--cpus"
    nominal_s: float = 0.0
    untimed_with: str | None = None
    simulate: bool = True
    options: frozenset[str] = frozenset()
    host: KindTraits = KindTraits(name="")


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
    name = str(entry["name"])
    host = traits_from_host(name, entry["host"]) if "host" in entry \
        else packaged().traits(name)
    return TestKind(
        timed=bool(entry["timed"]), warmup=bool(entry["warmup"]),
        thresholds=bool(entry["series"]),
        cpus=f"--{cpu_option}" if cpu_option else None,
        nominal_s=0.0 if entry["timed"] else int(entry["nominal_ns"]) / 1e9,
        untimed_with=entry["untimed_with"], simulate=bool(entry["simulate"]),
        options=frozenset(str(o["name"]) for o in entry["options"] + entry["common_options"]),
        host=host)


@functools.lru_cache(maxsize=1)
def local_catalogue() -> ProbeCatalogue:
    """The catalogue of the rtprobe this host runs (found as `rtbench run` finds it)."""
    probe = locate_probe()
    try:
        return ProbeCatalogue.from_text(probe_describe(probe))
    except CatalogueError as exc:
        raise ProbeDescribeError(f"{probe}: {exc}") from None


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
