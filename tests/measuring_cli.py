"""`python -m tests.measuring_cli ARGS...`: `rtbench ARGS...` as `python -m rtbench` runs
it, holding the machine-wide `realtime` lock (tests/session_lock.py) only once the
interpreter has started and imported what the command needs.

The `run_cli` fixture (tests/conftest.py) runs real measurements (`run`, `cyclictest`,
`fleet` without --simulate) in a child of their own, one at a time across the xdist
workers.  Holding the lock around the whole child also held it through a second or more
of interpreter start-up and imports (several seconds on a busy machine), while every
other worker with a measurement of its own waited.  Here the imports come first and the
lock is taken just before the command runs; the command itself, its argv (argv[0] is
rtbench's own `__main__.py`, as under `python -m rtbench`) and its exit status are those
of `python -m rtbench`.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# The descriptor the child writes one byte to once it holds the lock: the caller's
# timeout counts from then, as it did when the caller took the lock itself (waiting for
# another checkout's measurement is not this command running late).
LOCKED_FD = "RTBENCH_TEST_LOCKED_FD"

# What a measuring command imports on its way (the command's own module is added from
# rtbench.cli.COMMANDS): numpy, SQLAlchemy, rich and the run machinery; after the
# measurement the regression check (its scipy only where the board has a baseline to fit:
# analysis/evt.py), the store's migrations (alembic) and the report.
PRELOAD = ("rtbench.run.runner", "rtbench.run.save", "rtbench.report.live",
           "rtbench.report.terminal", "rtbench.report.verdict", "rtbench.analysis.verdict",
           "rtbench.analysis.compare", "rtbench.analysis.evt", "rtbench.regress.board",
           "rtbench.store", "rtbench.store.regressions", "rtbench.targets.serial",
           "rtbench.targets.ssh", "rtbench.targets.labgrid", "alembic.command",
           "alembic.config")


def preload(args: list[str]) -> None:
    """Import the module of the command in args and PRELOAD; a module that does not
    exist (any more) is left to the command itself to need or not."""
    from rtbench.cli import COMMANDS

    command = next((arg for arg in args if arg in COMMANDS), None)
    names = ((f"rtbench.commands.{COMMANDS[command][0]}",) if command else ()) + PRELOAD
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            continue


def run_measuring(args: tuple[str, ...], env: Mapping[str, str], cwd: Path,
                  timeout: float) -> subprocess.CompletedProcess[str]:
    """Run `rtbench ARGS` in a child of this module and return what subprocess.run
    returns; timeout counts from the moment the child holds the realtime lock (a child
    still running then is killed and TimeoutExpired raised, as subprocess.run does)."""
    command = [sys.executable, "-m", "tests.measuring_cli", *args]
    locked_read, locked_write = os.pipe()
    try:
        child = subprocess.Popen(command, env={**env, LOCKED_FD: str(locked_write)},
                                 cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, pass_fds=(locked_write,))
    finally:
        os.close(locked_write)
    with child:
        try:
            os.read(locked_read, 1)  # the lock is held, or the child is gone (EOF)
        finally:
            os.close(locked_read)
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            raise
    return subprocess.CompletedProcess(command, child.returncode, out, err)


def tell_locked() -> None:
    """Write the byte run_measuring waits for and close the descriptor (rtbench's own
    children do not inherit it)."""
    fd = os.environ.pop(LOCKED_FD, None)
    if fd is None:
        return
    try:
        os.write(int(fd), b"L")
    finally:
        os.close(int(fd))


def main() -> None:
    """Preload, take the realtime lock, and run rtbench's command line under it."""
    import rtbench
    from rtbench.cli import main as rtbench_main
    from tests.session_lock import session_lock

    preload(sys.argv[1:])
    sys.argv[0] = str(Path(rtbench.__file__).parent / "__main__.py")
    with session_lock("realtime"):
        tell_locked()
        rtbench_main(prog_name="rtbench")


if __name__ == "__main__":
    main()
