"""A Target for runner tests: rtprobe replays scripted NDJSON, then ends as told.

A `Script` is what one started process does: print its lines (spaced by
`line_interval_s`), then `then`:
  "exit"  end with exit_code (a normal run: the lines end with a result record);
  "hang"  print nothing more and never end until stopped;
  "cut"   print the last line without its newline, then end as if killed;
  "die"   end with exit_code after printing stderr (no result record);
  "lose"  the connection breaks: read_available raises TargetLost, `lost` is true.
On interrupt() it prints `on_interrupt` and ends with 4, unless `ignore_sigint`.
Nothing runs for real: time is the monotonic clock, output comes from read_available.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtbench.rtprobe.util.locate import locate_probe, probe_describe
from rtbench.targets.base import (
    CommandResult,
    ProbeProcess,
    Target,
    TargetError,
    TargetLost,
)

SYSINFO: dict[str, Any] = {
    "uname": {"release": "6.1.0-fake", "machine": "x86_64", "nodename": "fake"},
    "cpu_model": "Fake CPU", "preempt_rt": False, "clocksource": "tsc",
    "cpus_online": "0-3", "cpus_allowed": "0-3", "cpus_configured": 4,
}
PROC_STAT = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 100 0 50 800 50 0 0 0 0 0\nctxt 5000\nintr 10\n"
FILES = {"/proc/stat": PROC_STAT, "/proc/interrupts": "  CPU0\nLOC: 1 timer\n",
         "/proc/loadavg": "0.10 0.10 0.10 1/100 1\n"}


@dataclass
class Script:
    """What one fake process prints and how it ends."""

    lines: list[str] = field(default_factory=list)
    line_interval_s: float = 0.0
    then: str = "exit"
    exit_code: int = 0
    stderr: str = ""
    ignore_sigint: bool = False
    on_interrupt: list[str] = field(default_factory=list)


class FakeProcess(ProbeProcess):
    """Replays a Script against the clock."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.started = time.monotonic()
        self.sent = 0
        self.pending = b""
        self.pending_err = b""
        self.returncode: int | None = None
        self.eof = False
        self.interrupted = False
        self.stopped = False
        self._lost = False

    def fds(self) -> list[int]:
        """No descriptors: the runner's select just waits its tick."""
        return []

    def _end(self, code: int) -> None:
        """The process ends: its output reaches EOF."""
        self.eof = True
        if self.returncode is None:
            self.returncode = code

    def read_available(self) -> tuple[bytes, bytes]:
        """The lines that are due now, and what follows once they are all out."""
        if self._lost:
            raise TargetLost("fake connection closed")
        if self.eof:
            return self._take()
        lines = self.script.lines
        elapsed = time.monotonic() - self.started
        interval = self.script.line_interval_s
        due = len(lines) if interval <= 0 else min(len(lines), int(elapsed / interval) + 1)
        last = len(lines) - 1
        while self.sent < due:
            text = lines[self.sent]
            cut = self.script.then == "cut" and self.sent == last
            self.pending += text.encode() + (b"" if cut else b"\n")
            self.sent += 1
        if self.sent == len(lines):
            then = self.script.then
            if then == "exit":
                self._end(self.script.exit_code)
            elif then == "cut":
                self._end(-9)
            elif then == "die":
                self.pending_err += self.script.stderr.encode()
                self._end(self.script.exit_code)
            elif then == "lose":
                self._lost = True
        return self._take()

    def _take(self) -> tuple[bytes, bytes]:
        """Hand out what is pending."""
        out, err = self.pending, self.pending_err
        self.pending = self.pending_err = b""
        return out, err

    def at_eof(self) -> bool:
        """True once the process ended and its output was read."""
        return self.eof and not self.pending and not self.pending_err

    def poll(self) -> int | None:
        """The exit code once ended."""
        return self.returncode

    def interrupt(self) -> None:
        """SIGINT: print on_interrupt and end with 4, unless the script ignores it."""
        self.interrupted = True
        if self.script.ignore_sigint or self.eof or self._lost:
            return
        self.pending += b"".join(line.encode() + b"\n" for line in self.script.on_interrupt)
        self._end(4)

    def stop(self, grace_s: float = 2.0) -> None:
        """Killed: ends at once (SIGTERM)."""
        self.stopped = True
        if self._lost:
            raise TargetLost("fake connection closed")
        self._end(-15)

    @property
    def lost(self) -> bool:
        """True once the script lost the connection."""
        return self._lost

    @property
    def lost_why(self) -> str | None:
        """The fake loss's words."""
        return "fake connection closed" if self._lost else None


class FakeTarget(Target):
    """A target whose rtprobe runs come from probe_script(args)."""

    def __init__(self, probe_script: Callable[[list[str]], Script],
                 command_script: Callable[[str], Script] | None = None) -> None:
        self.probe_script = probe_script
        self.command_script = command_script or (lambda command: Script(then="hang"))
        self.started: list[tuple[list[str], FakeProcess]] = []
        self.commands: list[tuple[str, FakeProcess]] = []

    @classmethod
    def from_uri(cls, uri: str, *, probe: Path | None = None,
                 options: dict[str, Any] | None = None) -> FakeTarget:
        """Not reachable by URI (tests build it directly)."""
        raise TargetError("the fake target is built by tests")

    @property
    def name(self) -> str:
        """Stored as "fake"."""
        return "fake"

    def hostname(self) -> str:
        """A fixed host name."""
        return "fake"

    def arch(self) -> str:
        """A fixed architecture."""
        return "x86_64"

    def read_file(self, path: str) -> str:
        """A few /proc files with fixed contents."""
        if path not in FILES:
            raise TargetError(f"cannot read {path} on the fake target")
        return FILES[path]

    def run(self, command: str, timeout_s: float = 30.0) -> CommandResult:
        """Every short command succeeds silently."""
        return CommandResult(0, "", "")

    def put_file(self, local: Path, remote: str, mode: int = 0o755) -> None:
        """Nothing to copy."""

    def run_probe(self, args: list[str], timeout_s: float = 30.0) -> CommandResult:
        """sysinfo, --version and describe --json (the built rtprobe's catalogue)."""
        if args == ["sysinfo"]:
            return CommandResult(0, json.dumps(SYSINFO), "")
        if args == ["--version"]:
            return CommandResult(0, "rtprobe 0.1.0-fake\n", "")
        if args == ["describe", "--json"]:
            return CommandResult(0, probe_describe(locate_probe()), "")
        return CommandResult(2, "", f"rtprobe: unknown command {args}\n")

    def start_probe(self, args: list[str], cpus: str | None = None) -> FakeProcess:
        """A process replaying probe_script(args)."""
        proc = FakeProcess(self.probe_script(args))
        self.started.append((args, proc))
        return proc

    def start_command(self, command: str, cpus: str | None = None) -> FakeProcess:
        """A command load (hangs until stopped unless command_script says otherwise)."""
        proc = FakeProcess(self.command_script(command))
        self.commands.append((command, proc))
        return proc

    def probe_version(self) -> str:
        """A fixed version."""
        return "0.1.0-fake"
