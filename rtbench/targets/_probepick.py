"""Which probe binary a board gets, and the stripped copy of it that is pushed.

Order: --probe FILE; else a Zig build for the board's arch already in the cache (the
smallest binary); else the native probe this rtbench carries (the wheel's static build,
or a static one named by RTBENCH_PROBE or on PATH) when it is built for the board's arch
and static (it then runs whatever C library the board has); else a Zig build for the
board's arch, made now (about a minute the first time).  Whatever is pushed is stripped
first: symbols and debug sections never leave the host (a copy in the cache, the
original is left alone).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

from rtbench.elftrim import ElfLayoutError, trim_unloaded
from rtbench.targets._elf import ELF_IDENTITY, elf_identity, is_static
from rtbench.targets.base import TargetError
from rtbench.targets.progress import Progress


def native_static_probe(arch: str) -> Path | None:
    """The local rtprobe when it is a static binary for arch, else None."""
    from rtbench.probe import ProbeNotFound, locate_probe

    try:
        local = locate_probe()
    except ProbeNotFound:
        return None
    want = ELF_IDENTITY.get(arch)
    if want is None or elf_identity(local) != want or not is_static(local):
        return None
    return local


def pick_probe(arch: str, option: Path | None, progress: Progress) -> Path:
    """The host file of the probe to push to a board of arch (stripped)."""
    from rtbench.probebuild import ProbeBuildError, build_probe, cached_path

    if option is not None:
        return stripped(option)
    with contextlib.suppress(ProbeBuildError):  # said below, when building is the way
        if cached_path(arch).is_file():
            return build_probe(arch)
    native = native_static_probe(arch)
    if native is not None:
        return stripped(native)
    try:
        with progress.ticking(f"building rtprobe for {arch} with Zig (the first build of "
                              "an arch takes about a minute; later runs reuse it)"):
            return build_probe(arch)
    except ProbeBuildError as exc:
        raise TargetError(f"no probe for arch {arch}: {exc}") from exc


def stripped(path: Path) -> Path:
    """A copy of path without what no loaded segment holds (symbols, debug info), cached
    by content; path itself when it has nothing to drop or is no ELF file."""
    from rtbench.probebuild import cache_root

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TargetError(f"probe {path}: cannot read ({exc.strerror})") from exc
    digest = hashlib.sha256(data).hexdigest()[:16]
    copy = cache_root() / "stripped" / digest / "rtprobe"
    if copy.is_file():
        return copy
    copy.parent.mkdir(parents=True, exist_ok=True)
    temp = copy.with_name(f".rtprobe.{os.getpid()}")
    temp.write_bytes(data)
    temp.chmod(0o755)
    try:
        trim_unloaded(temp)
    except ElfLayoutError:
        temp.unlink()
        return path
    temp.replace(copy)
    return copy
