"""Read a whole file with a bound: a file larger than the limit is refused, never loaded.

A path such as /dev/zero or a multi-gigabyte file given where a suite, inventory or
import belongs must not take the host's memory; every file rtbench reads whole goes
through `read_limited` (secrets, smaller still, through rtbench.core.secretfile).
"""

from __future__ import annotations

from pathlib import Path

# the bounds of what rtbench reads whole, by kind of file
SUITE_MAX_BYTES = 16 << 20
INVENTORY_MAX_BYTES = 16 << 20
# an import holds about five times a file's size while it parses it (cyclictest -v,
# 16 MiB: 143 MB of peak memory), and keeps the runs of every file until all are checked
IMPORT_MAX_BYTES = 64 << 20
IMPORT_TOTAL_MAX_BYTES = 256 << 20


class InputTooLarge(ValueError):
    """A file over its bound; the message names the file and the bound."""


def too_large_message(label: str, limit_bytes: int) -> str:
    """The one line saying label is over limit_bytes."""
    size = f"{limit_bytes >> 20} MiB" if limit_bytes >= 1 << 20 else f"{limit_bytes} bytes"
    return f"{label}: larger than {size}, the most rtbench reads; give the right file"


def read_limited(path: Path | str, limit_bytes: int) -> bytes:
    """The bytes of path; InputTooLarge when it holds more than limit_bytes (OSError as
    open and read raise it)."""
    with open(path, "rb") as handle:
        data = handle.read(limit_bytes + 1)
    if len(data) > limit_bytes:
        raise InputTooLarge(too_large_message(str(path), limit_bytes))
    return data


def read_text_limited(path: Path | str, limit_bytes: int) -> str:
    """The UTF-8 text of path, bounded as read_limited (UnicodeDecodeError on bad bytes)."""
    return read_limited(path, limit_bytes).decode("utf-8")
