"""A text file's lines, one at a time, from its bytes: no copy of the whole text.

`rtbench import` holds the file's bytes; decoding them whole and splitting them into a
list of lines holds the file twice more, and a list of small str objects is many times
the file (issue 36).  These helpers check the bytes as text_of() does and yield the
lines that str.splitlines() of the decoded text gives, decoding a line at a time.
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Iterator

from rtbench.interop.base import ImportFormatError

# bytes decoded at a time to check that the whole file is UTF-8
_CHECK_CHUNK = 1 << 18


def check_text(data: bytes, filename: str, whole_lines: bool = True) -> None:
    """ImportFormatError as text_of() raises it: invalid UTF-8, NUL bytes, or (whole_lines)
    a file with text that does not end with a newline."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), _CHECK_CHUNK):
            decoder.decode(view[start:start + _CHECK_CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise ImportFormatError(f"{filename}: not a text file (invalid UTF-8)") from None
    if b"\x00" in data:
        raise ImportFormatError(f"{filename}: not a text file (NUL bytes)")
    if whole_lines and not data.endswith(b"\n") and data.decode("utf-8").strip():
        last = data.count(b"\n") + 1
        raise ImportFormatError(f"{filename}: line {last}: cut short (the file does not "
                                "end with a newline); import the complete output")


def lines(data: bytes) -> Iterator[str]:
    """The lines of data (valid UTF-8) exactly as data.decode().splitlines() gives them."""
    for raw in io.BytesIO(data):
        yield from raw.decode("utf-8").splitlines()


def located_lines(data: bytes, offset: int = 0) -> Iterator[tuple[int, int, str]]:
    """The lines of data from byte offset on (the start of a line) as lines() gives them,
    each with the offset of the newline-ended piece of bytes it is in and its place
    among that piece's lines (a lone \r or another break splits one piece in several)."""
    stream = io.BytesIO(data)
    stream.seek(offset)
    for raw in stream:
        for place, line in enumerate(raw.decode("utf-8").splitlines()):
            yield offset, place, line
        offset += len(raw)


def line_count(data: bytes) -> int:
    """len(data.decode().splitlines()), without holding the lines."""
    return sum(1 for _ in lines(data))


def text_lines(data: bytes, filename: str) -> Iterator[str]:
    """check_text() (whole lines), then the lines: text_of(...).splitlines() streamed."""
    check_text(data, filename)
    return lines(data)


def split_lines(data: bytes, clean: re.Pattern[str] | None = None) -> Iterator[str]:
    """The pieces of re.split(r"\\r\\n|\\r|\\n", clean.sub("", text)) of the decoded data,
    one at a time (clean removes sequences that hold no line break, e.g. ANSI codes)."""
    for raw in io.BytesIO(data):
        piece = raw.decode("utf-8")
        if clean is not None:
            piece = clean.sub("", piece)
        ended = piece.endswith("\n")
        if ended:
            piece = piece[:-1]
            if piece.endswith("\r"):
                piece = piece[:-1]  # "\r\n" is one break
        parts = re.split(r"\r\n|\r", piece)
        yield from parts
        if not ended:
            return
    yield ""  # the text after the last break (none when the data ends with one)
