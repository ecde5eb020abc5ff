"""run_cli's measuring child (tests/measuring_cli.py): the realtime lock is taken in the
child after its imports, and the call's timeout counts from then, not from the start of
a wait for another measurement's lock."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from tests.measuring_cli import run_measuring
from tests.session_lock import session_lock

REPO = Path(__file__).resolve().parents[2]
HOLD_S = 4.0


def test_timeout_counts_from_the_lock_and_the_command_is_rtbenchs(tmp_path: Path) -> None:
    """With the lock held by another for longer than the call's timeout, the call still
    completes: rtbench's own usage error, exit 2, prog name `rtbench`."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "PYTHONPATH": str(REPO)}
    held = threading.Event()

    def hold() -> None:
        with session_lock("realtime"):
            held.set()
            time.sleep(HOLD_S)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    started = time.monotonic()
    try:
        done = run_measuring(("run", "no-such-suite"), env, REPO, timeout=HOLD_S - 0.5)
    finally:
        holder.join()
    assert time.monotonic() - started >= HOLD_S - 0.5
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("rtbench: suite no-such-suite"), done.stderr
