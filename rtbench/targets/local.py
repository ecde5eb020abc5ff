"""The local machine as a target: rtprobe and loads run as children of rtbench.

Every process starts through the /bin/sh launchers of rtbench.targets.shell, in its own
session: pinned by os.sched_setaffinity() on the launcher before its gate opens, and
killed with its whole process group when rtbench stops it or dies (the launcher's stdin
is a pipe from rtbench; the kernel closes it when rtbench exits, however it exits).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from rtbench.core.boundedrun import CommandTimeout, OutputTooLarge, run_bounded
from rtbench.rtprobe.provider import ProbeProvider
from rtbench.rtprobe.sysinfo import VERSION_ARGS, version_of
from rtbench.rtprobe.util.locate import locate_probe
from rtbench.run.util.owner import LOAD_OWNER_VAR, current_owner, kill_tagged, owner_tag
from rtbench.run.util.tracestate import restore_dead_probe
from rtbench.targets.base import (
    CommandResult,
    ProbeProcess,
    Target,
    TargetError,
    TargetUsageError,
)
from rtbench.targets.shell import GATE, command_argv, probe_argv
from rtbench.util.cpulist import parse_cpulist


class LocalProcess(ProbeProcess):
    """A launcher-started child of rtbench: pipes read without blocking, group kill.

    A command load also carries a tag (RTBENCH_LOAD_OWNER in its environment): stop()
    kills every process with that tag too, also those that left the group (setsid).
    """

    def __init__(self, proc: subprocess.Popen[bytes], tag: str | None = None) -> None:
        self.proc = proc
        self.tag = tag
        self._open: dict[int, IO[bytes]] = {}
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
                self._open[stream.fileno()] = stream

    @property
    def pid(self) -> int:
        """The process id (rtprobe's own once the launcher exec'd it)."""
        return self.proc.pid

    def fds(self) -> list[int]:
        """The stdout and stderr pipes not yet at EOF."""
        return list(self._open)

    def _read(self, stream: IO[bytes] | None) -> bytes:
        """What is pending on one pipe; closes it at EOF."""
        if stream is None or stream.closed or stream.fileno() not in self._open:
            return b""
        chunks = []
        while True:
            try:
                data = os.read(stream.fileno(), 65536)
            except BlockingIOError:
                break
            if not data:
                del self._open[stream.fileno()]
                stream.close()
                break
            chunks.append(data)
        return b"".join(chunks)

    def read_available(self) -> tuple[bytes, bytes]:
        """(stdout, stderr) bytes pending now; never blocks."""
        return self._read(self.proc.stdout), self._read(self.proc.stderr)

    def at_eof(self) -> bool:
        """True once both pipes reached EOF."""
        return not self._open

    def poll(self) -> int | None:
        """The exit code once it ended."""
        return self.proc.poll()

    def interrupt(self) -> None:
        """SIGINT to the process itself (rtprobe then writes its result)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGINT)

    def terminate(self) -> None:
        """SIGTERM its process group, not waiting (stop() then finds it gone sooner)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGTERM)

    def stop(self, grace_s: float = 2.0, *, sweep: bool = True) -> None:
        """SIGTERM its process group, SIGKILL after grace_s; close the lifeline and pipes;
        with sweep, kill what escaped the group carrying its load tag."""
        for signum, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            if self.proc.poll() is not None:
                break
            try:
                os.killpg(self.proc.pid, signum)
            except ProcessLookupError:
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=wait_s)
        # Whatever is left of the group (the watcher, grandchildren) goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.wait()
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        for stream in list(self._open.values()):
            stream.close()
        self._open.clear()
        if sweep and self.tag is not None:
            kill_tagged(self.tag)
        if self.tag is None:  # an rtprobe (loads carry a tag)
            said = restore_dead_probe()  # killed before it put tracefs back
            if said:
                sys.stderr.write(f"rtbench: {said}\n")


def _start(argv: list[str], cpus: str | None, what: str,
           tag: str | None = None) -> LocalProcess:
    """Start a launcher in a new session, pin it to cpus, then open its gate.

    tag, for a command load, goes into its environment as RTBENCH_LOAD_OWNER.
    """
    env = None if tag is None else {**os.environ, LOAD_OWNER_VAR: tag}
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, env=env)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise TargetError(f"{what}: cannot start ({why})") from exc
    handle = LocalProcess(proc, tag)
    try:
        if cpus:
            os.sched_setaffinity(proc.pid, parse_cpulist(cpus))
        assert proc.stdin is not None
        proc.stdin.write(GATE)
        proc.stdin.flush()
    except (OSError, ValueError) as exc:
        handle.stop()
        why = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise TargetError(f"{what}: cannot pin to CPUs {cpus} ({why})") from exc
    return handle


class LocalTarget(Target):
    """This machine: rtprobe and loads are children of rtbench."""

    schemes = ("local",)
    uri_forms = ("local (default, this machine)",)
    help_order = 0

    def __init__(self, probe: Path) -> None:
        self.probe = probe
        self._owner = current_owner()
        # pid of each command load's wrapper -> the tag its whole process tree carries
        self._load_tags: dict[int, str] = {}

    @classmethod
    def from_uri(cls, uri: str, *, provider: ProbeProvider | None = None,
                 options: dict[str, Any] | None = None) -> LocalTarget:
        """`local` (nothing else in the URI); its rtprobe is the provider's host probe,
        else the one locate_probe() finds (ProbeNotFound says how to get one)."""
        if uri != "local":
            raise TargetUsageError(f"target {uri!r}: the local target takes no address; "
                                   "use --target local")
        return cls(provider.host_probe() if provider is not None else locate_probe(None))

    @property
    def name(self) -> str:
        """Stored as "local"."""
        return "local"

    def probe_path(self) -> str:
        """The host's rtprobe (found by rtbench.rtprobe.util.locate.locate_probe)."""
        return str(self.probe)

    def hostname(self) -> str:
        """This machine's host name."""
        return socket.gethostname()

    def arch(self) -> str:
        """This machine's `uname -m`."""
        return os.uname().machine

    def read_file(self, path: str) -> str:
        """A text file of this machine; TargetError naming it if unreadable."""
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise TargetError(f"cannot read {path} on the local target "
                              f"({exc.strerror})") from exc

    def run(self, command: str, timeout_s: float = 30.0) -> CommandResult:
        """Run a short /bin/sh command to completion."""
        return self._complete(["/bin/sh", "-c", command], timeout_s, command)

    def put_file(self, local: Path, remote: str, mode: int = 0o755) -> None:
        """Copy a file (temp name, checksum compared, then renamed into place)."""
        target = Path(remote)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
            try:
                with os.fdopen(fd, "wb") as out, local.open("rb") as src:
                    shutil.copyfileobj(src, out)
                    out.flush()
                    os.fsync(out.fileno())
                if _sha256(Path(tmp)) != _sha256(local):
                    raise TargetError(f"copy of {local} to {remote} differs; check the disk")
                os.chmod(tmp, mode)
                os.replace(tmp, target)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        except OSError as exc:
            raise TargetError(f"cannot copy {local} to {remote} ({exc.strerror})") from exc

    def run_probe(self, args: list[str], timeout_s: float = 30.0) -> CommandResult:
        """Run rtprobe with args to completion and capture its output."""
        return self._complete([str(self.probe), *args], timeout_s,
                              f"{self.probe} {' '.join(args)}")

    def _complete(self, argv: list[str], timeout_s: float, what: str) -> CommandResult:
        """Run argv to completion in its own session (killed as a group on timeout)."""
        try:
            code, out, err = run_bounded(argv, timeout_s, what, new_session=True)
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise TargetError(f"{argv[0]}: cannot run ({why})") from exc
        except (CommandTimeout, OutputTooLarge) as exc:
            raise TargetError(str(exc)) from exc
        return CommandResult(code, out.decode("utf-8", errors="replace"),
                             err.decode("utf-8", errors="replace"))

    def start_probe(self, args: list[str], cpus: str | None = None) -> LocalProcess:
        """Start rtprobe (pinned to cpus when given), streaming its output."""
        return _start(probe_argv(str(self.probe), args), cpus, str(self.probe))

    def start_command(self, command: str, cpus: str | None = None) -> LocalProcess:
        """Start a shell-command load, kept running until stopped (see targets.shell)."""
        tag = owner_tag(self._owner, len(self._load_tags))
        handle = _start(command_argv(command), cpus, f"load {command!r}", tag)
        self._load_tags[handle.pid] = tag
        return handle

    def stop_commands(self, procs: list[ProbeProcess]) -> None:
        """Stop command loads together: SIGTERM every group first, then stop each, then
        one sweep of /proc for whatever escaped any of them (a sweep reads every
        process's environment, too slow to repeat for each of 50 loads)."""
        local = [proc for proc in procs if isinstance(proc, LocalProcess)]
        for handle in local:
            handle.terminate()
        for handle in local:
            handle.stop(sweep=False)
        tags = [handle.tag for handle in local if handle.tag is not None]
        if tags:
            kill_tagged(*tags)

    def probe_version(self) -> str:
        """What `rtprobe --version` says (its last word), or 'unknown'."""
        try:
            done = self.run_probe(VERSION_ARGS, timeout_s=10.0)
        except TargetError:
            return "unknown"
        return version_of(done) or "unknown"


def _sha256(path: Path) -> str:
    """Hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

