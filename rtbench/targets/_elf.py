"""Check that a probe binary is built for the arch it is about to run on."""

from __future__ import annotations

from pathlib import Path

from rtbench.rtprobe.elf import ELF_IDENTITY, read_identity
from rtbench.targets.base import TargetError


def elf_identity(path: Path) -> tuple[int, int, int] | None:
    """(class, byte order, machine) of an ELF file, or None when it is not ELF."""
    try:
        return read_identity(path)
    except OSError as exc:
        raise TargetError(f"probe {path}: cannot read ({exc.strerror})") from exc


def check_probe_arch(path: Path, arch: str) -> None:
    """TargetError unless path is an ELF binary for arch (a foreign binary never runs)."""
    want = ELF_IDENTITY.get(arch)
    have = elf_identity(path)
    if want is None or have != want:
        raise TargetError(f"probe {path} is not built for the target's arch {arch}; "
                          f"run `rtbench probe build --arch {arch}` or drop --probe")

