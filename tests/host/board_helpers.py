"""What the board tests (ssh, serial, labgrid, fleet) share: the rtbench CLI of this
checkout in a private data directory, the static probe its boards get, the runs it
stored, a console that is ready.

The boards of these tests have this host's arch.  Given the checkout's dynamic rtprobe,
rtbench would build the board's probe with Zig (about 60 CPU-seconds with a cold cache,
an eighth of a newcomer's make test); the tests hand it the checkout's static build
instead, as a wheel install has one (docs/targets.md, "How the probe gets there"): what
these tests test is the transport, not the Zig build, which tests/probe/test_arches.py,
tests/host/test_board_probe.py and the board zoo (make test-boards) cover.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.session_lock import session_lock

if TYPE_CHECKING:
    from rtbench.rtprobe.provider import Probes

PROBE_DIR = Path(__file__).resolve().parents[2] / "probe"


@functools.cache
def static_probe() -> Path:
    """The checkout's static rtprobe for the boards: the musl build (a seventh of the
    glibc one's size, which matters on a serial line) where musl-gcc exists, else the
    static glibc build a wheel ships; made once per process, one make at a time."""
    if shutil.which("musl-gcc"):
        args, path = ["musl"], PROBE_DIR / "build" / "musl" / "rtprobe"
    else:
        args, path = ["STATIC=1", "BUILD=build/static"], PROBE_DIR / "build" / "static" / "rtprobe"
    with session_lock("probe-make"):
        done = subprocess.run(["make", "-C", str(PROBE_DIR), *args], capture_output=True,
                              text=True, timeout=600, check=False)
    assert done.returncode == 0, f"make -C probe {' '.join(args)}: {done.stderr[-2000:]}"
    return path


def board_probes() -> Probes:
    """The probe provider of the in-process board tests: the static probe, as --probe."""
    from rtbench.rtprobe.provider import Probes

    return Probes(static_probe())


def rtbench(args: list[str], env: dict[str, str], timeout_s: float = 240,
            ) -> subprocess.CompletedProcess[str]:
    """Run the rtbench CLI of this checkout (a test whose command measures at an RT
    priority holds the realtime lock: the `realtime` fixture of tests/conftest.py)."""
    return subprocess.run([sys.executable, "-m", "rtbench", *args], env=env,
                          capture_output=True, text=True, timeout=timeout_s, check=False)


def cli_env(tmp_path: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for the CLI: base (default os.environ), a private data directory under
    tmp_path, this checkout first, no database chosen from outside, the static probe as
    RTBENCH_PROBE (what an ssh board gets; a serial board gets a Zig build unless the
    command says --probe: serial_probe_args())."""
    env = dict(os.environ if base is None else base)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    env["COLUMNS"] = "200"
    env.pop("RTBENCH_DB", None)
    env["RTBENCH_PROBE"] = str(static_probe())
    return env


def serial_probe_args() -> list[str]:
    """--probe with the static probe: on a serial line rtbench prefers a Zig build (the
    smallest binary) to the host's static probe, so a serial command names it."""
    return ["--probe", str(static_probe())]


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
