"""A test kind's host traits: what rtbench does with its results, as rtprobe describes it.

`rtprobe describe --json` gives each test a `host` object (docs/rtprobe.md); this is it
read into a typed value.  A kind nobody described (an imported tool's test, a probe older
than `host`) gets the plain traits: no special rule applies to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# how a busy-loop option reads when it is not set (periodic's --busy 0)
UNSET_VALUES = (None, 0, "0", "0us", "0ns")


class TraitsError(ValueError):
    """A `host` object that does not have the shape of docs/rtprobe.md."""


@dataclass(frozen=True)
class KindTraits:
    """What the host does with one test kind's results."""

    name: str
    rt_only: bool = False  # refuses --policy other: its RT priorities are what it measures
    own_cpus: bool = False  # every thread is one of its series, on that series' CPU
    busy_loop: str | None = None  # "always", or the own option that makes it one when set
    runs_per: str | None = None  # own list option: warm-up + duration once per item
    figures: tuple[str, ...] = ()  # result data keys its headline shows
    table_keys: tuple[str, ...] = ()  # result data keys its table shows
    layouts: tuple[str, ...] = ()  # the published studies' layouts it feeds

    def host_object(self) -> dict[str, Any]:
        """The traits as describe's `host` object (what a run records)."""
        return {"rt_only": self.rt_only, "own_cpus": self.own_cpus,
                "busy_loop": self.busy_loop, "runs_per": self.runs_per,
                "figures": list(self.figures), "table_keys": list(self.table_keys),
                "layouts": list(self.layouts)}

    def is_busy_loop(self, params: Mapping[str, Any]) -> bool:
        """Whether a measurement with these params ran its threads flat out."""
        if self.busy_loop is None:
            return False
        return self.busy_loop == "always" or params.get(self.busy_loop) not in UNSET_VALUES

    def runs(self, params: Mapping[str, Any]) -> int:
        """How many times a measurement runs warm-up + duration (once per item of the
        runs_per list option: wakeup's mechanisms)."""
        items = params.get(self.runs_per) if self.runs_per is not None else None
        if not isinstance(items, str | list):
            return 1
        count = len(items) if isinstance(items, list) \
            else len([m for m in items.split(",") if m.strip()])
        return max(1, count)


def _strings(value: Any, key: str) -> tuple[str, ...]:
    """A list of strings, or TraitsError."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TraitsError(f"host.{key}: not a list of strings")
    return tuple(value)


def _optional_text(value: Any, key: str) -> str | None:
    """A string or null, or TraitsError."""
    if value is not None and not isinstance(value, str):
        raise TraitsError(f"host.{key}: not a string or null")
    return value


def traits_from_host(name: str, host: Any) -> KindTraits:
    """Read describe's `host` object of test `name` (TraitsError when malformed)."""
    if not isinstance(host, Mapping):
        raise TraitsError("host: not an object")
    try:
        flags = {key: host[key] for key in ("rt_only", "own_cpus")}
        if not all(isinstance(v, bool) for v in flags.values()):
            raise TraitsError("host.rt_only, host.own_cpus: not booleans")
        return KindTraits(
            name=name, rt_only=flags["rt_only"], own_cpus=flags["own_cpus"],
            busy_loop=_optional_text(host["busy_loop"], "busy_loop"),
            runs_per=_optional_text(host["runs_per"], "runs_per"),
            figures=_strings(host["figures"], "figures"),
            table_keys=_strings(host["table_keys"], "table_keys"),
            layouts=_strings(host["layouts"], "layouts"))
    except KeyError as exc:
        raise TraitsError(f"host: no {exc.args[0]}") from None
