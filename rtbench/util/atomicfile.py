"""Write a file whole or not at all: a temporary name in the same directory, fsync, rename.

Every file rtbench writes for a user (reports, figures, exports, recovery files) goes through
`write_atomic`, so a crash or a full disk never leaves a half-written file and an existing
file is replaced only by a complete one.  A path that names a device or a FIFO (`-o
/dev/null`, a named pipe) is written in place: renaming a file onto it would replace the
device itself.  New files get 0666 less the umask, as open() would give them.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

Writer = Callable[[BinaryIO], None]


def current_umask() -> int:
    """This process's umask (from /proc, else by setting and restoring it)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _is_special(path: Path) -> bool:
    """Whether path exists and is neither a regular file nor a directory."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def write_atomic(path: Path | str, data: bytes | Writer) -> None:
    """Write data (bytes, or a function writing to a binary file) to path; OSError on failure
    with path left as it was."""
    path = Path(path)
    if _is_special(path):
        with open(path, "wb") as out:
            _emit(out, data)
        return
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            _emit(out, data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _emit(out: BinaryIO, data: bytes | Writer) -> None:
    """Write data (bytes or a writer function) to out."""
    if isinstance(data, bytes):
        out.write(data)
    else:
        data(out)
