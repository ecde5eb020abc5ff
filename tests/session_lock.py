"""A file lock shared by every pytest worker of this checkout (pytest-xdist runs several).

Whatever two workers must not do at the same time (run make in probe/, build a Zig probe
into one cache directory) takes the lock of that name; the first worker builds, the
others wait and then find the result made.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


# Locks of what the machine has once, whichever checkout tests: tracefs is the kernel's
# (a test clearing the events another clone's rtprobe enabled failed both), and real
# measurements starve each other's samples on a few CPUs.
MACHINE_WIDE = ("tracefs", "realtime")


def lock_path(name: str) -> Path:
    """The lock file for name: machine-wide for MACHINE_WIDE, else private to this
    checkout (other checkouts build and test in parallel)."""
    checkout = hashlib.sha256(str(REPO).encode()).hexdigest()[:12]
    folder = Path(tempfile.gettempdir()) / "rtbench-test-locks"
    folder.mkdir(mode=0o777, exist_ok=True)
    if name in MACHINE_WIDE:
        return folder / f"machine-{name}.lock"
    return folder / f"{checkout}-{name}.lock"


# RTBENCH_LOCK_LOG=FILE: one JSON line per lock taken (name, test, seconds waited and
# held), to see how long the workers of a make test wait for each other
# (docs/testing.md, "Where the time goes").
LOCK_LOG = "RTBENCH_LOCK_LOG"


def log_lock(name: str, waited_s: float, held_s: float) -> None:
    """Append one line of the lock's wait and hold times to RTBENCH_LOCK_LOG, if set."""
    target = os.environ.get(LOCK_LOG)
    if not target:
        return
    line = json.dumps({"lock": name, "test": os.environ.get("PYTEST_CURRENT_TEST", ""),
                       "pid": os.getpid(), "waited_s": round(waited_s, 3),
                       "held_s": round(held_s, 3)})
    with open(target, "a", encoding="utf-8") as out:  # one short append per line
        out.write(line + "\n")


@contextmanager
def session_lock(name: str) -> Iterator[None]:
    """Hold the exclusive lock name (blocking) for the body of the with statement."""
    with lock_path(name).open("a") as handle:
        asked = time.monotonic()
        fcntl.flock(handle, fcntl.LOCK_EX)
        got = time.monotonic()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            log_lock(name, got - asked, time.monotonic() - got)
