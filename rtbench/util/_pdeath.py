"""Make a forked child die with its parent: prctl(PR_SET_PDEATHSIG).

Used by the report's figure workers.  (Target processes die with rtbench through the
lifeline of their /bin/sh launcher instead: see rtbench.targets.shell.)
"""

from __future__ import annotations

import ctypes
import os

PR_SET_PDEATHSIG = 1
# The symbols of this process, the C library's prctl among them (no library search).
_LIBC = ctypes.CDLL(None, use_errno=True)


def die_with_parent(signum: int, parent: int) -> None:
    """In a forked child: get signum when the thread that forked it exits.

    If prctl fails, or parent already died between fork and prctl, exit at once.
    """
    if _LIBC.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0 or os.getppid() != parent:
        os._exit(127)

