"""Read a secret (an upload token, a webhook secret) from a file, the one way rtbench does.

A secret file is a small regular file holding the secret on one line.  Whatever else the
path names is refused before a byte is read, and nothing can make the read wait or grow:
the file is opened non-blocking (a FIFO without a writer does not hang the open), checked
with fstat to be a regular file (not a FIFO, a device such as /dev/zero, a directory or a
socket), and read up to SECRET_MAX_BYTES.  Messages describe the file, never its content.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# the most a secret file may hold (tokens are 40-odd characters, HMAC keys a few dozen)
SECRET_MAX_BYTES = 4096

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISSOCK, "a socket"))


class SecretFileError(ValueError):
    """A secret file that cannot be used; the message is one line naming the file."""


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _refuse_special(label: str, mode: int) -> None:
    """SecretFileError unless mode is a regular file's."""
    if not stat.S_ISREG(mode):
        raise SecretFileError(f"{label} is {_kind(mode)}, not a regular file: put the "
                              "secret in a file of its own")


def read_secret_file(path: Path | str, label: str, *, private: bool = False) -> bytes:
    """The secret in path with surrounding whitespace dropped: one line, 1 to
    SECRET_MAX_BYTES bytes.  label names it in messages ("the token file x");
    private: refuse a file that other users may read.  SecretFileError otherwise."""
    try:
        # stat first: opening a socket fails with a less helpful errno than its kind
        _refuse_special(label, os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        raise SecretFileError(f"{label}: cannot read it ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode  # what was opened, whatever the path names now
        _refuse_special(label, mode)
        if private and mode & 0o077:
            raise SecretFileError(f"{label} is open to other users (mode "
                                  f"{stat.S_IMODE(mode):04o}): chmod 600 {path}")
        data = _read_at_most(fd, SECRET_MAX_BYTES + 1)
    except OSError as exc:
        raise SecretFileError(f"{label}: cannot read it ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > SECRET_MAX_BYTES:
        raise SecretFileError(f"{label} holds more than {SECRET_MAX_BYTES} bytes: a secret "
                              "file holds the secret alone, on one line")
    secret = data.strip()
    if not secret:
        raise SecretFileError(f"{label} is empty: put the secret in it, on one line")
    if any(byte < 0x20 or byte == 0x7F for byte in secret):
        raise SecretFileError(f"{label} holds more than one line (or control characters): "
                              "put the secret alone on one line")
    return secret


def _read_at_most(fd: int, limit: int) -> bytes:
    """Up to limit bytes from fd, to its end."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
