"""Run a command to completion and keep its output, with a bound on what is kept.

A board, a fake rtprobe or a broken shell that prints without end must not take the
host's memory: every command whose stdout and stderr rtbench reads whole (a target's
run(), `rtprobe describe --json`, ssh's checks) goes through `run_bounded`, which kills
the command (its process group) once either stream passes the bound.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time

# what one short command may print on stdout or stderr (rtprobe's describe is ~40 KiB,
# a board's /proc files a few KiB; the samples of `rtbench cyclictest -v` come in parts)
COMMAND_OUTPUT_MAX_BYTES = 16 << 20


class OutputTooLarge(Exception):
    """A command printed more than its bound; the message is one line."""


class CommandTimeout(Exception):
    """A command did not end within its time; it has been killed."""


def _kill(proc: subprocess.Popen[bytes], group: bool) -> None:
    """SIGKILL proc (its process group when group) and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def run_bounded(argv: list[str], timeout_s: float, what: str,
                limit_bytes: int = COMMAND_OUTPUT_MAX_BYTES,
                new_session: bool = False) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of argv run with no stdin; OutputTooLarge naming what
    when either stream passes limit_bytes, CommandTimeout after timeout_s (the command
    is killed in both cases), OSError when it cannot start."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=new_session)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    kept = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    names = {proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr"}
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as selector:
        for stream in (proc.stdout, proc.stderr):
            selector.register(stream, selectors.EVENT_READ)
        try:
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    _kill(proc, new_session)
                    raise CommandTimeout(f"{what}: no answer in {timeout_s:g} s")
                for key, _ in selector.select(min(left, 1.0)):
                    fd = key.fd
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        continue
                    kept[fd] += chunk
                    if len(kept[fd]) > limit_bytes:
                        _kill(proc, new_session)
                        raise OutputTooLarge(
                            f"{what}: printed more than {limit_bytes >> 20} MiB on "
                            f"{names[fd]}, the most rtbench keeps of a command; stopped it")
        finally:
            proc.stdout.close()
            proc.stderr.close()
    left = max(deadline - time.monotonic(), 0.1)
    try:
        code = proc.wait(timeout=left)
    except subprocess.TimeoutExpired:
        _kill(proc, new_session)
        raise CommandTimeout(f"{what}: no answer in {timeout_s:g} s") from None
    return code, bytes(out), bytes(err)
