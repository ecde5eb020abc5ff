"""The part of a board target that only needs a way to run /bin/sh commands there.

A subclass (ssh, serial) supplies the transport: `run()`, `_send_file()` and
`_start_remote()`; this class detects the arch, pushes the right probe once (checksum
verified, reused while it matches), holds the board's run lock and expresses every
Target operation as shell commands and rtprobe invocations.  The probe pushed is the board
build; board builds have no --simulate, so a simulated run gets the full build, pushed
the first time one starts.
"""

from __future__ import annotations

import secrets
import shlex
from abc import abstractmethod
from pathlib import Path

from rtbench.rtprobe.elf import ProbeArchError, check_probe_arch
from rtbench.rtprobe.provider import ProbeProvider, ProbeUnavailable
from rtbench.rtprobe.sysinfo import VERSION_ARGS, last_error_line, version_of
from rtbench.targets import _shell
from rtbench.targets.base import CommandResult, ProbeProcess, Target, TargetError
from rtbench.targets.progress import Progress
from rtbench.targets.shell import LOAD_ENDED


def asks_simulation(args: list[str]) -> bool:
    """True when an rtprobe command line asks for --simulate (before a lone "--")."""
    for arg in args:
        if arg == "--":
            return False
        if arg == "--simulate" or arg.startswith("--simulate="):
            return True
    return False


class BoardTarget(Target):
    """A Linux board with /bin/sh, reached by some transport."""

    # True when _send_file() reports its own progress (bytes sent) through progress()
    push_reports_progress = False
    # A slow line (a serial console: about 10 KiB/s at 115200 baud) gets the smallest
    # probe: the board build, built now when Zig is there, never the 1 MiB native one.
    wants_small_probe = False
    # a read of a few /proc files (once a second while measuring) that takes longer than
    # this is a link in trouble; a subclass whose link is slow sets its own
    read_timeout_s = 30.0

    def __init__(self, *, provider: ProbeProvider | None, remote_dir: str) -> None:
        self._provider = provider
        self.remote_dir = remote_dir
        self._arch: str | None = None
        self._hostname: str | None = None
        self._remote_probe: str | None = None
        self._simulation_probe: str | None = None
        self._probe_version: str | None = None
        self._progress_lines: Progress | None = None

    def progress(self) -> Progress:
        """The live lines of this board's slow steps (stderr, prefixed with its name)."""
        if self._progress_lines is None:
            self._progress_lines = Progress(self.name)
        return self._progress_lines

    def set_progress(self, progress: Progress) -> None:
        """Show this board's slow steps through progress instead (a fleet, a test)."""
        self._progress_lines = progress

    # --- what a transport supplies -------------------------------------------------

    @abstractmethod
    def _send_file(self, data: bytes, remote: str) -> None:
        """Write data to the target's file remote (created or replaced)."""

    @abstractmethod
    def _start_remote(self, command: str) -> ProbeProcess:
        """Start a /bin/sh command line on the target, streaming its output; the line
        starts by printing its pid and reads its lifeline on stdin (_shell.under_lifeline):
        the transport writes a line there every LIFELINE_PERIOD_S."""

    # --- set-up ---------------------------------------------------------------------

    def _check_shell(self) -> None:
        """TargetError unless commands run through /bin/sh on the target."""
        done = self.run("echo rtbench-sh-ok")
        if "rtbench-sh-ok" not in done.stdout:
            said = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines()
                    or ["no output"])[-1]
            raise TargetError(f"{self.name}: cannot run /bin/sh there ({said[:160]}); "
                              "a target needs /bin/sh")

    def _install_probe(self) -> None:
        """Pick the probe for the target's arch and make sure the target has it."""
        arch = self.probe_arch()
        self._remote_probe = self._pushed(self._provided(arch, simulation=False), arch)
        done = self.run_probe(VERSION_ARGS, timeout_s=30.0)
        version = version_of(done)
        if version is None:
            said = last_error_line(done, "no output")
            raise TargetError(f"{self.name}: the pushed probe does not run there "
                              f"(exit {done.returncode}: {said[:160]})")
        self._probe_version = version

    def _provided(self, arch: str, *, simulation: bool) -> Path:
        """The provider's probe for arch: the board build, or the full build (with
        --simulate) when simulation."""
        if self._provider is None:
            raise TargetError(f"{self.name}: no probe to push (the target was opened "
                              "without a probe provider)")
        try:
            if self.wants_small_probe and not simulation:
                return self._provider.probe_for(arch, self.progress(), simulation=False,
                                                small=True)
            return self._provider.probe_for(arch, self.progress(), simulation=simulation)
        except ProbeUnavailable as exc:
            raise TargetError(f"{self.name}: {exc}") from exc

    def _pushed(self, local: Path, arch: str) -> str:
        """Where the probe local is on the target, pushed there unless it already is."""
        try:
            check_probe_arch(local, arch)
        except ProbeArchError as exc:
            raise TargetError(str(exc)) from exc
        remote = _shell.probe_remote_path(self.remote_dir, local)
        if not _shell.remote_matches(self._run_short, remote, local):
            self._push(local, remote)
        return remote

    def _push(self, local: Path, remote: str) -> None:
        """Copy local to remote through a temp name, verify the checksum, then rename."""
        temp = f"{remote}.part"
        self._private_dir()
        self.run(f"rm -f {shlex.quote(temp)}")
        step = f"pushing rtprobe ({local.stat().st_size // 1024} KiB) to {remote}"
        if self.push_reports_progress:
            self.progress().start(step)
            self._send_file(local.read_bytes(), temp)
            self.progress().done("sent")
        else:
            with self.progress().ticking(step):  # the seconds, if it takes long
                self._send_file(local.read_bytes(), temp)
        if not _shell.remote_matches(self._run_short, temp, local):
            self.run(f"rm -f {shlex.quote(temp)}")
            raise TargetError(f"{self.name}: the probe arrived damaged at {temp} "
                              "(checksum differs)")
        done = self.run(f"chmod 755 {shlex.quote(temp)} && mv -f {shlex.quote(temp)} "
                        f"{shlex.quote(remote)}")
        if done.returncode != 0:
            self.run(f"rm -f {shlex.quote(temp)}")
            raise TargetError(f"{self.name}: cannot install the probe at {remote} "
                              f"({done.stderr.strip()[:160]})")
        if not _shell.remote_matches(self._run_short, remote, local):
            raise TargetError(f"{self.name}: the probe at {remote} changed while it was "
                              "installed; check who else writes to " + self.remote_dir)

    def _private_dir(self) -> None:
        """Make the board's rtbench directory this user's own (0700), else TargetError."""
        done = self.run(_shell.private_dir_command(self.remote_dir))
        if done.returncode != 0:
            raise TargetError(f"{self.name}: {self.remote_dir} "
                              f"{_shell.private_dir_error(done)}; give a directory of "
                              "your own with ?dir=")

    def _run_short(self, command: str) -> CommandResult:
        """run() with the default timeout (for the _shell helpers)."""
        return self.run(command)

    # --- Target ---------------------------------------------------------------------

    def probe_arch(self) -> str:
        """The probe arch of the target (x86_64, armhf, mipsel, ...)."""
        if self._arch is None:
            self._arch = _shell.detect_arch(self._run_short)
        return self._arch

    def arch(self) -> str:
        """The target's `uname -m`."""
        done = self.run("uname -m")
        return done.stdout.strip() or "unknown"

    def hostname(self) -> str:
        """The target's host name (`uname -n`)."""
        if self._hostname is None:
            done = self.run("uname -n")
            self._hostname = done.stdout.strip() or "unknown"
        return self._hostname

    def read_file(self, path: str) -> str:
        """A text file of the target, through cat."""
        done = self.run(f"cat {shlex.quote(path)}")
        if done.returncode != 0:
            raise TargetError(f"{self.name}: cannot read {path} "
                              f"({done.stderr.strip()[:160] or 'cat failed'})")
        return done.stdout

    def read_files(self, paths: list[str]) -> list[str]:
        """Text files of the target with one command: each file's text is followed by a
        line holding a random marker, which no file can have guessed."""
        marker = f"RTBENCH-END-{secrets.token_hex(8)}"
        command = " && ".join(f"cat {shlex.quote(p)} && printf '\\n%s\\n' {marker}"
                              for p in paths)
        done = self.run(command, timeout_s=self.read_timeout_s)
        parts = done.stdout.split(f"\n{marker}\n")
        if done.returncode != 0 or len(parts) != len(paths) + 1:
            raise TargetError(f"{self.name}: cannot read {' '.join(paths)} "
                              f"({done.stderr.strip()[:160] or 'cat failed'})")
        return parts[:-1]

    def put_file(self, local: Path, remote: str, mode: int = 0o755) -> None:
        """Copy a host file onto the target, checksum verified."""
        temp = f"{remote}.part"
        self._send_file(local.read_bytes(), temp)
        if not _shell.remote_matches(self._run_short, temp, local):
            self.run(f"rm -f {shlex.quote(temp)}")
            raise TargetError(f"{self.name}: {remote} arrived damaged (checksum differs)")
        done = self.run(f"chmod {mode:o} {shlex.quote(temp)} && mv -f {shlex.quote(temp)} "
                        f"{shlex.quote(remote)}")
        if done.returncode != 0:
            self.run(f"rm -f {shlex.quote(temp)}")
            raise TargetError(f"{self.name}: cannot write {remote} "
                              f"({done.stderr.strip()[:160]})")
        if not _shell.remote_matches(self._run_short, remote, local):
            raise TargetError(f"{self.name}: {remote} changed while it was written")

    def probe_path(self) -> str:
        """Where rtprobe is on the board (as stored command lines name it)."""
        return self._remote_probe or "rtprobe"

    def _probe_path(self, args: list[str] | None = None) -> str:
        """The probe's path on the target (after open()) for a run of args: the board
        build, or for a simulated run the full build (board builds have no --simulate),
        pushed the first time one is started."""
        if self._remote_probe is None:
            raise TargetError(f"{self.name}: not opened (no probe on the target yet)")
        if not asks_simulation(args or []):
            return self._remote_probe
        if self._simulation_probe is None:
            arch = self.probe_arch()
            self._simulation_probe = self._pushed(
                self._provided(arch, simulation=True), arch)
        return self._simulation_probe

    def run_probe(self, args: list[str], timeout_s: float = 30.0) -> CommandResult:
        """Run `rtprobe ARGS` on the target to completion."""
        return self.run(_shell.quote([self._probe_path(args), *args]), timeout_s=timeout_s)

    def start_probe(self, args: list[str], cpus: str | None = None) -> ProbeProcess:
        """Start rtprobe on the target (under taskset when cpus is given and it exists)."""
        probe = _shell.quote([self._probe_path(args), *args])
        if cpus:
            command = (f"if command -v taskset >/dev/null 2>&1; then "
                       f"exec taskset -c {shlex.quote(cpus)} {probe}; else exec {probe}; fi")
        else:
            command = f"exec {probe}"
        return self._start_remote(_shell.under_lifeline(command))

    def start_command(self, command: str, cpus: str | None = None) -> ProbeProcess:
        """Start a shell-command load, restarted when it ends; its whole group dies when
        stopped, and by itself when the session's stdin closes (connection closed or lost)."""
        inner = f"/bin/sh -c {shlex.quote(command)} </dev/null"
        if cpus:
            inner = (f"if command -v taskset >/dev/null 2>&1; then taskset -c "
                     f"{shlex.quote(cpus)} {inner}; else {inner}; fi")
        # each end of the command is reported as targets.shell.COMMAND_LAUNCHER does
        return self._start_remote(_shell.under_lifeline(
            f"while :; do t0=$(date +%s 2>/dev/null); {inner} >/dev/null 2>&1; "
            f"echo \"{LOAD_ENDED} $? ${{t0:-0}} $(date +%s 2>/dev/null || echo 0)\"; "
            "sleep 1; done"))

    def probe_version(self) -> str:
        """The version the probe on the target reports."""
        return self._probe_version or "unknown"
