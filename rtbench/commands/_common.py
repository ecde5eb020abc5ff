"""What every `rtbench` command shares: errors as one line, the console, the store,
the target, option help texts and the checks on output paths.

Commands import from here, never from rtbench.cli (which only assembles them), so there
is no import circle; nothing heavy (rich, SQLAlchemy) is imported until it is used.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime, timezone
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from rtbench import EXIT_ENV, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, data_dir
from rtbench.core.stdoutcheck import reader_gone, silence_stdout, stdout_failed

if TYPE_CHECKING:
    from rich.console import Console

    from rtbench.targets.base import Target

F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = ("Results database: a URL (sqlite:////path/x.db, postgresql+psycopg://...) or a "
           "file path, which means SQLite (default: RTBENCH_DB, else SQLite in the XDG "
           "data dir).")
PROBE_HELP = ("rtprobe binary to use (default: RTBENCH_PROBE, the packaged one, "
              "./probe/build, PATH).")
# options `run` and `fleet` share
SCALE_HELP = "Multiply every duration (duration, warmup, settle) by this factor."
SIMULATE_HELP = ("Synthetic latencies from rtprobe (e.g. 7 or '1:const,lat=5us'); "
                 "the run is marked simulated.")
BOARD_HELP = ("Name of the board the run is stored under (letters, digits, _ . -; "
              "default: the fleet inventory name, else the target's host).")
POLICY_HELP = ("Run every test as SCHED_OTHER (no real-time permission needed; the "
               "results are then not real-time latencies and are marked so).")


class TargetOption(click.Option):
    """--target URI: its help lists the URI forms of every transport (rtbench.targets),
    read only when a help is shown, so that no command imports every transport to start."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        """The option's help line, with the transports' URI forms."""
        from rtbench.targets.base import target_help

        self.help = target_help()
        return super().get_help_record(ctx)


def check_board(name: str | None) -> str | None:
    """The --board name as given, or a usage error naming what a board name may hold."""
    import re

    if name is not None and not re.fullmatch(r"[A-Za-z0-9_.-]{1,255}", name):
        raise CliError(f"--board {name!r}: a board name is 1 to 255 letters, digits, "
                       "'_', '.' or '-'; choose another", EXIT_USAGE)
    return name


class CliError(Exception):
    """A one-line user error with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code




def make_console() -> Console:
    """A rich console: --width, COLUMNS, the terminal's width or 80 columns; ASCII where
    the terminal cannot print µ (rtbench/report/console.py)."""
    from rtbench.report.console import make_console as console_for_output

    return console_for_output()


def fail(message: str, code: int) -> NoReturn:
    """Raise a CliError."""
    raise CliError(message, code)


def handle_errors(func: F) -> F:
    """Turn known errors into one line on stderr and the matching exit code.

    Whatever else escapes a command is still one line (exit 3, "internal error"),
    never a traceback; RTBENCH_DEBUG=1 shows the traceback instead.
    """

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except KeyboardInterrupt:
            _say("interrupted")
            sys.exit(EXIT_INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:
            known = _known_error(exc)
            if known is not None:
                _say(known[0])
                sys.exit(known[1])
            if os.environ.get("RTBENCH_DEBUG"):
                raise
            if isinstance(exc, OSError) and exc.filename is None and reader_gone(exc):
                silence_stdout()
                sys.exit(EXIT_OK)  # the reader closed the pipe: it has what it wanted
            if isinstance(exc, OSError) and exc.filename is None and stdout_failed(exc):
                _say(f"cannot write to stdout: {exc.strerror or exc}; the output is "
                     "incomplete")
                sys.exit(EXIT_ENV)
            if isinstance(exc, OSError):
                name = f" {exc.filename}" if exc.filename else ""
                _say(f"cannot access{name}: {exc.strerror or exc}")
                # a path that cannot exist is the user's to fix; a refusing machine is not
                sys.exit(EXIT_USAGE if exc.errno in _BAD_PATH_ERRNOS else EXIT_ENV)
            # the last net: one line, never a traceback
            _say(f"internal error ({type(exc).__name__}: {_one_line(exc)}); "
                 "please report it (RTBENCH_DEBUG=1 shows the traceback)")
            sys.exit(EXIT_ENV)

    return wrapper  # type: ignore[return-value]


def _known_error(exc: Exception) -> tuple[str, int] | None:
    """The line and exit code of an error rtbench raises on purpose, else None.

    The error classes are imported here, on the error path, so that a command that
    succeeds pays for none of their modules.
    """
    from rtbench.rtprobe.util.locate import ProbeNotFound
    from rtbench.run.outcome import RunError
    from rtbench.store import StoreError
    from rtbench.suites.model import SuiteError
    from rtbench.targets import TargetError, TargetUsageError

    if isinstance(exc, (CliError, RunError)):
        return str(exc), exc.code
    if isinstance(exc, TargetUsageError):
        return str(exc), EXIT_USAGE
    if isinstance(exc, SuiteError):
        return f"suite {exc}", EXIT_USAGE
    if isinstance(exc, (ProbeNotFound, TargetError)):
        return str(exc), EXIT_ENV
    if isinstance(exc, StoreError):
        return str(exc), int(getattr(exc, "code", EXIT_ENV))
    return None


def _one_line(exc: BaseException) -> str:
    """The first line of an exception's text, at most 300 characters."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def _say(message: str) -> None:
    """Print one error line on stderr, its text stripped of terminal controls and the
    credentials of any URL in it hidden (rtbench.core.redact)."""
    from rtbench.core.redact import redact
    from rtbench.report.text import for_terminal

    line = redact(" ".join(for_terminal(message).split("\n")))
    click.echo(f"rtbench: {line[:2000]}", err=True)


# A stored run's id, or a count: what fits a 64-bit signed database integer.
RUN_ID = click.IntRange(min=1, max=2**63 - 1)


def open_store(url: str | None, *, reading: bool = False, existing: bool = False) -> Any:
    """Open the results database (created and migrated on first use; with reading, for
    a command that only reads: never created, opened read-only when it cannot be written;
    with existing, for a command that changes stored runs: never created).

    Runs whose rtbench died (SIGKILL, power loss, a closed terminal) are marked
    `abandoned` on the way, and what such a process left behind is cleaned up.
    """
    from rtbench.store import Store, StoreError

    store = Store.open(url, reading=reading, existing=existing)
    recover_stale(store, StoreError)
    return store


def recover_stale(store: Any, store_error: type[Exception]) -> None:
    """Mark the runs of dead owners abandoned; kill their loads; remove their io dirs;
    put back the tracefs state a dead local rtprobe left (one line on stderr)."""
    from rtbench.run.util.owner import clean_stale_load_dirs, kill_orphaned_loads, owner_dead
    from rtbench.run.util.tracestate import restore_dead_probe

    kill_orphaned_loads()
    clean_stale_load_dirs(data_dir() / "loads")
    said = restore_dead_probe()  # a dead local rtprobe left the kernel tracing
    if said:
        _say(said)
    # a read-only database: nothing can be marked, the command still works
    with contextlib.suppress(store_error):
        store.mark_abandoned(owner_dead)


def open_target(uri: str | None, probe_path: str | None) -> Target:
    """The target named by uri (default local); --probe, if given, is the rtprobe to use."""
    from rtbench.rtprobe.provider import Probes
    from rtbench.targets import open_target as open_uri

    return open_uri(uri, provider=Probes(Path(probe_path) if probe_path else None))


def check_run_options(scale: float, report_path: Path | None, no_report: bool) -> None:
    """The options `run` and `fleet` share make sense together (exit 2 if not)."""
    if not (math.isfinite(scale) and scale > 0):
        fail(f"--scale {scale}: must be a finite number > 0", EXIT_USAGE)
    if no_report and report_path is not None:
        fail("--no-report and --report contradict each other; give one of them", EXIT_USAGE)


def keep_recovery(exc: Any) -> NoReturn:
    """The database refused a finished measurement: write the run so far with it as an
    rtbench-run/1 file and fail naming the file (exit 3)."""
    import tempfile

    from rtbench.interop.runjson import dumps

    text = dumps(exc.bundle)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    name = f"run-{exc.bundle.tags.get('recovered_from', 'x')}-{stamp}.json"
    for directory in (data_dir() / "recovered", Path(os.environ.get("TMPDIR", "/var/tmp"))):
        tmp = None
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, directory / name)
        except OSError:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            continue
        fail(f"{exc}; the finished measurements are kept in {directory / name} "
             f"(`rtbench import {directory / name}` stores them)", EXIT_ENV)
    fail(f"{exc}; the measurement could not be kept in a file either "
         "(no writable directory)", EXIT_ENV)


# errno values that mean the report path itself is wrong (usage), not the machine
_BAD_PATH_ERRNOS = {errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.ENAMETOOLONG,
                    errno.EINVAL, errno.ELOOP, errno.EEXIST}


def _path_error(what: str, path: Path, exc: OSError) -> NoReturn:
    """Fail naming path: exit 2 for a wrong path, 3 for a refusing machine (EACCES...)."""
    code = EXIT_USAGE if exc.errno in _BAD_PATH_ERRNOS else EXIT_ENV
    fail(f"{what} {path}: {exc.strerror or exc}", code)


# what other commands' output paths use (export -o): the same codes as the report's
path_error = _path_error


def _make_parent(what: str, path: Path) -> None:
    """Create path's directory; an ancestor that is a file is a wrong path (exit 2)."""
    for ancestor in path.parents:
        if ancestor.exists() or ancestor.is_symlink():
            if not ancestor.is_dir():
                fail(f"{what} {path}: {ancestor} is not a directory", EXIT_USAGE)
            break
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _path_error(f"{what}: cannot create the directory", path.parent, exc)


def check_report_path(path: Path) -> None:
    """Before a run: the report path is usable (its directory creatable and writable)."""
    if "\x00" in str(path):
        fail(f"--report {path!r}: contains a NUL byte", EXIT_USAGE)
    if path.is_dir():
        fail(f"--report {path}: is a directory; give a file name", EXIT_USAGE)
    directory = path.parent
    _make_parent("--report", path)
    if not os.access(directory, os.W_OK | os.X_OK):
        fail(f"--report {path}: directory {directory} is not writable", EXIT_ENV)
    # access() says yes to root everywhere (/proc too): create and remove a file there
    try:
        fd, probe_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                          dir=directory)
        os.close(fd)
        os.unlink(probe_name)
    except OSError as exc:
        _path_error("--report: cannot create a file beside", path, exc)


def write_report(detail: Any, path: Path) -> None:
    """Write the HTML report of a run to path; OS errors are one line (exit 2 or 3)."""
    from rtbench.report.html import write_html_report

    if "\x00" in str(path):
        fail(f"report path {path!r}: contains a NUL byte", EXIT_USAGE)
    _make_parent("report", path)
    try:
        write_html_report(detail, path)
    except OSError as exc:
        _path_error("cannot write the report", path, exc)


def check_writable(path: Path, suffixes: tuple[str, ...]) -> None:
    """Exit 2 unless path has one of the suffixes and its directory exists and is writable."""
    if path.suffix.lower() not in suffixes:
        fail(f"{path}: the file name must end in {' or '.join(suffixes)}", EXIT_USAGE)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        fail(f"{path}: directory {directory} does not exist; create it or choose another "
             "path", EXIT_USAGE)
    if not os.access(directory, os.W_OK | os.X_OK):
        fail(f"{path}: directory {directory} is not writable; choose another path",
             EXIT_USAGE)
    if path.is_dir():
        fail(f"{path} is a directory; give a file name", EXIT_USAGE)


RUN_ARG_HELP = ("RUN: an id, latest, latest~N, a selector such as host=box,kernel~rt, "
                "or ref:NAME for a published reference run (rtbench ref ls).")

