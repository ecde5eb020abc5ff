"""`python -m tests.measuring_cli ARGS...`: `rtbench ARGS...` as `python -m rtbench` runs
it, holding the machine-wide `realtime` lock (tests/session_lock.py) from the moment its
first measurement starts (rtbench's `Runner.run`) until it exits.

The `run_cli` fixture (tests/conftest.py) runs real measurements (`run`, `cyclictest`,
`fleet` without --simulate) in a child of their own, one at a time across the xdist
workers.  Holding the lock around the whole child also held it through a second or more
of interpreter start-up and imports (several seconds on a busy machine), while every
other worker with a measurement of its own waited; and a command refused before it
measured anything (an unknown suite, a bad --scale) waited for other workers'
measurements for nothing (up to 13 s in a newcomer's make test).  Here the lock is taken
only when a Runner starts to run a suite (a fleet's boards each run one, in threads: the
first takes it for all); the command itself, its argv (argv[0] is rtbench's own
`__main__.py`, as under `python -m rtbench`) and its exit status are those of
`python -m rtbench`.
"""

from __future__ import annotations

import importlib
import os
import select
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

# The descriptor the child writes one byte to once it holds the lock: the caller's
# timeout counts from then, as it did when the caller took the lock itself (waiting for
# another checkout's measurement is not this command running late).  A child that ends
# without measuring closes it unwritten.
LOCKED_FD = "RTBENCH_TEST_LOCKED_FD"

# How long the child may take to reach its first measurement (start-up, imports, its
# database, the board's sysinfo) or to end without one; the caller's timeout counts only
# from the lock, so this bounds the part before it.
BEFORE_LOCK_S = 300.0

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
    returns; timeout counts from the moment the child holds the realtime lock, or from its
    end if it never measured (a child still running then is killed and TimeoutExpired
    raised, as subprocess.run does)."""
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
            # the lock is held (a byte), or the child is gone without measuring (EOF)
            ready, _, _ = select.select([locked_read], [], [], BEFORE_LOCK_S)
        finally:
            os.close(locked_read)
        if not ready:
            child.kill()
            child.communicate()
            raise subprocess.TimeoutExpired(command, BEFORE_LOCK_S)
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


def lock_at_first_run(stack: ExitStack) -> None:
    """Make rtbench's Runner.run take the realtime lock into stack (held until stack
    closes) before the first suite of this process runs; later runs find it held."""
    from rtbench.run.runner import Runner
    from tests.session_lock import session_lock

    original: Callable[..., Any] = Runner.run
    taking = threading.Lock()  # a fleet's boards start their runs from threads at once
    held = False

    def run(self: Runner, *args: Any, **kwargs: Any) -> Any:
        """Runner.run, once the realtime lock is held."""
        nonlocal held
        with taking:
            if not held:
                stack.enter_context(session_lock("realtime"))
                tell_locked()
                held = True
        return original(self, *args, **kwargs)

    Runner.run = run  # type: ignore[method-assign]


def main() -> None:
    """Preload, and run rtbench's command line, its measurements under the realtime lock."""
    import rtbench
    from rtbench.cli import main as rtbench_main

    preload(sys.argv[1:])
    sys.argv[0] = str(Path(rtbench.__file__).parent / "__main__.py")
    with ExitStack() as stack:
        lock_at_first_run(stack)
        rtbench_main(prog_name="rtbench")


if __name__ == "__main__":
    main()
