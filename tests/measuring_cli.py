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
import sys
from pathlib import Path

# What a measuring command imports before it measures (the command's own module is
# added from rtbench.cli.COMMANDS): numpy, SQLAlchemy, rich and the run machinery.
PRELOAD = ("rtbench.run.runner", "rtbench.run.save", "rtbench.report.live",
           "rtbench.report.terminal", "rtbench.analysis.verdict", "rtbench.store")


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


def main() -> None:
    """Preload, take the realtime lock, and run rtbench's command line under it."""
    import rtbench
    from rtbench.cli import main as rtbench_main
    from tests.session_lock import session_lock

    preload(sys.argv[1:])
    sys.argv[0] = str(Path(rtbench.__file__).parent / "__main__.py")
    with session_lock("realtime"):
        rtbench_main(prog_name="rtbench")


if __name__ == "__main__":
    main()
