"""Where a target's rtprobe comes from: the provider a target is handed.

A target carries bytes and processes only.  It asks its provider for "the probe for
this machine" and never builds or searches for one itself: the commands make the
provider (from --probe, if given) and pass it to open_target().

A board's probe, in this order: --probe; else a Zig build for its arch already cached
(the smallest binary); else the host's own rtprobe when it is static and built for that
arch (a wheel ships one: a board of the host's arch needs no Zig), except on a slow line
(serial) where Zig is installed; else a Zig build made
now (about a minute the first time, shown through the board's progress).  What a board
gets is stripped (rtprobe/pushable.py).
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from rtbench.rtprobe.util.locate import locate_probe


class ProbeUnavailable(Exception):
    """No probe can be had for the arch asked for; str() says why and what to do."""


class BuildProgress(Protocol):
    """How a long build is shown (a board's live line: targets.progress.Progress)."""

    def ticking(self, step: str) -> AbstractContextManager[None]:
        """Show step with the seconds it takes, until the block ends."""
        ...


class ProbeProvider(Protocol):
    """What a target needs to get its rtprobe."""

    def host_probe(self) -> Path:
        """The rtprobe this machine runs (the local target's)."""
        ...

    def probe_for(self, arch: str, progress: BuildProgress | None = None, *,
                  simulation: bool = False, small: bool = False) -> Path:
        """A local path to a static rtprobe for a board of arch (x86_64, armhf, ...): the
        board build, or with simulation one that runs --simulate (board builds do not),
        a build shown through progress; with small (a slow line), the board build even
        where the host's own static probe would serve; ProbeUnavailable when there is
        none."""
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

    def probe_for(self, arch: str, progress: BuildProgress | None = None, *,
                  simulation: bool = False, small: bool = False) -> Path:
        """--probe (the target checks it is for arch), else a cached Zig build for arch
        (the board build, or the full one when simulation), else the host's static probe
        when built for arch (a full build) unless small asks for the board build and Zig
        can make it, else a Zig build made now; stripped copies where there is something
        to strip."""
        from rtbench.rtprobe.build import (
            ProbeBuildError,
            build_probe,
            cached_path,
            zig_available,
        )
        from rtbench.rtprobe.pushable import native_static_probe, stripped

        try:
            if self.given is not None:
                return stripped(self.given)
            with contextlib.suppress(ProbeBuildError):  # said below, if building is the way
                if cached_path(arch, simulation=simulation).is_file():
                    return build_probe(arch, simulation=simulation)
            # on a slow line the board build (a fifth of the size) is worth its build
            native = None if small and zig_available() else native_static_probe(arch)
            if native is not None:
                return stripped(native)
            if progress is None:
                return build_probe(arch, simulation=simulation)
            with progress.ticking(f"building rtprobe for {arch} with Zig (the first build "
                                  "of an arch takes about a minute; later runs reuse it)"):
                return build_probe(arch, simulation=simulation)
        except ProbeBuildError as exc:
            raise ProbeUnavailable(f"no probe for arch {arch}: {exc}") from exc
        except OSError as exc:
            raise ProbeUnavailable(f"probe for arch {arch}: cannot read or copy it "
                                   f"({exc})") from exc
