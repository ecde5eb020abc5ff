"""The console every command prints to: its width, and text its encoding cannot show.

Width: report/width.py (`rtbench --width N`, else `COLUMNS`, else the terminal's, else
80 columns when the output is not a terminal).
Encoding: a terminal that cannot print µ gets `us` (and ASCII for the other symbols the
tables use: ≥, —, ·, ±, …), with rich's ASCII boxes; docs/output.md says so.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import IO

from rich.console import Console

from rtbench.report.width import chosen_width

# What a non-Unicode terminal gets instead of the symbols rtbench prints.
ASCII_FALLBACK = {"µ": "u", "≥": ">=", "≤": "<=", "—": "-", "–": "-", "·": "|",
                  "±": "+/-", "…": "...", "−": "-", "×": "x", "→": "->", "≈": "~",
                  "▲": "^"}


def can_print(text: str, encoding: str | None) -> bool:
    """Whether text survives the given encoding."""
    try:
        text.encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def ascii_text(text: str) -> str:
    """text with every symbol of ASCII_FALLBACK replaced (others become '?')."""
    for symbol, plain in ASCII_FALLBACK.items():
        text = text.replace(symbol, plain)
    return text.encode("ascii", "replace").decode("ascii")


class AsciiFile:
    """A text stream that writes its text through ascii_text (for non-Unicode terminals)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "ascii"

    def write(self, text: str) -> int:
        """Write text in ASCII."""
        return self.stream.write(ascii_text(text))

    def flush(self) -> None:
        """Flush the stream."""
        self.stream.flush()

    def isatty(self) -> bool:
        """Whether the stream is a terminal."""
        return self.stream.isatty()

    def fileno(self) -> int:
        """The stream's descriptor."""
        return self.stream.fileno()


class PipeConsole(Console):
    """A rich console that leaves a closed pipe to rtbench's error handling (rich's own
    ends the program with exit 1 as soon as the reader of `rtbench ls | head -1` is gone)."""

    def on_broken_pipe(self) -> None:
        """Raise the closed pipe as the OSError it was (commands/_common.py decides)."""
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def make_console(stream: IO[str] | None = None) -> Console:
    """A rich console laid out for chosen_width(), ASCII where µ cannot be printed."""
    # emoji=False: a name such as ":smile:" is text, not a picture
    probe = Console(file=stream, emoji=False)
    width = chosen_width(probe.is_terminal, probe.width)
    target = stream if stream is not None else sys.stdout
    if not can_print("µ≥", getattr(target, "encoding", None)):
        return PipeConsole(file=AsciiFile(target), width=width,  # type: ignore[arg-type]
                           emoji=False, force_terminal=probe.is_terminal)
    return PipeConsole(file=stream, width=width, emoji=False)

