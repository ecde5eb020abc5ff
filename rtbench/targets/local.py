"""The local machine as a target: rtprobe and loads run as children of rtbench."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rtbench._pdeath import pdeathsig_preexec
from rtbench.owner import LOAD_OWNER_VAR, current_owner, kill_tagged, owner_tag


class TargetError(Exception):
    """The target cannot do what was asked; the message is one line (exit 3)."""


# The highest CPU number Linux can have (NR_CPUS is at most 8192).
MAX_CPU = 8191


def parse_cpulist(text: str) -> set[int]:
    """Parse "0-3,6" into a set of CPU numbers; ValueError names a bad part.

    Ranges must go upwards and stay within MAX_CPU (so a typo cannot ask for
    billions of CPUs).
    """
    cpus: set[int] = set()
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"{part!r} is not a CPU number or range such as 0-3")
        low, high = int(first), int(last or first)
        if high < low:
            raise ValueError(f"range {part} goes backwards")
        if high > MAX_CPU:
            raise ValueError(f"CPU {high} is above {MAX_CPU}, the highest Linux supports")
        cpus.update(range(low, high + 1))
    return cpus


class LocalTarget:
    """Run rtprobe and loads on this machine; every child dies with rtbench."""

    name = "local"

    def __init__(self, probe: Path) -> None:
        self.probe = probe
        self._owner = current_owner()
        # pid of each command load's wrapper -> the tag its whole process tree carries
        self._load_tags: dict[int, str] = {}

    def hostname(self) -> str:
        """Return this machine's host name."""
        return socket.gethostname()

    def read_file(self, path: str) -> str:
        """Return a text file of the target (e.g. /proc/stat)."""
        return Path(path).read_text(encoding="utf-8", errors="replace")

    def run_probe(self, args: list[str],
                  timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
        """Run rtprobe with args to completion and capture its output."""
        try:
            return subprocess.run(
                [str(self.probe), *args], capture_output=True, text=True, timeout=timeout_s,
                check=False, preexec_fn=pdeathsig_preexec(signal.SIGKILL),
            )
        except subprocess.TimeoutExpired as exc:
            raise TargetError(
                f"{self.probe} {' '.join(args)}: no answer in {timeout_s:g} s") from exc
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise TargetError(f"{self.probe}: cannot run ({why})") from exc

    def supports(self, *command: str) -> tuple[bool, str]:
        """Return whether `rtprobe COMMAND... --help` succeeds, and its help text."""
        done = self.run_probe([*command, "--help"], timeout_s=10.0)
        return done.returncode == 0, done.stdout + done.stderr

    def sysinfo(self) -> dict[str, Any]:
        """Return the target's facts from `rtprobe sysinfo`."""
        done = self.run_probe(["sysinfo"])
        if done.returncode != 0:
            line = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise TargetError(f"rtprobe sysinfo failed (exit {done.returncode}): {line}")
        try:
            info = json.loads(done.stdout)
        except json.JSONDecodeError as exc:
            raise TargetError(f"rtprobe sysinfo printed invalid JSON ({exc})") from exc
        if not isinstance(info, dict):
            raise TargetError("rtprobe sysinfo did not print a JSON object")
        return info

    def spawn_probe(self, args: list[str], cpus: str | None = None) -> subprocess.Popen[bytes]:
        """Start rtprobe in its own process group, stdout and stderr piped.

        It gets PR_SET_PDEATHSIG = SIGKILL, so it cannot outlive rtbench.
        """
        try:
            return subprocess.Popen(
                [str(self.probe), *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True,
                preexec_fn=pdeathsig_preexec(signal.SIGKILL,
                                             parse_cpulist(cpus) if cpus else None),
            )
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise TargetError(f"{self.probe}: cannot start ({why})") from exc

    def spawn_load(self, command: str, cpus: str | None = None) -> subprocess.Popen[bytes]:
        """Start an external command load through the loadwrap supervisor.

        The supervisor leads a new process group, restarts the command when it ends and
        kills the whole group when it gets SIGTERM, which the kernel also sends it when
        rtbench dies (PR_SET_PDEATHSIG).
        """
        argv = [sys.executable, "-m", "rtbench.targets.loadwrap", str(os.getpid()), command]
        tag = owner_tag(self._owner, len(self._load_tags))
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=pdeathsig_preexec(signal.SIGTERM,
                                             parse_cpulist(cpus) if cpus else None),
                env={**os.environ, "PYTHONPATH": _package_root(), LOAD_OWNER_VAR: tag},
            )
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise TargetError(f"load {command!r}: cannot start ({why})") from exc
        self._load_tags[proc.pid] = tag
        return proc

    def stop(self, proc: subprocess.Popen[bytes], grace_s: float = 2.0) -> None:
        """Stop a child's process group: SIGTERM, then SIGKILL after grace_s."""
        for signum, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            if proc.poll() is not None:
                break
            try:
                os.killpg(proc.pid, signum)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                continue
        # Whatever is left of the group (grandchildren) goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.wait()
        # and what a command load moved out of its group (setsid, daemons)
        tag = self._load_tags.pop(proc.pid, None)
        if tag is not None:
            kill_tagged(tag)

    def interrupt(self, proc: subprocess.Popen[bytes]) -> None:
        """Send SIGINT to a child (rtprobe then writes its result as interrupted)."""
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGINT)

    @staticmethod
    def now() -> float:
        """Monotonic seconds."""
        return time.monotonic()


def _package_root() -> str:
    """Directory holding the rtbench package (so the wrapper imports this copy)."""
    root = str(Path(__file__).resolve().parents[2])
    old = os.environ.get("PYTHONPATH")
    return f"{root}:{old}" if old else root
