"""Test kinds: the one registry of what rtbench does with each test's results.

rtprobe describes each test's host traits (`describe --json`, each test's `host`:
RT-only, busy loop, runs per item, headline figures, table keys, layouts it feeds;
docs/rtprobe.md).  A `KindRegistry` maps test names to those traits, and a kind that
needs host behaviour of its own has one module here named after it (`ctx.py`:
`headline(data)`, `table(data)`); a kind without one gets a headline of its described
figures.  No other module of rtbench names a probe test to decide something
(tests/host/test_kinds.py checks it).

Where the traits come from (docs/architecture.md, "Test kinds"):
- a suite's tests carry them from the probe's catalogue (`rtprobe/catalogue.py`);
- a stored run records the traits of its kinds that the packaged copy (`_known.py`)
  lacks or describes otherwise, in `source["kinds"]` (`recorded_kinds()`); reading it
  back, `run_registry(run.source)` is the packaged copy with those on top;
- runs that recorded nothing (stored before, imported from other tools, made by a probe
  older than `host`) get the packaged copy.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from rtbench.kinds._known import KNOWN_HOST
from rtbench.kinds._traits import KindTraits, TraitsError, traits_from_host

__all__ = ["KindRegistry", "KindTable", "KindTraits", "TraitsError", "packaged",
           "recorded_kinds", "registry_for", "run_registry", "traits_from_host"]


@dataclass(frozen=True)
class KindTable:
    """A kind's own table of its result data: its module's `table(data)` with the
    module's TABLE_CAPTION and TABLE_STAR (what a "*" in a cell means, or None)."""

    headers: list[str]
    rows: list[list[str]]
    caption: str
    star: str | None = None


@functools.lru_cache(maxsize=64)
def _module(name: str) -> ModuleType | None:
    """The kind's own module rtbench/kinds/NAME.py ("-" as "_"), or None."""
    if not name or not all(c.isalnum() and c.isascii() or c in "-_" for c in name) \
            or name.startswith(("_", "-")):
        return None
    dotted = f"{__name__}.{name.replace('-', '_')}"
    if importlib.util.find_spec(dotted) is None:
        return None
    return importlib.import_module(dotted)


def _special(name: str, what: str) -> Callable[[dict[str, Any]], Any] | None:
    """The kind module's function `what`, or None."""
    module = _module(name)
    func = getattr(module, what, None) if module is not None else None
    return func if callable(func) else None


def _scalar(value: Any) -> str | None:
    """A figure's value as a headline shows it; None for lists and objects."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int | str):
        return str(value)
    return None


def figures_headline(figures: Iterable[str], data: dict[str, Any]) -> str | None:
    """The headline of a kind without a module: its described figures, key value."""
    parts = [f"{key} {text}" for key in figures
             if (text := _scalar(data.get(key))) is not None]
    return ", ".join(parts) or None


class KindRegistry:
    """Test kinds by name, with the host behaviour each one has."""

    def __init__(self, kinds: Mapping[str, KindTraits]) -> None:
        self.kinds = dict(kinds)

    def traits(self, test: str) -> KindTraits:
        """The traits of a test kind (the plain ones for a kind nobody described)."""
        return self.kinds.get(test) or KindTraits(name=test)

    def headline(self, test: str, data: dict[str, Any] | None) -> str | None:
        """The key figures of a test's result data in one line (None if there are none)."""
        if not isinstance(data, dict):
            return None
        func = _special(test, "headline")
        try:
            if func is not None:
                return func(data)  # type: ignore[no-any-return]
            return figures_headline(self.traits(test).figures, data)
        except (KeyError, TypeError, ValueError, ArithmeticError):
            return None

    def table(self, test: str, data: dict[str, Any] | None) -> KindTable | None:
        """The kind's own table of its result data (ctx's lmbench table), or None."""
        func = _special(test, "table")
        if func is None or not isinstance(data, dict):
            return None
        try:
            found = func(data)
        except (KeyError, TypeError, ValueError, ArithmeticError):
            return None
        if found is None:
            return None
        module = _module(test)
        return KindTable(found[0], found[1], str(getattr(module, "TABLE_CAPTION", "")),
                         getattr(module, "TABLE_STAR", None))

    def table_keys(self, test: str) -> tuple[str, ...]:
        """Result data keys the kind's table shows (left out of key/value rows)."""
        return self.traits(test).table_keys

    def feeding(self, layout: str) -> list[str]:
        """The kinds that feed a published study's layout, by name."""
        return sorted(name for name, kind in self.kinds.items() if layout in kind.layouts)

    def own_cpus(self) -> frozenset[str]:
        """The kinds whose every thread is one of their series, on its CPU."""
        return frozenset(name for name, kind in self.kinds.items() if kind.own_cpus)


@functools.lru_cache(maxsize=1)
def packaged() -> KindRegistry:
    """The packaged copy of the in-tree probe's kinds (_known.py)."""
    return KindRegistry({name: traits_from_host(name, host)
                         for name, host in KNOWN_HOST.items()})


def registry_for(described: Mapping[str, KindTraits]) -> KindRegistry:
    """The packaged kinds with the described ones on top."""
    if not described:
        return packaged()
    return KindRegistry({**packaged().kinds, **described})


def run_registry(source: Mapping[str, Any] | None) -> KindRegistry:
    """The kinds of a stored run: the packaged copy with what the run recorded
    (`source["kinds"]`, as recorded_kinds() wrote it) on top; a malformed entry is
    left out (its kind then has the packaged or the plain traits)."""
    recorded = source.get("kinds") if isinstance(source, Mapping) else None
    if not isinstance(recorded, Mapping) or not recorded:
        return packaged()
    described = {}
    for name, host in recorded.items():
        try:
            described[str(name)] = traits_from_host(str(name), host)
        except TraitsError:
            continue
    return registry_for(described)


def recorded_kinds(kinds: Iterable[KindTraits]) -> dict[str, dict[str, Any]]:
    """What a run records of its kinds (`source["kinds"]`): those the packaged copy
    lacks or describes otherwise, as describe's `host` objects ({} when none)."""
    known = packaged().kinds
    return {kind.name: kind.host_object() for kind in kinds
            if known.get(kind.name) != kind}
