"""Run the rtbench command line inside the test process, as a subprocess would see it.

A `python -m rtbench ...` child costs about a second of interpreter start-up and imports
(rich, SQLAlchemy, numpy) before it does anything; most CLI tests only read the output
and the exit code.  `run_in_process` gives them the same `CompletedProcess` a subprocess
gives: the environment and working directory are the child's for the call, stdout and
stderr go to files at the descriptor level (so the output of the programs rtbench starts
lands there too, as it would in a child's pipes), an uncaught exception becomes its
traceback on stderr and exit 1, and the state rtbench keeps between calls in one process
is reset.  Tests of start-up, signals and process lifetime keep real subprocesses.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import IO


class _CallTimedOut(Exception):
    """The in-process call ran past its timeout (raised from SIGALRM)."""


def exit_status(code: object) -> tuple[int, str]:
    """The exit status SystemExit(code) gives a Python process, and what it prints."""
    if code is None:
        return 0, ""
    if isinstance(code, int) and not isinstance(code, bool):
        return code & 0xFF, ""
    return 1, f"{code}\n"


@contextlib.contextmanager
def _environment(env: Mapping[str, str], cwd: Path) -> Iterator[None]:
    """os.environ replaced by env and the working directory set to cwd, for the block."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


@contextlib.contextmanager
def _captured(out_fd: int, err_fd: int) -> Iterator[tuple[io.TextIOWrapper, io.TextIOWrapper]]:
    """Descriptors 1 and 2 and sys.stdout/stderr/stdin pointed at the given files (stdin
    at /dev/null) for the block; everything restored afterwards."""
    saved_fds = (os.dup(1), os.dup(2))
    saved_streams = (sys.stdout, sys.stderr, sys.stdin)
    for stream in saved_streams[:2]:
        with contextlib.suppress(Exception):
            stream.flush()
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    out = io.TextIOWrapper(open(os.dup(1), "wb"), encoding="utf-8")  # noqa: SIM115
    err = io.TextIOWrapper(open(os.dup(2), "wb"), encoding="utf-8",  # noqa: SIM115
                           errors="backslashreplace", line_buffering=True)
    null_in = open(os.devnull, encoding="utf-8")  # noqa: SIM115
    sys.stdout, sys.stderr, sys.stdin = out, err, null_in
    try:
        yield out, err
    finally:
        for stream in (out, err):
            with contextlib.suppress(Exception):
                stream.close()
        null_in.close()
        sys.stdout, sys.stderr, sys.stdin = saved_streams
        os.dup2(saved_fds[0], 1)
        os.dup2(saved_fds[1], 2)
        for fd in saved_fds:
            os.close(fd)


@contextlib.contextmanager
def _deadline(timeout_s: float | None, expired: list[bool]) -> Iterator[None]:
    """Raise _CallTimedOut in the block after timeout_s and note it in expired (main
    thread only; else no limit).  The note counts: rtbench may catch the exception and
    report it as something else (SQLAlchemy wraps it in a StatementError)."""
    if timeout_s is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        """SIGALRM: the call took too long."""
        expired.append(True)
        raise _CallTimedOut()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _reset_rtbench_state() -> None:
    """Forget what rtbench caches per process and may differ between calls."""
    from rtbench.report.width import set_width
    from rtbench.rtprobe.catalogue import local_catalogue

    local_catalogue.cache_clear()  # the probe may be another one (RTBENCH_PROBE, --probe)
    set_width(None)


def _invoke(args: Sequence[str]) -> int:
    """Run `rtbench ARGS` the way `python -m rtbench` does; its exit status."""
    from rtbench.cli import main

    try:
        main(args=list(args), prog_name="rtbench")
    except SystemExit as exc:
        status, text = exit_status(exc.code)
        if text:
            sys.stderr.write(text)
        return status
    except KeyboardInterrupt:
        raise
    except _CallTimedOut:
        raise
    except BaseException:  # noqa: BLE001 - what the interpreter prints for an uncaught one
        sys.stderr.write(traceback.format_exc())
        return 1
    finally:
        gc.unfreeze()  # main() freezes the heap for a child's exit; this process goes on
    return 0


def run_in_process(args: Sequence[str], env: Mapping[str, str], cwd: Path,
                   timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """`rtbench ARGS` with env and cwd, in this process: exit status, stdout, stderr.
    Raises subprocess.TimeoutExpired after timeout seconds, as subprocess.run does."""
    command = [sys.executable, "-m", "rtbench", *args]
    expired: list[bool] = []
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        try:
            with _environment(env, cwd), _captured(out_file.fileno(), err_file.fileno()), \
                    _deadline(timeout, expired):
                _reset_rtbench_state()
                status = _invoke(args)
        except _CallTimedOut:
            pass
        finally:
            _reset_rtbench_state()
        stdout, stderr = _as_text(out_file), _as_text(err_file)
    if expired:
        raise subprocess.TimeoutExpired(command, timeout or 0.0, stdout, stderr)
    return subprocess.CompletedProcess(command, status, stdout, stderr)


def _as_text(file: IO[bytes]) -> str:
    """What file holds, decoded as subprocess.run(text=True) decodes a pipe (UTF-8,
    universal newlines: \\r\\n and \\r become \\n)."""
    file.seek(0)
    return io.TextIOWrapper(io.BytesIO(file.read()), encoding="utf-8",
                            errors="replace").read()
