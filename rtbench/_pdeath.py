"""Make a forked child die with its parent: prctl(PR_SET_PDEATHSIG).

Shared by the targets (rtprobe and load children) and the report's figure workers, so it
lives outside both layers.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
# The symbols of this process, the C library's prctl among them (no library search).
_LIBC = ctypes.CDLL(None, use_errno=True)


def die_with_parent(signum: int, parent: int) -> None:
    """In a forked child: get signum when the thread that forked it exits.

    If prctl fails, or parent already died between fork and prctl, exit at once.
    """
    if _LIBC.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0 or os.getppid() != parent:
        os._exit(127)


def pdeathsig_preexec(signum: int, cpus: set[int] | None = None) -> Callable[[], None]:
    """Return a subprocess preexec_fn: die_with_parent(signum), then pin to cpus."""
    parent = os.getpid()

    def preexec() -> None:
        die_with_parent(signum, parent)
        if cpus:
            os.sched_setaffinity(0, cpus)

    return preexec
