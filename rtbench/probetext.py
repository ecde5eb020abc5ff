"""Pack rtprobe's texts for the board builds (byte-pair codes; see probe/src/lib/text.h).

Two kinds of literal are packed: the help texts of the option, test and load descriptors
(`.help = "..."`, `.intro = ...`, `.examples = ...`, read through text_get()), and the
format strings given to rtprobe's own printf (`fmt_fprintf(f, "...", ...)` and its kin,
unpacked by fmt.c as it writes).  A board build compiles a copy of the probe sources in
which each such literal is replaced by its packed form: the most frequent pair of adjacent
bytes over all texts becomes one byte from 0x80 up, then the next pair (codes may pair with
codes), up to 128 codes.  A format string's conversions (`%d`, `%-10s`, `%%`) are never part
of a pair, so the compiler checks them as before and fmt.c finds them as before.  The chosen
pairs go into the copy's `text_pairs.h`.  Every string literal of the sources must be ASCII,
so a byte from 0x80 up can only be a code.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

# The descriptor fields whose literals are packed (what rtprobe reads through text_get()).
_FIELD = re.compile(r'(\.(?:help|intro|examples)\s*=\s*)((?:"(?:[^"\\\n]|\\.)*"\s*)+)')
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_LITERALS_ONLY = re.compile(r'\s*(?:"(?:[^"\\\n]|\\.)*"\s*)+')
# rtprobe's printf family and the index of each one's format argument.
_FORMAT_CALL = re.compile(r'\bfmt_(printf|fprintf|vfprintf|snprintf|vsnprintf)\(')
_FORMAT_INDEX = {"printf": 0, "fprintf": 1, "vfprintf": 1, "snprintf": 2, "vsnprintf": 2}
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}
FIRST_CODE = 0x80
MAX_CODES = 128
# TEXT_MAX of text.h: room for the longest text once unpacked, NUL included.
TEXT_MAX = 2048


class TextPackError(Exception):
    """The sources hold a help text this packer cannot take; the message is one line."""


@dataclass(frozen=True)
class PackReport:
    """What packing did: how many texts, their bytes before and after, codes used."""

    texts: int
    plain_bytes: int
    packed_bytes: int
    codes: int


def parse_literals(source: str) -> bytes:
    """The bytes of adjacent C string literals (the escapes rtprobe's texts use)."""
    out = []
    for body in _LITERAL.findall(source):
        i = 0
        while i < len(body):
            char = body[i]
            if char == "\\":
                escaped = body[i + 1]
                if escaped not in _ESCAPES:
                    raise TextPackError(f"escape \\{escaped} in a help text; use plain ASCII")
                out.append(_ESCAPES[escaped])
                i += 2
            else:
                out.append(char)
                i += 1
    text = "".join(out)
    if not text.isascii() or "\0" in text:
        raise TextPackError(f"help text {text[:40]!r}... is not plain ASCII")
    return text.encode("ascii")


def c_literal(data: bytes) -> str:
    """One C string literal holding data (octal escapes, so no digit can run on)."""
    parts = []
    for byte in data:
        char = chr(byte)
        if byte == 0x0A:
            parts.append("\\n")
        elif char in '"\\':
            parts.append("\\" + char)
        elif 0x20 <= byte < 0x7F:
            parts.append(char)
        else:
            parts.append(f"\\{byte:03o}")
    return '"' + "".join(parts) + '"'


def conversion_end(text: bytes, at: int) -> int:
    """Where the conversion beginning with the '%' at text[at] ends, read as fmt.c's
    parse_spec reads it: flags, width, precision, length, one conversion character."""
    i = at + 1
    while i < len(text) and text[i] in b"-0+ #":
        i += 1
    for allowed_star in (True, False):
        if allowed_star and i < len(text) and text[i] == ord("*"):
            i += 1
        while i < len(text) and text[i] in b"0123456789":
            i += 1
        if not allowed_star or i >= len(text) or text[i] != ord("."):
            break
        i += 1
        if i < len(text) and text[i] == ord("*"):
            i += 1
        while i < len(text) and text[i] in b"0123456789":
            i += 1
        break
    while i < len(text) and text[i] in b"hljzt":
        i += 1
    return min(i + 1, len(text))


def tokens_of(text: bytes, is_format: bool) -> list[int]:
    """text as tokens for pairing: its bytes, a format's conversions as barriers (a byte b
    as -(b + 1), never part of a pair)."""
    if not is_format:
        return list(text)
    tokens: list[int] = []
    i = 0
    while i < len(text):
        if text[i] == ord("%"):
            end = conversion_end(text, i)
            tokens += [-(byte + 1) for byte in text[i:end]]
            i = end
        else:
            tokens.append(text[i])
            i += 1
    return tokens


def bytes_of(tokens: list[int]) -> bytes:
    """The bytes of packed tokens (barriers as the bytes they hold)."""
    return bytes(t if t >= 0 else -t - 1 for t in tokens)


def choose_pairs(sequences: list[list[int]], max_codes: int = MAX_CODES
                 ) -> tuple[list[tuple[int, int]], list[list[int]]]:
    """The byte pairs to code (in code order) and every token sequence in codes."""
    pairs: list[tuple[int, int]] = []
    while len(pairs) < max_codes:
        counts: Counter[tuple[int, int]] = Counter()
        for seq in sequences:
            counts.update(pair for pair in zip(seq, seq[1:], strict=False)
                          if pair[0] >= 0 and pair[1] >= 0)
        if not counts:
            break
        pair, count = max(counts.items(), key=lambda item: (item[1], item[0]))
        if count < 3:      # a code costs its two table bytes
            break
        code = FIRST_CODE + len(pairs)
        pairs.append(pair)
        sequences = [_merge(seq, pair, code) for seq in sequences]
    return pairs, sequences


def _merge(seq: list[int], pair: tuple[int, int], code: int) -> list[int]:
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
    """The plain text of packed data (what rtprobe's text_get() does)."""
    out = bytearray()

    def expand(byte: int) -> None:
        """Append what byte stands for."""
        if byte < FIRST_CODE or byte - FIRST_CODE >= len(pairs):
            out.append(byte)
            return
        first, second = pairs[byte - FIRST_CODE]
        expand(first)
        expand(second)

    for byte in data:
        expand(byte)
    return bytes(out)


def pairs_header(pairs: list[tuple[int, int]]) -> str:
    """The text_pairs.h of a packed build."""
    rows = ",\n".join(f"\t{{ 0x{a:02x}, 0x{b:02x} }}" for a, b in pairs) or "\t{ 0, 0 }"
    return ("/* Generated by rtbench/probetext.py: the byte pairs of the packed help texts. */\n"
            f"#define TEXT_PAIRS {len(pairs)}\n"
            f"static const unsigned char text_pairs[{max(len(pairs), 1)}][2] = {{\n"
            f"{rows}\n}};\n")


def code_only(source: str) -> str:
    """source with its comments blanked out (same length), string and char literals kept."""
    out = list(source)
    i = 0
    while i < len(source):
        if source[i] in "\"'":
            i = _literal_end(source, i)
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = len(source) if end < 0 else end + 2
            out[i:end] = [c if c == "\n" else " " for c in source[i:end]]
            i = end
        elif source.startswith("//", i):
            end = source.find("\n", i)
            end = len(source) if end < 0 else end
            out[i:end] = [" "] * (end - i)
            i = end
        else:
            i += 1
    return "".join(out)


def _literal_end(code: str, at: int) -> int:
    """The index just past the string or char literal beginning at code[at]."""
    quote, i = code[at], at + 1
    while i < len(code) and code[i] != quote:
        i += 2 if code[i] == "\\" else 1
    return i + 1


def _arguments(code: str, at: int) -> list[tuple[int, int]]:
    """The spans of a call's arguments; at is just past its '('."""
    spans: list[tuple[int, int]] = []
    depth, start, i = 0, at, at
    while i < len(code):
        char = code[i]
        if char in "\"'":
            i = _literal_end(code, i)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                spans.append((start, i))
                return spans
            depth -= 1
        elif char == "," and depth == 0:
            spans.append((start, i))
            start = i + 1
        i += 1
    raise TextPackError(f"a call at offset {at} never closes")


def _stripped(code: str, start: int, end: int) -> tuple[int, int]:
    """The span without the blanks at either end."""
    while start < end and code[start].isspace():
        start += 1
    while end > start and code[end - 1].isspace():
        end -= 1
    return start, end


def packable_spans(code: str) -> list[tuple[int, int, bool]]:
    """Where the packable literals of one C file are: (start, end, is_format), in order;
    code is the file with its comments blanked (code_only), so offsets are the file's."""
    spans = [(*_stripped(code, m.start(2), m.end(2)), False) for m in _FIELD.finditer(code)]
    for call in _FORMAT_CALL.finditer(code):
        args = _arguments(code, call.end())
        index = _FORMAT_INDEX[call.group(1)]
        if index < len(args) and _LITERALS_ONLY.fullmatch(code[args[index][0]:args[index][1]]):
            spans.append((*_stripped(code, *args[index]), True))
    spans.sort()
    for (_, end, _), (start, _, _) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise TextPackError(f"literals overlap at offset {start}")
    return spans


def _check_ascii(path: Path, code: str) -> None:
    """Refuse a source with a non-ASCII string literal (a byte from 0x80 up must be a code)."""
    for literal in _LITERAL.findall(code):
        if not literal.isascii():
            raise TextPackError(f"{path.name}: string literal {literal[:30]!r} is not ASCII")


def pack_tree(source: Path, dest: Path) -> PackReport:
    """Copy the probe sources (source: the probe/ directory) to dest with packed texts."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("build", "*.o"))
    found: list[tuple[Path, str, list[tuple[int, int, bool]]]] = []
    sequences: list[list[int]] = []
    plain_bytes = 0
    for path in sorted((dest / "src").rglob("*.[ch]")):
        text = path.read_text(encoding="utf-8")
        code = code_only(text)
        _check_ascii(path, code)
        spans = packable_spans(code) if path.suffix == ".c" else []
        found.append((path, text, spans))
        for start, end, is_format in spans:
            plain = parse_literals(text[start:end])
            if not is_format and len(plain) >= TEXT_MAX:
                raise TextPackError(f"{path.name}: a help text of {len(plain)} bytes; "
                                    f"text.h's TEXT_MAX is {TEXT_MAX}")
            plain_bytes += len(plain)
            sequences.append(tokens_of(plain, is_format))
    pairs, packed = choose_pairs(sequences)
    packed_iter = iter(bytes_of(seq) for seq in packed)
    for path, text, spans in found:
        if not spans:
            continue
        pieces, last = [], 0
        for start, end, _ in spans:
            pieces += [text[last:start], c_literal(next(packed_iter))]
            last = end
        pieces.append(text[last:])
        path.write_text("".join(pieces), encoding="utf-8")
    (dest / "src" / "lib" / "text_pairs.h").write_text(pairs_header(pairs), encoding="utf-8")
    return PackReport(texts=len(sequences), plain_bytes=plain_bytes,
                      packed_bytes=sum(map(len, packed)), codes=len(pairs))
