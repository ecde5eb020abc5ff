"""Check that a probe binary is built for the arch it is about to run on."""

from __future__ import annotations

from pathlib import Path


class ProbeArchError(Exception):
    """A probe binary is not for the arch it is to run on, or unreadable; one line."""


# arch -> (EI_CLASS, EI_DATA, e_machine): 1 = 32-bit / little-endian, 2 = 64-bit / big.
ELF_IDENTITY: dict[str, tuple[int, int, int]] = {
    "x86_64": (2, 1, 62),
    "i386": (1, 1, 3),
    "aarch64": (2, 1, 183),
    "armhf": (1, 1, 40),
    "armel": (1, 1, 40),
    "mips": (1, 2, 8),
    "mipsel": (1, 1, 8),
    "powerpc": (1, 2, 20),
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
