"""What the board tests (ssh, serial, labgrid, fleet) share: the rtbench CLI of this
checkout in a private data directory, the runs it stored, a console that is ready."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def rtbench(args: list[str], env: dict[str, str], timeout_s: float = 240,
            ) -> subprocess.CompletedProcess[str]:
    """Run the rtbench CLI of this checkout."""
    return subprocess.run([sys.executable, "-m", "rtbench", *args], env=env,
                          capture_output=True, text=True, timeout=timeout_s, check=False)


def cli_env(tmp_path: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for the CLI: base (default os.environ), a private data directory under
    tmp_path, this checkout first, no database or probe chosen from outside."""
    env = dict(os.environ if base is None else base)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    env["COLUMNS"] = "200"
    env.pop("RTBENCH_DB", None)
    env.pop("RTBENCH_PROBE", None)
    return env


def cli_db(tmp_path: Path) -> Path:
    """The database the CLI uses with cli_env(tmp_path)."""
    return tmp_path / "data" / "rtbench" / "results.db"


def stored_runs(db: Path) -> list[Any]:
    """Every run in the SQLite database db, oldest first (none when it does not exist)."""
    from rtbench.store import Store

    if not db.exists():
        return []
    store = Store.open(f"sqlite:///{db}", migrate=False)
    try:
        return [store.get_run(r.id) for r in reversed(store.list_runs())]
    finally:
        store.close()


def wait_for_output(tty: Path, timeout_s: float = 20) -> None:
    """Wait until the board printed something (a banner, a prompt): only then is its
    program running.  A ^C that came earlier would reach the `sh script` that is about
    to exec it and end the console, as a ^C during a real board's boot would."""
    fd = os.open(tty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if os.read(fd, 4096):
                    return
            except BlockingIOError:
                pass
            time.sleep(0.02)
    finally:
        os.close(fd)
    raise AssertionError(f"the board on {tty} printed nothing in {timeout_s:g} s")
