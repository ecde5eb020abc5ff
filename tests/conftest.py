"""Shared fixtures: the real rtprobe (built once per session) and an rtbench runner."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def probe_path() -> Path:
    """Build probe/ with make (once) and return build/rtprobe."""
    done = subprocess.run(["make", "-C", str(REPO / "probe")], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        pytest.fail(f"make -C probe failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    path = REPO / "probe" / "build" / "rtprobe"
    assert path.is_file()
    return path


@pytest.fixture()
def rtbench_env(tmp_path: Path, probe_path: Path) -> dict[str, str]:
    """Environment for running rtbench: private data dir, the session's probe."""
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["RTBENCH_PROBE"] = str(probe_path)
    env["PYTHONPATH"] = str(REPO) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["COLUMNS"] = "200"
    env.pop("RTBENCH_DB", None)
    return env


RunCli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture()
def run_cli(rtbench_env: dict[str, str]) -> RunCli:
    """Run `python -m rtbench ARGS...` to completion (bounded) and capture its output."""

    def run(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rtbench", *args], env=rtbench_env,
                              capture_output=True, text=True, timeout=timeout, check=False,
                              cwd=REPO)

    return run


def pids_with(marker: str) -> list[int]:
    """PIDs of live (non-zombie) processes whose command line contains marker."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def wait_until_gone(marker: str, timeout_s: float) -> list[int]:
    """Poll until no process carries marker; return what is left after timeout_s."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        left = pids_with(marker)
        if not left:
            return []
        time.sleep(0.1)
    return pids_with(marker)
