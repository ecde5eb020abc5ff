"""run_cli's measuring child (tests/measuring_cli.py): the realtime lock is taken in the
child when its first suite starts to run, and the call's timeout counts from then, not from
the start of a wait for another measurement's lock; a command refused before it measures
does not wait for the lock at all."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import measures
from tests.measuring_cli import run_measuring
from tests.session_lock import session_lock

REPO = Path(__file__).resolve().parents[2]
HOLD_S = 4.0
# The longest another's hold may last in these tests: a call that wrongly waits for it
# then fails the test instead of hanging it.
HOLD_CAP_S = 120.0
SIMULATED = ("--simulate", "1:const,lat=5us,spike=500us,every=1000")


def child_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a measuring child: a private data dir, this checkout on the path."""
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "PYTHONPATH": str(REPO)}


@contextmanager
def held_by_another(release: threading.Event) -> Iterator[list[float]]:
    """Hold the realtime lock from a thread until release is set (at most HOLD_CAP_S);
    yields a list that gets the monotonic time of the release."""
    held = threading.Event()
    released_at: list[float] = []

    def hold() -> None:
        with session_lock("realtime"):
            held.set()
            release.wait(HOLD_CAP_S)
            released_at.append(time.monotonic())

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    try:
        yield released_at
    finally:
        release.set()
        holder.join()


def test_a_suite_waits_for_the_lock_and_its_timeout_counts_from_it(tmp_path: Path) -> None:
    """With the lock held by another for longer than the call's timeout, a run (simulated:
    the child's lock does not look at --simulate) waits and still completes, its own
    command line's result: exit 0, run 1 stored."""
    release = threading.Event()
    timer = threading.Timer(HOLD_S, release.set)
    with held_by_another(release) as released_at:
        timer.start()
        done = run_measuring(("run", "smoke", "--scale", "0.1", "--no-report", "--db",
                              f"sqlite:///{tmp_path / 'results.db'}", *SIMULATED),
                             child_env(tmp_path), REPO, timeout=HOLD_S - 0.5)
        returned_at = time.monotonic()
    timer.cancel()
    assert released_at and returned_at > released_at[0], "ran while another held the lock"
    assert done.returncode == 0, done.stdout + done.stderr
    assert "run 1: ok" in done.stdout, done.stdout


def test_a_refused_command_does_not_wait_for_the_lock(tmp_path: Path) -> None:
    """A command refused before it runs a suite ends while another holds the lock, with
    rtbench's own usage error: exit 2, prog name `rtbench`."""
    release = threading.Event()
    with held_by_another(release) as released_at:
        done = run_measuring(("run", "no-such-suite"), child_env(tmp_path), REPO,
                             timeout=HOLD_CAP_S)
        assert not released_at, "waited for another's lock"
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("rtbench: suite no-such-suite"), done.stderr


def test_help_and_simulate_are_not_measurements() -> None:
    """run_cli sends `run`, `cyclictest` and `fleet` to a measuring child, but not with
    --help or --simulate; cyclictest's own -h (its histogram) still measures."""
    assert measures(("run", "smoke"))
    assert measures(("cyclictest", "-h", "100"))
    assert measures(("fleet", "boards.toml"))
    assert not measures(("run", "--help"))
    assert not measures(("run", "smoke", "--simulate", "1:const,lat=5us"))
    assert not measures(("ls",))
