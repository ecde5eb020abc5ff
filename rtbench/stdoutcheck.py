"""Writes to stdout that are checked to the last byte, and the check when a command ends.

A command whose stdout is a file on a full disk, a closed pipe or /dev/full must not exit
0 with half its output: every byte written is accounted for, the buffers are flushed and
the descriptor's deferred errors (NFS reports some only at close) are collected before the
exit code is chosen.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys


class StdoutFailed(OSError):
    """stdout took fewer bytes than it was given, or refused them."""


def write_stdout_bytes(data: bytes) -> None:
    """Write data to stdout whole and flush it; StdoutFailed on a short or failed write."""
    out = sys.stdout.buffer
    view = memoryview(data)
    try:
        sys.stdout.flush()
        while view:
            written = out.write(view)
            if written is None or written <= 0:
                raise StdoutFailed(f"stdout took {len(data) - len(view)} of {len(data)} "
                                   "bytes")
            view = view[written:]
        out.flush()
    except StdoutFailed:
        raise
    except OSError as exc:
        raise StdoutFailed(exc.errno, exc.strerror or str(exc)) from None


def stdout_error() -> str | None:
    """Flush stdout and collect its deferred errors; the reason it failed, or None."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as exc:
        return _reason(exc)
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return None  # not a real file (a test's capture): flushed is all there is
    try:
        # closing a duplicate reports what the file system deferred to close (NFS)
        os.close(os.dup(fd))
    except OSError as exc:
        return _reason(exc)
    return None


def _reason(exc: BaseException) -> str:
    """An OSError's text without its errno prefix."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's exit flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


# errors of writing: with no file named, they are stdout's (every file rtbench writes is
# named in its errors)
_WRITE_ERRNOS = {errno.ENOSPC, errno.EPIPE, errno.EFBIG, errno.EDQUOT}


def stdout_failed(exc: OSError) -> bool:
    """Whether exc came from writing stdout (a failed write leaves nothing to flush, so
    the errno decides too); stdout is then pointed at /dev/null for the exit."""
    if isinstance(exc, StdoutFailed) or stdout_error() is not None \
            or exc.errno in _WRITE_ERRNOS:
        silence_stdout()
        return True
    return False
