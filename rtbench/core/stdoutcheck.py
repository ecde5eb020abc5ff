"""Writes to stdout that are checked to the last byte, and the check when a command ends.

A command whose stdout is a file on a full disk, a closed pipe or /dev/full must not exit
0 with half its output: every byte written is accounted for, the buffers are flushed and
the descriptor's deferred errors (NFS reports some only at close) are collected before the
exit code is chosen.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import select
import sys
from typing import Any


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


def stdout_fault() -> BaseException | None:
    """Flush stdout and collect its deferred errors; the error, or None."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as exc:
        return exc
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return None  # not a real file (a test's capture): flushed is all there is
    try:
        # closing a duplicate reports what the file system deferred to close (NFS)
        os.close(os.dup(fd))
    except OSError as exc:
        return exc
    return None


def stdout_error() -> str | None:
    """Flush stdout and collect its deferred errors; the reason it failed, or None."""
    fault = stdout_fault()
    return None if fault is None else _reason(fault)


def reader_gone(exc: BaseException | None) -> bool:
    """Whether exc is a write to stdout, a pipe whose reader has closed it (`rtbench ls |
    head -1`): the reader took what it wanted.  A broken socket (a server that hung up)
    is not: stdout itself must report the closed pipe."""
    if not isinstance(exc, OSError) or exc.errno != errno.EPIPE:
        return False
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError, AttributeError):
        return False
    return any(flags & (select.POLLERR | select.POLLHUP) for _, flags in events)


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


class _ReaderTolerantRaw(io.RawIOBase):
    """stdout's descriptor, written whole; once the reader of the pipe has closed it,
    every later write goes to /dev/null (the command goes on and ends with its own exit
    code).  Any other failure (a full disk, /dev/full) is raised as before."""

    def __init__(self, fd: int) -> None:
        """Write to descriptor fd."""
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        """Always."""
        return True

    def fileno(self) -> int:
        """The descriptor (1)."""
        return self._fd

    def isatty(self) -> bool:
        """Whether stdout is a terminal."""
        return os.isatty(self._fd)

    def write(self, data: Any) -> int:
        """Write data; a closed pipe takes it whole into /dev/null."""
        try:
            return os.write(self._fd, data)
        except BrokenPipeError:
            silence_stdout()
            return len(memoryview(data))


def tolerate_closed_reader() -> None:
    """Make sys.stdout survive `rtbench ls | head -1`: a write to a pipe whose reader has
    gone is discarded instead of raised, as if the rest had been read."""
    old = sys.stdout
    try:
        fd = old.fileno()
    except (OSError, ValueError, AttributeError):
        return  # not a descriptor (a test's capture): nothing to make tolerant
    with contextlib.suppress(OSError, ValueError):
        old.flush()
    buffered = io.BufferedWriter(_ReaderTolerantRaw(fd))
    sys.stdout = io.TextIOWrapper(buffered, encoding=old.encoding, errors=old.errors,
                                  line_buffering=bool(old.line_buffering))
