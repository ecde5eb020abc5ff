"""The select loop of a run: the target processes' output read as it comes, split into
lines and handed to callbacks (rtprobe's records, a load's rate records)."""

from __future__ import annotations

import select
import time
from collections.abc import Callable

from rtbench.targets.base import ProbeProcess, TargetLost

# how long one turn of a run's loops waits for output
TICK_S = 0.25
# The longest line read from rtprobe: its records are a few KiB (a result with
# thousands of CPUs some MiB); a longer line is refused as it arrives, not kept.
MAX_PROBE_LINE_BYTES = 16 << 20


class LineBuffer:
    """Split a byte stream into lines as data arrives, in time linear in its length.

    The unfinished line is kept as a list of chunks and joined once, when its newline
    arrives (appending to one bytes object would copy it again for every chunk).  A line
    longer than max_line_bytes is not kept: its bytes are dropped as they come, and it is
    returned as an empty line whose number is in `overlong`.
    """

    def __init__(self, max_line_bytes: int = 1 << 62) -> None:
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._dropping = False
        self.max_line_bytes = max_line_bytes
        self.overlong: set[int] = set()
        self.lineno = 0

    def _keep(self, data: bytes) -> None:
        """Hold part of the unfinished line, or drop it once the line is too long."""
        if self._dropping or not data:
            return
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes > self.max_line_bytes:
            self._pending, self._pending_bytes, self._dropping = [], 0, True

    def feed(self, data: bytes) -> list[tuple[int, str]]:
        """Add data; return the complete lines (numbered from 1)."""
        if b"\n" not in data:
            self._keep(data)
            return []
        first, *lines = data.split(b"\n")
        tail = lines.pop()
        self._keep(first)
        head = b"".join(self._pending)
        head_overlong = self._dropping
        self._pending, self._pending_bytes, self._dropping = [], 0, False
        out = []
        for index, raw in enumerate([head, *lines]):
            self.lineno += 1
            if (index == 0 and head_overlong) or len(raw) > self.max_line_bytes:
                self.overlong.add(self.lineno)
                out.append((self.lineno, ""))
                continue
            out.append((self.lineno, raw.decode("utf-8", errors="replace")))
        self._keep(tail)
        return out

    def rest(self) -> str:
        """Text left without a newline (a line cut short by a killed process)."""
        if self._dropping:
            return "(a line too long to keep)"
        return b"".join(self._pending).decode("utf-8", errors="replace")


class Pump:
    """select() over the target processes' output, dispatching it to callbacks."""

    def __init__(self) -> None:
        self._watched: dict[int, tuple[ProbeProcess, Callable[[bytes], None],
                                       Callable[[bytes], None]]] = {}

    def add(self, proc: ProbeProcess, on_stdout: Callable[[bytes], None],
            on_stderr: Callable[[bytes], None]) -> None:
        """Watch a process; the callbacks get each chunk (on_stdout b'' once at EOF)."""
        self._watched[id(proc)] = (proc, on_stdout, on_stderr)

    def watching(self, proc: ProbeProcess) -> bool:
        """True while the process's output has not reached EOF."""
        return id(proc) in self._watched

    def poll(self, timeout_s: float) -> None:
        """Wait up to timeout_s for output and dispatch it.

        TargetLost from a process ends its watch and propagates.
        """
        fds = [fd for proc, _, _ in self._watched.values() for fd in proc.fds()]
        if fds:
            select.select(fds, [], [], max(0.0, timeout_s))
        else:
            time.sleep(max(0.0, timeout_s))
        for key, (proc, on_stdout, on_stderr) in list(self._watched.items()):
            try:
                out, err = proc.read_available()
            except TargetLost:
                self._watched.pop(key, None)
                raise
            if err:
                on_stderr(err)
            if out:
                on_stdout(out)
            if proc.at_eof():
                del self._watched[key]
                on_stdout(b"")

    def drain(self, proc: ProbeProcess, timeout_s: float) -> None:
        """Read a process's output until EOF or timeout_s passes."""
        end = time.monotonic() + timeout_s
        while self.watching(proc) and time.monotonic() < end:
            self.poll(min(TICK_S, end - time.monotonic()))
        self.remove(proc)

    def remove(self, proc: ProbeProcess) -> None:
        """Stop watching a process."""
        self._watched.pop(id(proc), None)
