"""Check that a probe binary is built for the arch it is about to run on."""

from __future__ import annotations

from pathlib import Path
from typing import Literal


class ProbeArchError(Exception):
    """A probe binary is not for the arch it is to run on, or unreadable; one line."""


# arch -> (EI_CLASS, EI_DATA, e_machine): 1 = 32-bit / little-endian, 2 = 64-bit / big.
PT_INTERP = 3
ELF_IDENTITY: dict[str, tuple[int, int, int]] = {
    "x86_64": (2, 1, 62),
    "i386": (1, 1, 3),
    "aarch64": (2, 1, 183),
    "armhf": (1, 1, 40),
    "armel": (1, 1, 40),
    "mips": (1, 2, 8),
    "mipsel": (1, 1, 8),
    "powerpc": (1, 2, 20),
    "ppc64le": (2, 1, 21),
    "riscv64": (2, 1, 243),
}


def elf_identity(path: Path) -> tuple[int, int, int] | None:
    """(class, byte order, machine) of an ELF file, or None when it is not ELF."""
    try:
        with path.open("rb") as f:
            head = f.read(20)
    except OSError as exc:
        raise ProbeArchError(f"probe {path}: cannot read ({exc.strerror})") from exc
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
    return head[4], head[5], machine


def check_probe_arch(path: Path, arch: str) -> None:
    """ProbeArchError unless path is an ELF binary for arch (a foreign binary never runs)."""
    want = ELF_IDENTITY.get(arch)
    have = elf_identity(path)
    if want is None or have != want:
        raise ProbeArchError(f"probe {path} is not built for the target's arch {arch}; "
                             f"run `rtbench probe build --arch {arch}` or drop --probe")


def is_built_for(path: Path, arch: str) -> bool:
    """True when path is an ELF binary for arch (ProbeArchError when unreadable)."""
    want = ELF_IDENTITY.get(arch)
    return want is not None and elf_identity(path) == want


def is_static(path: Path) -> bool:
    """True when path is an ELF executable without a program interpreter (PT_INTERP):
    it runs on a board whatever C library the board has (OSError when unreadable)."""
    data = path.read_bytes()
    if len(data) < 52 or data[:4] != b"\x7fELF" or data[4] not in (1, 2):
        return False
    order: Literal["little", "big"] = "little" if data[5] == 1 else "big"
    if data[4] == 2:
        phoff = int.from_bytes(data[32:40], order)
        phentsize = int.from_bytes(data[54:56], order)
        phnum = int.from_bytes(data[56:58], order)
    else:
        phoff = int.from_bytes(data[28:32], order)
        phentsize = int.from_bytes(data[42:44], order)
        phnum = int.from_bytes(data[44:46], order)
    if phnum == 0 or phentsize < 4:
        return False
    for index in range(phnum):
        at = phoff + index * phentsize
        if at + 4 > len(data):
            return False
        if int.from_bytes(data[at:at + 4], order) == PT_INTERP:
            return False
    return True
