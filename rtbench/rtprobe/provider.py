"""Where a target's rtprobe comes from: the provider a target is handed.

A target carries bytes and processes only.  It asks its provider for "the probe for
this machine" and never builds or searches for one itself: the commands make the
provider (from --probe, if given) and pass it to open_target().
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from rtbench.rtprobe.locate import locate_probe


class ProbeUnavailable(Exception):
    """No probe can be had for the arch asked for; str() says why and what to do."""


class ProbeProvider(Protocol):
    """What a target needs to get its rtprobe."""

    def host_probe(self) -> Path:
        """The rtprobe this machine runs (the local target's)."""
        ...

    def probe_for(self, arch: str, *, simulation: bool = False) -> Path:
        """A local path to a static rtprobe for a board of arch (x86_64, armhf, ...): the
        board build, or with simulation one that runs --simulate (board builds do not);
        ProbeUnavailable when there is none."""
        ...


class Probes:
    """The probes of rtbench: --probe when given, else the host's located rtprobe and,
    for boards, the static build of their arch (built once, then cached)."""

    def __init__(self, given: Path | None = None) -> None:
        self.given = given

    def host_probe(self) -> Path:
        """--probe, else the rtprobe locate_probe() finds (ProbeNotFound says how to get
        one)."""
        return locate_probe(str(self.given) if self.given is not None else None)

    def probe_for(self, arch: str, *, simulation: bool = False) -> Path:
        """--probe (the target checks it is for arch), else the cached static build for
        arch (the board build, or the full one when simulation), built first when needed."""
        if self.given is not None:
            return self.given
        from rtbench.rtprobe.build import ProbeBuildError, build_probe

        try:
            return build_probe(arch, simulation=simulation)
        except ProbeBuildError as exc:
            raise ProbeUnavailable(f"no probe for arch {arch}: {exc}") from exc
