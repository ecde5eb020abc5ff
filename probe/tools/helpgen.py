#!/usr/bin/env python3
"""Turn rtprobe's help texts (src/help.txt) into the C header help.h.

Usage: helpgen.py [--packed] help.txt help.h

Each entry of help.txt becomes one macro, `#define NAME "text"`.  With --packed (the
board builds, RTPROBE_BOARD) the texts are byte-pair coded: the most frequent pair of
adjacent bytes over all texts becomes one byte from 0x80 up, then the next (a code may
pair with a code), up to 128 codes, as long as a code saves bytes.  HELP_PAIR_COUNT and
HELP_PAIRS (an initialiser) give the pairs; text_get() in lib/text.c unpacks a text.
Texts must be ASCII without NUL bytes, so a byte from 0x80 up can only be a code.
The header is written to a temporary name and renamed, so an interrupted build never
leaves a half header behind.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

FIRST_CODE = 0x80
MAX_CODES = 128
# TEXT_MAX of lib/text.h: room for the longest text once unpacked, NUL included.
TEXT_MAX = 2048


class HelpTextError(Exception):
    """help.txt holds something this generator cannot take; the message is one line."""


def parse(source: str, name: str = "help.txt") -> list[tuple[str, bytes]]:
    """The (macro name, text) entries of help.txt, in file order."""
    entries: list[tuple[str, list[str]]] = []
    for number, line in enumerate(source.split("\n")[:-1], 1):
        if line.startswith("@"):
            key = line[1:].strip()
            if not key.isidentifier() or not key.isupper():
                raise HelpTextError(f"{name}:{number}: '{line}' does not name a macro "
                                    "(write '@ NAME', capitals)")
            if any(key == seen for seen, _ in entries):
                raise HelpTextError(f"{name}:{number}: {key} is defined twice")
            entries.append((key, []))
        elif entries:
            entries[-1][1].append(line)
        elif line and not line.startswith("#"):
            raise HelpTextError(f"{name}:{number}: text before the first '@ NAME' line")
    if not source.endswith("\n"):
        raise HelpTextError(f"{name}: the last line has no newline")
    out = []
    for key, lines in entries:
        text = "\n".join(lines)
        if not text.isascii() or "\0" in text or any(c < " " and c != "\n" for c in text):
            raise HelpTextError(f"{name}: {key} holds a byte that is not printable ASCII")
        if len(text) >= TEXT_MAX:
            raise HelpTextError(f"{name}: {key} is {len(text)} bytes; text.h's TEXT_MAX "
                                f"is {TEXT_MAX}")
        out.append((key, text.encode("ascii")))
    return out


def choose_pairs(texts: list[bytes]) -> tuple[list[tuple[int, int]], list[bytes]]:
    """The byte pairs to code (in code order) and every text in codes."""
    sequences = [list(text) for text in texts]
    pairs: list[tuple[int, int]] = []
    while len(pairs) < MAX_CODES:
        counts: Counter[tuple[int, int]] = Counter()
        for seq in sequences:
            counts.update(zip(seq, seq[1:], strict=False))
        if not counts:
            break
        pair, count = max(counts.items(), key=lambda item: (item[1], item[0]))
        if count < 3:      # a code costs its two table bytes
            break
        code = FIRST_CODE + len(pairs)
        pairs.append(pair)
        sequences = [merge(seq, pair, code) for seq in sequences]
    return pairs, [bytes(seq) for seq in sequences]


def merge(seq: list[int], pair: tuple[int, int], code: int) -> list[int]:
    """seq with each non-overlapping occurrence of pair (left to right) replaced by code."""
    out: list[int] = []
    i = 0
    while i < len(seq):
        if i + 1 < len(seq) and (seq[i], seq[i + 1]) == pair:
            out.append(code)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def unpack(data: bytes, pairs: list[tuple[int, int]]) -> bytes:
    """The plain text of packed data (what lib/text.c's text_get() does)."""
    out = bytearray()
    stack = list(reversed(data))
    while stack:
        byte = stack.pop()
        if byte >= FIRST_CODE and byte - FIRST_CODE < len(pairs):
            first, second = pairs[byte - FIRST_CODE]
            stack += [second, first]
        else:
            out.append(byte)
    return bytes(out)


def c_literal(data: bytes) -> str:
    """One C string literal holding data (octal escapes, so no digit can run on)."""
    parts = []
    for byte in data:
        char = chr(byte)
        if byte == 0x0A:
            parts.append("\\n")
        elif char in '"\\?':
            parts.append("\\" + char)
        elif 0x20 <= byte < 0x7F:
            parts.append(char)
        else:
            parts.append(f"\\{byte:03o}")
    return '"' + "".join(parts) + '"'


def header(entries: list[tuple[str, bytes]], packed: bool) -> str:
    """The text of help.h."""
    texts = [text for _, text in entries]
    pairs: list[tuple[int, int]] = []
    if packed:
        pairs, texts = choose_pairs(texts)
    rows = ", ".join(f"{{ 0x{a:02x}, 0x{b:02x} }}" for a, b in pairs) or "{ 0, 0 }"
    lines = ["/* Generated by probe/tools/helpgen.py from src/help.txt: do not edit. */",
             "#ifndef RTP_HELP_H", "#define RTP_HELP_H", "",
             f"/* {'byte-pair packed' if packed else 'plain'}: "
             f"{len(pairs)} pairs; text_get() unpacks */",
             f"#define HELP_PAIR_COUNT {len(pairs)}",
             f"#define HELP_PAIRS {{ {rows} }}", ""]
    lines += [f"#define {key} {c_literal(text)}" for (key, _), text in zip(entries, texts,
                                                                          strict=True)]
    lines += ["", "#endif /* RTP_HELP_H */", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Read help.txt, write help.h; 2 on bad usage, 1 on a bad help.txt."""
    packed = argv[:1] == ["--packed"]
    args = argv[1:] if packed else argv
    if len(args) != 2:
        print("usage: helpgen.py [--packed] help.txt help.h", file=sys.stderr)
        return 2
    source, target = args
    try:
        with open(source, encoding="ascii") as f:
            entries = parse(f.read(), source)
        temp = f"{target}.{os.getpid()}.tmp"
        with open(temp, "w", encoding="ascii") as f:
            f.write(header(entries, packed))
        os.replace(temp, target)
    except (HelpTextError, OSError, UnicodeDecodeError) as exc:
        print(f"helpgen.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
