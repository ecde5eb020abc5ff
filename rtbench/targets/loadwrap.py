"""Keep one external command load running until rtbench stops it or dies.

Started by LocalTarget.spawn_load in a new session (its own process group) with
PR_SET_PDEATHSIG = SIGTERM.  It runs the command with /bin/sh -c in the same group and
restarts it whenever it ends (at most twice a second).  On SIGTERM, SIGINT or SIGHUP --
including the one the kernel sends when rtbench dies -- it SIGKILLs its whole group, so
nothing the command started survives.

Usage: python -m rtbench.targets.loadwrap PARENT_PID COMMAND
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from types import FrameType

MIN_PERIOD_S = 0.5


def kill_group(signum: int = 0, frame: FrameType | None = None) -> None:
    """SIGKILL this process group (the wrapper included)."""
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> int:
    """Run the command forever, restarting it when it ends."""
    if len(argv) != 2 or not argv[0].isdigit():
        print("usage: python -m rtbench.targets.loadwrap PARENT_PID COMMAND", file=sys.stderr)
        return 2
    parent, command = int(argv[0]), argv[1]
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, kill_group)
    if os.getppid() != parent:
        kill_group()
    while True:
        started = time.monotonic()
        subprocess.run(["/bin/sh", "-c", command], check=False)
        elapsed = time.monotonic() - started
        if elapsed < MIN_PERIOD_S:
            time.sleep(MIN_PERIOD_S - elapsed)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
