"""Make a child die with its parent: prctl(PR_SET_PDEATHSIG) from a preexec_fn."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def _libc() -> ctypes.CDLL:
    """Load the C library (done in the parent, before fork)."""
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def pdeathsig_preexec(signum: int, cpus: set[int] | None = None) -> Callable[[], None]:
    """Return a preexec_fn that sets PR_SET_PDEATHSIG to signum (and pins to cpus).

    The kernel sends signum to the child when the thread that forked it exits.  If the
    parent already died between fork and prctl, the child exits at once.
    """
    libc = _libc()
    parent = os.getpid()

    def preexec() -> None:
        if libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
            os._exit(127)
        if os.getppid() != parent:
            os._exit(127)
        if cpus:
            os.sched_setaffinity(0, cpus)

    return preexec
