"""Drop the contents of an ELF file's unloaded sections (what `strip` leaves behind).

Zig's linker strips symbols and debug info, but keeps sections no program header loads
that it does not count as debug info: on MIPS the `.pdr` procedure descriptors, about
a seventh of the probe.  Nothing reads them at run time.  trim_unloaded() keeps every
byte up to the end of what the program headers cover, the section-name table and the
section headers, and turns every unloaded section after that into an empty one.
"""

from __future__ import annotations

import struct
from pathlib import Path

SHT_NULL = 0
SHT_NOBITS = 8
SHF_ALLOC = 0x2


class ElfLayoutError(Exception):
    """The file is not an ELF layout trim_unloaded() can rewrite safely."""


def _formats(head: bytes) -> tuple[str, str, str]:
    """(byte order, ELF header tail, section header) struct formats for head's class."""
    if head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
        raise ElfLayoutError("not an ELF file")
    order = "<" if head[5] == 1 else ">"
    if head[4] == 1:
        return order, "HHIIIIIHHHHHH", "IIIIIIIIII"
    return order, "HHIQQQIHHHHHH", "IIQQQQIIQQ"


def trim_unloaded(path: Path) -> int:
    """Empty path's unloaded sections in place (temp file + rename); bytes saved."""
    data = path.read_bytes()
    order, ehdr_fmt, shdr_fmt = _formats(data[:16])
    ehdr = list(struct.unpack_from(order + ehdr_fmt, data, 16))
    phoff, shoff = ehdr[4], ehdr[5]
    phentsize, phnum, shentsize, shnum, shstrndx = ehdr[8], ehdr[9], ehdr[10], ehdr[11], ehdr[12]
    if shoff == 0 or shnum == 0 or shstrndx >= shnum:
        raise ElfLayoutError("no section headers to rewrite")
    is64 = data[4] == 2
    loaded_end = phoff + phentsize * phnum
    for i in range(phnum):
        at = phoff + i * phentsize
        if is64:
            p_offset, p_filesz = struct.unpack_from(order + "Q16xQ", data, at + 8)
        else:
            p_offset, _, _, p_filesz = struct.unpack_from(order + "IIII", data, at + 4)
        loaded_end = max(loaded_end, p_offset + p_filesz)
    headers = [list(struct.unpack_from(order + shdr_fmt, data, shoff + i * shentsize))
               for i in range(shnum)]
    # Field positions in a section header: type 1, flags 2, offset 4, size 5.
    out = bytearray(data[:loaded_end])
    for index, sh in enumerate(headers):
        if sh[1] in (SHT_NULL, SHT_NOBITS) or sh[2] & SHF_ALLOC:
            continue
        if sh[4] < loaded_end:
            continue    # within what is kept (e.g. under RISC-V's attributes header)
        if index != shstrndx:
            sh[4], sh[5] = loaded_end, 0
    names = headers[shstrndx]
    if names[4] >= loaded_end:
        start = names[4]
        names[4] = len(out)
        out += data[start:start + names[5]]
    while len(out) % 8:
        out.append(0)
    ehdr[5] = len(out)
    struct.pack_into(order + ehdr_fmt, out, 16, *ehdr)
    for sh in headers:
        out += struct.pack(order + shdr_fmt, *sh)
    saved = len(data) - len(out)
    if saved <= 0:
        return 0
    temp = path.with_name(f".{path.name}.trim")
    temp.write_bytes(bytes(out))
    temp.chmod(path.stat().st_mode & 0o7777)
    temp.replace(path)
    return saved
