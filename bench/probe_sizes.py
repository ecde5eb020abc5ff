#!/usr/bin/env python3
"""Size of every arch's board probe (`rtbench probe build`), split into code and data.

Builds (or takes from the cache) the static stripped rtprobe of each arch and prints, per
arch, the file size against rtbench's 200 KiB bound and the sizes of its loaded sections
(.text code, .rodata constants and strings, the rest).  Run from a source checkout with the
`cross` extra installed:

    .venv/bin/python bench/probe_sizes.py [--force] [--markdown]
"""

from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path

from rtbench.rtprobe.build import ARCHES, build_probe


def section_sizes(path: Path) -> dict[str, int]:
    """The sizes of an ELF file's allocated sections that take file space, by name."""
    data = path.read_bytes()
    is_64 = data[4] == 2
    order = "<" if data[5] == 1 else ">"
    if is_64:
        shoff, = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x3A)
        layout = order + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x2E)
        layout = order + "IIIIIIIIII"
    headers = [struct.unpack_from(layout, data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    sizes: dict[str, int] = {}
    for name_off, kind, flags, _addr, _off, size, *_ in headers:
        if not flags & 2 or kind == 8:      # not loaded, or NOBITS (.bss)
            continue
        end = data.index(b"\0", names_at + name_off)
        sizes[data[names_at + name_off:end].decode()] = size
    return sizes


def main() -> int:
    """Build every arch's probe and print its sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild, do not use the cache")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args()
    rows = []
    for arch in ARCHES:
        path = build_probe(arch, force=args.force)
        sections = section_sizes(path)
        text = sections.pop(".text", 0)
        rodata = sections.pop(".rodata", 0)
        rows.append((arch, path.stat().st_size, ARCHES[arch].size_limit, text, rodata,
                     sum(sections.values())))
    if args.markdown:
        print("| arch | KiB | bound | .text KiB | .rodata KiB | other KiB |")
        print("|---|---:|---|---:|---:|---:|")
    for arch, size, limit, text, rodata, other in rows:
        verdict = f"{'ok' if size <= limit else 'over'} ({limit // 1024})"
        cells = [arch, f"{size / 1024:.1f}", verdict, f"{text / 1024:.1f}",
                 f"{rodata / 1024:.1f}", f"{other / 1024:.1f}"]
        print(("| " + " | ".join(cells) + " |") if args.markdown else
              f"{cells[0]:8} {cells[1]:>6} KiB  {cells[2]:10}  text {cells[3]:>6}  "
              f"rodata {cells[4]:>5}  other {cells[5]:>5}")
    return 0 if all(size <= limit for _, size, limit, *_ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
