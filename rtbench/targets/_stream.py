"""A ProbeProcess for a process on a board reached through a local client process.

The local process (ssh, for instance) runs `echo RTBENCH-PID $$; exec COMMAND` on the
target: the first stdout line gives the remote pid, which signals are sent to through a
separate command; everything after it is the process's own output.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO

from rtbench.targets.base import ProbeProcess

PID_TAG = b"RTBENCH-PID "


def pid_prefix(command: str) -> str:
    """Shell that prints the pid line, then becomes command (same pid, same group)."""
    return f"echo RTBENCH-PID $$; exec {command}"


class Heartbeat:
    """A thread that writes a line to a pipe every period_s (the lifeline of a board
    process, see _shell.under_lifeline) until stopped or the pipe breaks."""

    def __init__(self, pipe: IO[bytes], period_s: float) -> None:
        self._pipe = pipe
        self._period_s = period_s
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._beat, name="rtbench-lifeline",
                                        daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        """Write one line per period until stopped or the write fails."""
        while not self._stopped.wait(self._period_s):
            with self._lock:
                if self._stopped.is_set():
                    return
                try:
                    self._pipe.write(b"\n")
                    self._pipe.flush()
                except (OSError, ValueError):
                    return

    def stop(self) -> None:
        """Stop beating and close the pipe (the board process sees EOF)."""
        self._stopped.set()
        with self._lock, contextlib.suppress(OSError, ValueError):
            self._pipe.close()


class RemoteProcess(ProbeProcess):
    """A remote process seen through a local client's pipes.

    signal_fn(pid, signame, group) sends a signal on the target; lost_fn() says whether
    the connection broke (asked once the client ended).  With heartbeat_s, a line goes
    to the client's stdin that often: the remote lifeline (_shell.under_lifeline).
    """

    def __init__(self, client: subprocess.Popen[bytes],
                 signal_fn: Callable[[int, str, bool], None],
                 lost_fn: Callable[[], bool], heartbeat_s: float | None = None) -> None:
        self.client = client
        self._heartbeat = Heartbeat(client.stdin, heartbeat_s) \
            if heartbeat_s and client.stdin is not None else None
        self._signal = signal_fn
        self._lost_fn = lost_fn
        self._lost: bool | None = None
        self._pending = b""
        self._held = (b"", b"")
        self.remote_pid: int | None = None
        self._eof = {"out": False, "err": False}
        for stream in (client.stdout, client.stderr):
            assert stream is not None
            flags = fcntl.fcntl(stream.fileno(), fcntl.F_GETFL)
            fcntl.fcntl(stream.fileno(), fcntl.F_SETFL, flags | os.O_NONBLOCK)

    def fds(self) -> list[int]:
        """Descriptors of the client's stdout and stderr still open."""
        out: list[int] = []
        for key, stream in (("out", self.client.stdout), ("err", self.client.stderr)):
            if stream is not None and not self._eof[key]:
                out.append(stream.fileno())
        return out

    def _read(self, key: str) -> bytes:
        """What one pipe holds now ("" at EOF, which is remembered)."""
        stream = self.client.stdout if key == "out" else self.client.stderr
        if stream is None or self._eof[key]:
            return b""
        chunks: list[bytes] = []
        while True:
            try:
                data = os.read(stream.fileno(), 65536)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                self._eof[key] = True
                break
            chunks.append(data)
        return b"".join(chunks)

    def read_available(self) -> tuple[bytes, bytes]:
        """(stdout, stderr) since the last call, the pid line taken off stdout."""
        out = self._held[0] + self._read("out")
        err = self._held[1] + self._read("err")
        self._held = (b"", b"")
        if self.remote_pid is None:
            self._pending += out
            out = b""
            line, sep, rest = self._pending.partition(b"\n")
            if sep:
                if line.startswith(PID_TAG) and line[len(PID_TAG):].strip().isdigit():
                    self.remote_pid = int(line[len(PID_TAG):])
                    out = rest
                else:
                    self.remote_pid = 0
                    out = self._pending
                self._pending = b""
            elif self._eof["out"]:
                out, self._pending = self._pending, b""
        return out, err

    def at_eof(self) -> bool:
        """True once the client's stdout and stderr are closed."""
        return self._eof["out"] and self._eof["err"]

    def poll(self) -> int | None:
        """The remote exit code (through the client) once it ended."""
        return self.client.poll()

    def _await_pid(self, wait_s: float = 5.0) -> None:
        """Read until the pid line came (output kept for read_available) or wait_s passed."""
        deadline = time.monotonic() + wait_s
        while self.remote_pid is None and self.client.poll() is None \
                and time.monotonic() < deadline:
            out, err = self.read_available()
            self._held = (self._held[0] + out, self._held[1] + err)
            if self.remote_pid is None:
                time.sleep(0.02)

    def interrupt(self) -> None:
        """SIGINT to the remote process (rtprobe then writes its result)."""
        self._await_pid()
        if self.client.poll() is None and self.remote_pid:
            self._signal(self.remote_pid, "INT", False)

    def stop(self, grace_s: float = 2.0) -> None:
        """SIGTERM then SIGKILL to the remote process group, then end the client."""
        self._await_pid()
        for signame, wait_s in (("TERM", grace_s), ("KILL", 3.0)):
            if self.client.poll() is not None:
                break
            if self.remote_pid:
                with contextlib.suppress(Exception):
                    self._signal(self.remote_pid, signame, True)
            try:
                self.client.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                continue
        if self.client.poll() is None:
            self.client.kill()
            self.client.wait()
        if self._heartbeat is not None:
            self._heartbeat.stop()
        if self.client.stdin is not None:
            with contextlib.suppress(OSError):
                self.client.stdin.close()

    @property
    def lost(self) -> bool:
        """True when the client ended because the connection broke."""
        if self.client.poll() is None:
            return False
        if self._lost is None:
            self._lost = self._lost_fn()
        return self._lost
