"""The `rtbench` command line: run, suites, preflight, ls, show, report, db."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from rich import box
from rich.console import Console
from rich.text import Text

from rtbench import EXIT_ENV, EXIT_INTERRUPTED, EXIT_USAGE, __version__, data_dir
from rtbench.probe import ProbeNotFound
from rtbench.report.text import for_rich, for_terminal
from rtbench.suites import SuiteError, builtin_suites, load_suite

if TYPE_CHECKING:
    from rtbench.targets.base import Target

F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = ("Results database: a URL (sqlite:////path/x.db, postgresql+psycopg://...) or a "
           "file path, which means SQLite (default: RTBENCH_DB, else SQLite in the XDG "
           "data dir).")
PROBE_HELP = ("rtprobe binary to use (default: RTBENCH_PROBE, the packaged one, "
              "./probe/build, PATH).")
TARGET_HELP = ("Where to measure, as a URI: local (default, this machine), "
               "ssh://[user@]host[:port], serial:///dev/ttyX?baud=115200, labgrid:PLACE or "
               "labgrid-env:FILE.yaml[:TARGET] (docs/targets.md).")
# options `run` and `fleet` share
SCALE_HELP = "Multiply every duration (duration, warmup, settle) by this factor."
SIMULATE_HELP = ("Synthetic latencies from rtprobe (e.g. 7 or '1:const,lat=5us'); "
                 "the run is marked simulated.")
POLICY_HELP = ("Run every test as SCHED_OTHER (no real-time permission needed; the "
               "results are then not real-time latencies and are marked so).")
SEVERITY_STYLE = {"ok": "green", "info": "cyan", "warn": "yellow", "bad": "bold red"}


class CliError(Exception):
    """A one-line user error with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def make_console() -> Console:
    """A rich console; 120 columns when stdout is not a terminal (logs, CI, pipes).

    rich assumes 80 columns without a terminal, which folds the summary table's
    names and drops threshold columns; a log has no width limit to respect.
    """
    # emoji=False: a name such as ":smile:" is text, not a picture
    console = Console(emoji=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=120, emoji=False)
    return console


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
        from rtbench.runner import RunError
        from rtbench.store import StoreError
        from rtbench.targets import TargetError, TargetUsageError

        try:
            return func(*args, **kwargs)
        except (CliError, RunError) as exc:
            _say(str(exc))
            sys.exit(exc.code)
        except TargetUsageError as exc:
            _say(str(exc))
            sys.exit(EXIT_USAGE)
        except SuiteError as exc:
            _say(f"suite {exc}")
            sys.exit(EXIT_USAGE)
        except (ProbeNotFound, TargetError) as exc:
            _say(str(exc))
            sys.exit(EXIT_ENV)
        except StoreError as exc:
            _say(str(exc))
            sys.exit(getattr(exc, "code", EXIT_ENV))
        except KeyboardInterrupt:
            _say("interrupted")
            sys.exit(EXIT_INTERRUPTED)
        except (SystemExit, click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except OSError as exc:
            if os.environ.get("RTBENCH_DEBUG"):
                raise
            name = f" {exc.filename}" if exc.filename else ""
            _say(f"cannot access{name}: {exc.strerror or exc}")
            # a path that cannot exist is the user's to fix; a refusing machine is not
            sys.exit(EXIT_USAGE if exc.errno in _BAD_PATH_ERRNOS else EXIT_ENV)
        except Exception as exc:  # the last net: one line, never a traceback
            if os.environ.get("RTBENCH_DEBUG"):
                raise
            _say(f"internal error ({type(exc).__name__}: {_one_line(exc)}); "
                 "please report it (RTBENCH_DEBUG=1 shows the traceback)")
            sys.exit(EXIT_ENV)

    return wrapper  # type: ignore[return-value]


def _one_line(exc: BaseException) -> str:
    """The first line of an exception's text, at most 300 characters."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def _say(message: str) -> None:
    """Print one error line on stderr, its text stripped of terminal controls."""
    line = " ".join(for_terminal(message).split("\n"))
    click.echo(f"rtbench: {line[:2000]}", err=True)


class RtbenchGroup(click.Group):
    """The top-level group: click's usage errors become one line and exit 2."""

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        """Run the command line; a usage error is one `rtbench: ...` line, exit 2."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        argv = sys.argv[1:] if args is None else list(args)
        for arg in argv:
            if isinstance(arg, str) and "\x00" in arg:
                click.echo(f"rtbench: argument {for_terminal(arg)!r} contains a NUL byte",
                           err=True)
                sys.exit(EXIT_USAGE)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            where = " ".join(["rtbench", *(ctx.command_path.split()[1:] if ctx else [])])
            line = " ".join(for_terminal(exc.format_message()).split())
            click.echo(f"{where}: {line} (see --help)", err=True)
            sys.exit(EXIT_USAGE)
        except click.Abort:
            click.echo("rtbench: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        sys.exit(code if isinstance(code, int) else 0)


# A stored run's id, or a count: what fits a 64-bit signed database integer.
RUN_ID = click.IntRange(min=1, max=2**63 - 1)


def open_store(url: str | None) -> Any:
    """Open the results database (created and migrated on first use).

    Runs whose rtbench died (SIGKILL, power loss, a closed terminal) are marked
    `abandoned` on the way, and what such a process left behind is cleaned up.
    """
    from rtbench.store import Store, StoreError

    store = Store.open(url)
    recover_stale(store, StoreError)
    return store


def recover_stale(store: Any, store_error: type[Exception]) -> None:
    """Mark the runs of dead owners abandoned; kill their loads; remove their io dirs."""
    from rtbench.owner import clean_stale_load_dirs, kill_orphaned_loads, owner_dead

    kill_orphaned_loads()
    clean_stale_load_dirs(data_dir() / "loads")
    # a read-only database: nothing can be marked, the command still works
    with contextlib.suppress(store_error):
        store.mark_abandoned(owner_dead)


def stored_run(run_id: int, db_url: str | None) -> Any:
    """Everything stored about run_id; a run not in the database is a usage error."""
    from rtbench.store import StoreError

    store = open_store(db_url)
    try:
        return store.get_run(run_id)
    except StoreError as exc:
        fail(str(exc), EXIT_USAGE)
    finally:
        store.close()


@click.group(cls=RtbenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rtbench")
def main() -> None:
    """rtbench: measure real-time latency with rtprobe, keep every run, report it.

    \b
    Examples:
      rtbench run                  # the quick suite on this machine
      rtbench ls                   # stored runs
      rtbench show 3               # everything stored about run 3
      rtbench report 3 -o r3.html  # self-contained HTML report
    """


def _window_ns(text: str) -> int:
    """The --window value in ns (a bare number is seconds), or exit 2 with one line."""
    from rtbench.suites import parse_duration_ns

    try:
        return parse_duration_ns(text, "s")
    except ValueError as exc:
        fail(f"--window: {exc}", EXIT_USAGE)


def open_target(uri: str | None, probe_path: str | None) -> Target:
    """The target named by uri (default local); --probe, if given, is the rtprobe to use."""
    from rtbench.targets import open_target as open_uri

    return open_uri(uri, probe=Path(probe_path) if probe_path else None)


@main.command()
@click.argument("suite", default="quick")
@click.option("--scale", type=float, default=1.0, show_default=True, help=SCALE_HELP)
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@click.option("--target", "target_uri", metavar="URI", help=TARGET_HELP)
@click.option("--probe", "probe_path", metavar="PATH", help=PROBE_HELP)
@click.option("--simulate", metavar="SEED[:DIST]", help=SIMULATE_HELP)
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the HTML report here (default: <data dir>/reports/run-ID.html).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report.")
@click.option("--policy", type=click.Choice(["other"]), help=POLICY_HELP)
@click.option("--window", metavar="DURATION",
              help="Period each window record covers (whole seconds, 1s to 1h; default 1s): "
                   "wider windows send fewer records, for a slow serial line.")
@click.option("--push", "push_url", metavar="URL",
              help="Upload the stored run to this rtbench serve afterwards (token: "
                   "RTBENCH_TOKEN or --token-file).")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path),
              help="File holding the upload token for --push.")
@click.option("--power-cycle", is_flag=True,
              help="Power-cycle the board before the run (labgrid targets with a power "
                   "driver only).")
@handle_errors
def run(suite: str, scale: float, db_url: str | None, target_uri: str | None,
        probe_path: str | None, simulate: str | None, report_path: Path | None,
        no_report: bool, policy: str | None, window: str | None, push_url: str | None,
        token_file: Path | None, power_cycle: bool) -> None:
    """Run a suite (built-in name or TOML file; default: quick) on a target
    (default: this machine).

    \b
    Examples:
      rtbench run                          # quick suite, default database
      rtbench run smoke --scale 0.5        # half-length smoke suite
      rtbench run my-suite.toml --db sqlite:////tmp/lab.db
      rtbench run smoke --simulate 1:const,lat=5us --no-report
      rtbench run --policy other           # as a user without RT permission
      rtbench run smoke --target labgrid:board-3 --power-cycle
      rtbench run --target serial:///dev/ttyUSB0 --window 5s   # a slow line

    Exit codes: 0 ok, 1 a threshold failed, 2 bad suite or usage, 3 the
    environment cannot run it, 4 interrupted (the partial run is kept).
    """
    from rtbench.commands._run_support import fmt_seconds, plural
    from rtbench.report.live import LiveProgress
    from rtbench.runner import Runner
    from rtbench.runsave import MeasurementNotStored

    check_run_options(scale, report_path, no_report)
    push_token = _push_token(push_url, token_file)
    loaded = load_suite(suite, scale)
    if window is not None:
        loaded = loaded.with_window(_window_ns(window))
    if report_path is not None:
        check_report_path(report_path)
    chosen = open_target(target_uri, probe_path)
    if power_cycle:
        chosen.enable_power_cycle()
    with chosen as target:
        console = make_console()
        live = LiveProgress(console)
        runner = Runner(target, simulate=simulate, on_event=live, policy=policy)
        runner.validate(loaded)
        store = open_store(db_url)
        try:
            console.print(f"rtbench {__version__}: suite [bold]{for_rich(loaded.name)}[/bold] "
                          f"({plural(len(loaded.scenarios), 'scenario')} x "
                          f"{plural(len(loaded.tests), 'test')}, "
                          f"about {fmt_seconds(loaded.estimated_seconds())}), "
                          f"database {for_rich(store.url)}", highlight=False)
            if policy == "other":
                console.print("[yellow]--policy other: every test runs as SCHED_OTHER; the "
                              "results are not real-time latencies[/yellow]")
            try:
                with live:
                    outcome = runner.run(loaded, store, sys.argv)
            except MeasurementNotStored as exc:
                keep_recovery(exc)
            detail = store.get_run(outcome.run_id)
        finally:
            store.close()
    from rtbench.analysis.verdict import verdict_of
    from rtbench.report.terminal import load_table, summary_table
    from rtbench.report.verdict import verdict_text

    console.print(summary_table(detail))
    loads = load_table(detail)
    if loads is not None:
        console.print(loads)
    console.print(verdict_text(verdict_of(detail, outcome.warnings)))
    if not no_report:
        path = report_path or data_dir() / "reports" / f"run-{outcome.run_id}.html"
        try:
            write_report(detail, path)
        except CliError as exc:
            console.print(f"run {outcome.run_id}: {outcome.status}", highlight=False)
            fail(f"{exc}; run {outcome.run_id} is stored (`rtbench report "
                 f"{outcome.run_id} -o FILE` writes its report elsewhere)", exc.code)
        console.print(f"report: {for_rich(path)}", highlight=False)
    console.print(f"run {outcome.run_id}: {outcome.status}", highlight=False)
    if push_url and push_token:
        _push_after_run(detail, push_url, push_token)
    sys.exit(outcome.exit_code)


def check_run_options(scale: float, report_path: Path | None, no_report: bool) -> None:
    """The options `run` and `fleet` share make sense together (exit 2 if not)."""
    if not (math.isfinite(scale) and scale > 0):
        fail(f"--scale {scale}: must be a finite number > 0", EXIT_USAGE)
    if no_report and report_path is not None:
        fail("--no-report and --report contradict each other; give one of them", EXIT_USAGE)


def _push_token(push_url: str | None, token_file: Path | None) -> str | None:
    """The upload token for --push, checked before anything runs (None without --push)."""
    if not push_url:
        if token_file is not None:
            fail("--token-file is only used with --push URL", EXIT_USAGE)
        return None
    from rtbench.server.client import PushError, read_token

    try:
        return read_token(token_file)
    except PushError as exc:
        fail(f"--push: {exc}", exc.code)


def _push_after_run(detail: Any, push_url: str, token: str) -> None:
    """Upload the finished run; a failure keeps it stored here and exits 3."""
    from rtbench.server.client import PushError, push_run

    try:
        pushed = push_run(detail, push_url, token)
    except PushError as exc:
        fail(f"{exc}; the run is stored here, retry with 'rtbench push {detail.id} "
             f"--server {push_url}'", EXIT_ENV)
    click.echo(f"pushed run {detail.id} -> {pushed.url}")


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


@main.command()
@click.argument("name", required=False)
@click.option("--scale", type=float, default=1.0, show_default=True,
              help="Show durations multiplied by this factor.")
@handle_errors
def suites(name: str | None, scale: float) -> None:
    """List the built-in suites, or validate and show one (name or file).

    \b
    Examples:
      rtbench suites               # built-in suites with their length
      rtbench suites quick         # the scenarios and tests of quick
      rtbench suites ./my.toml     # validate a suite file
    """
    from rtbench.commands._run_support import expected_text
    from rtbench.report.layout import Column, FittedTable
    from rtbench.report.suitetext import load_text, params_text

    console = make_console()
    if name is None:
        rows = []
        for suite_name, path in builtin_suites().items():
            suite = load_suite(str(path), scale)
            rows.append([suite_name, suite.description, str(len(suite.scenarios)),
                         str(len(suite.tests)), f"{suite.estimated_seconds():.0f} s"])
        console.print(FittedTable(
            [Column("name", "left", True), Column("description", "left", True),
             Column("scenarios"), Column("tests"), Column("about")], rows,
            title="built-in suites", box=box.HEAVY_HEAD))
        return
    suite = load_suite(name, scale)
    console.print(f"[bold]{for_rich(suite.name)}[/bold] ({for_rich(suite.source)}): "
                  f"{for_rich(suite.description)}",
                  highlight=False)
    console.print(f"scale {suite.scale:g}, about {suite.estimated_seconds():.0f} s")
    scen_rows = [[s.name, "\n".join(load_text(ld.describe()) for ld in s.loads) or "none",
                  s.load_cpus or "auto", s.measure_cpus or "auto", f"{s.settle_ns / 1e9:g}"]
                 for s in suite.scenarios]
    console.print(FittedTable(
        [Column("name", "left", True), Column("loads", "left", True),
         Column("load cpus", "left", True), Column("measure cpus", "left", True),
         Column("settle s")], scen_rows, title="scenarios", box=box.HEAVY_HEAD,
        caption="auto: with loads in the suite and >= 4 CPUs, loads on the first half of "
                "the CPUs and tests on the rest; else shared"))
    test_rows = []
    for t in suite.tests:
        duration = f"{t.duration_ns / 1e9:g}" if t.traits().timed \
            else f"~{t.expected_seconds():g} (fixed work)"
        test_rows.append([t.name, t.test, duration, f"{t.warmup_ns / 1e9:g}",
                          expected_text(t),
                          ",".join(f"{x / 1000:g}" for x in t.thresholds_ns) or "-",
                          params_text(t.params)])
    console.print(FittedTable(
        [Column("name", "left", True), Column("test", "left"), Column("duration s", "left"),
         Column("warmup s"), Column("expected s", "left", True),
         Column("thresholds us", "left", True), Column("params", "left", True)],
        test_rows, title="tests (run in every scenario)", box=box.HEAVY_HEAD))


@main.command()
@click.option("--target", "target_uri", metavar="URI", help=TARGET_HELP)
@click.option("--probe", "probe_path", metavar="PATH", help=PROBE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON.")
@handle_errors
def preflight(target_uri: str | None, probe_path: str | None, as_json: bool) -> None:
    """Check the system knobs that decide real-time results on a target
    (default: this machine).

    \b
    Examples:
      rtbench preflight
      rtbench preflight --json > facts.json
    """
    from rtbench.preflight import run_preflight
    from rtbench.targets.procstat import read_steal

    with open_target(target_uri, probe_path) as target:
        facts = run_preflight(target.sysinfo(), read_steal(target.read_file))
        hostname = target.hostname()
    if as_json:
        click.echo(json.dumps(facts, indent=2))
        return
    from rtbench.report.layout import Column, FittedTable

    rows: list[list[str | Text]] = [
        [str(fact["name"]), str(fact["value"]),
         Text(str(fact["severity"]), style=SEVERITY_STYLE.get(fact["severity"], "")),
         str(fact["advice"])] for fact in facts]
    make_console().print(FittedTable(
        [Column("knob", "left", True), Column("value", "left", True),
         Column("severity", "left"), Column("advice", "left", True)], rows,
        title=f"preflight: {hostname}", box=box.HEAVY_HEAD))


@main.command(name="ls")
@click.argument("selector", required=False)
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@click.option("--limit", type=RUN_ID, default=50, show_default=True,
              help="Show at most this many runs, newest first.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the runs as a JSON array (shape in docs/commands.md).")
@handle_errors
def list_runs(selector: str | None, db_url: str | None, limit: int, as_json: bool) -> None:
    """List stored runs, newest first; SELECTOR keeps the matching ones
    (host=box,kernel~rt,board=imx31: = equal, ~ contains, != / !~ the opposite).

    \b
    Examples:
      rtbench ls
      rtbench ls --limit 5 --db /tmp/lab.db
      rtbench ls --json
      rtbench ls kernel~rt,board=imx31
    """
    from rtbench.analysis.select import SelectError, matches, parse_spec
    from rtbench.commands._run_support import run_summary_json
    from rtbench.report.layout import Column, FittedTable

    conditions: tuple[tuple[str, str, str], ...] = ()
    if selector is not None:
        try:
            spec = parse_spec(selector)
        except SelectError as exc:
            fail(str(exc), EXIT_USAGE)
        if spec.kind != "selector":
            fail(f"ls {selector!r}: give a selector such as host=box,kernel~rt", EXIT_USAGE)
        conditions = spec.conditions
    store = open_store(db_url)
    try:
        runs = store.list_runs(2**62 if conditions else limit)
    finally:
        store.close()
    runs = [r for r in runs if matches(r, conditions)][:limit]
    if as_json:
        click.echo(json.dumps([run_summary_json(r) for r in runs], indent=1))
        return
    from rtbench.report.format import fmt_target

    columns = [Column("id"), Column("started (UTC)", "left"), Column("host", "left", True),
               Column("target", "left", True), Column("kernel", "left", True),
               Column("suite", "left", True),
               Column("status", "left"), Column("worst max us"), Column("tags", "left", True)]
    rows = []
    for r in runs:
        worst = "-" if r.worst_max_ns is None else f"{r.worst_max_ns / 1000:,.1f}"
        suite = f"{r.suite} (simulated)" if r.simulated else r.suite
        rows.append([str(r.id), r.started_at.strftime("%Y-%m-%d %H:%M:%S"), r.hostname,
                     fmt_target(r.target, r.tags), r.kernel, suite, r.status, worst,
                     " ".join(f"{k}={v}" for k, v in sorted(r.tags.items()))])
    make_console().print(FittedTable(columns, rows, title=f"runs in {store.url}"))


RUN_ARG_HELP = ("RUN: an id, latest, latest~N, a selector such as host=box,kernel~rt, "
                "or ref:NAME for a published reference run (rtbench ref ls).")


@main.command(epilog=RUN_ARG_HELP)
@click.argument("run", metavar="RUN")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@click.option("--json", "as_json", is_flag=True,
              help="Print the whole run as an rtbench-run/1 JSON document.")
@handle_errors
def show(run: str, db_url: str | None, as_json: bool) -> None:
    """Print everything stored about a run.

    \b
    Examples:
      rtbench show 3
      rtbench show latest
      rtbench show 3 --json > run3.json
    """
    from rtbench.commands._runs import stored_id
    from rtbench.report.terminal import show_run

    store = open_store(db_url)
    try:
        detail = store.get_run(stored_id(store, run))
    finally:
        store.close()
    if as_json:
        from rtbench.interop.runjson import dumps

        click.echo(dumps(detail))
        return
    show_run(make_console(), detail)


@main.command(epilog=RUN_ARG_HELP)
@click.argument("runs", metavar="RUN...", nargs=-1, required=True)
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              help="HTML file to write (default: <data dir>/reports/run-RUN.html, or "
                   "compare-RUN-RUN....html for several runs).")
@click.option("--layout", "layout", metavar="STUDY",
              help="Also print (and put in the HTML) a published study's own table with "
                   "these runs beside the published figures: loongson2f, s3c24a0, "
                   "arm-preemptrt, celleb, lrtai.")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@handle_errors
def report(runs: tuple[str, ...], output: Path | None, layout: str | None,
           db_url: str | None) -> None:
    """Write a self-contained HTML report of a run, or of several runs compared
    (differences with intervals, environment differences, advisor, figures).

    \b
    Examples:
      rtbench report 3 -o run3.html
      rtbench report latest~1 latest ref:loongson2f -o compare.html
      rtbench report latest --layout loongson2f    # the Loongson table, ours beside theirs
      rtbench report 4 5 --layout celleb           # vanilla vs PREEMPT_RT, the IBM table
    """
    from rtbench.commands._runs import resolve_all, views

    if output is not None:
        from rtbench.commands._output import check_writable

        check_writable(output, (".html", ".htm"))
    if layout is not None:
        report_layout(runs, layout, output, db_url)
        return
    store = open_store(db_url)
    try:
        named = resolve_all(store, runs)
        single = store.get_run(named[0]) if len(named) == 1 and isinstance(named[0], int) \
            else None
        chosen = [] if single is not None else views(store, runs)
    finally:
        store.close()
    if single is not None:
        path = output or data_dir() / "reports" / f"run-{single.id}.html"
        write_report(single, path)
    else:
        from rtbench.analysis.compare import compare
        from rtbench.report import compare_html

        if all(v.published for v in chosen):
            fail("a report needs at least one measured run; 'rtbench ref show NAME' shows "
                 "a published one", EXIT_USAGE)
        name = "-".join(v.label.replace("run ", "").replace(":", "_") for v in chosen)
        path = output or data_dir() / "reports" / f"compare-{name}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        compare_html.write(compare(chosen), path)
    click.echo(f"report: {path}")


def report_layout(runs: tuple[str, ...], name: str, output: Path | None,
                  db_url: str | None) -> None:
    """`report --layout`: print a study's table for stored runs and write the HTML."""
    from rtbench.analysis.layouts import LayoutError, build_layout
    from rtbench.commands._runs import resolve_all
    from rtbench.reference import reference_runs
    from rtbench.report.html import write_html_report, write_layout_page
    from rtbench.report.layouts import layout_html, layout_renderable

    store = open_store(db_url)
    try:
        named = resolve_all(store, runs)
        if not all(isinstance(n, int) for n in named):
            fail(f"--layout {name}: name stored runs only; the study's published figures "
                 "are added beside them", EXIT_USAGE)
        details = [store.get_run(n) for n in named]
    finally:
        store.close()
    try:
        built = build_layout(name, details, reference_runs())
    except LayoutError as exc:
        fail(str(exc), EXIT_USAGE)
    make_console().print(layout_renderable(built))
    section = layout_html(built)
    if len(details) == 1:
        path = output or data_dir() / "reports" / f"run-{details[0].id}-{name}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_html_report(details[0], path, [section])
    else:
        ids = "-".join(str(d.id) for d in details)
        path = output or data_dir() / "reports" / f"{name}-{ids}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_layout_page(built.title, [section], path)
    click.echo(f"report: {path}")


@main.group()
def db() -> None:
    """The results database: where it is, bring its schema up to date.

    \b
    Examples:
      rtbench db path
      rtbench db migrate --db postgresql+psycopg://lab@dbhost/rtbench
    """


@db.command(name="path")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
def db_path(db_url: str | None) -> None:
    """Print the database URL in use.

    \b
    Example:
      RTBENCH_DB=sqlite:////tmp/x.db rtbench db path
    """
    from rtbench.store import db_url_of, default_db_url

    click.echo(db_url_of(db_url or default_db_url()))


@db.command(name="migrate")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@handle_errors
def db_migrate(db_url: str | None) -> None:
    """Create the database or upgrade its schema to the newest version.

    \b
    Example:
      rtbench db migrate
    """
    store = open_store(db_url)
    store.close()
    click.echo(f"database {store.url} is up to date")


def _register_commands() -> None:
    """Add the command modules of rtbench/commands (one module per command family)."""
    from rtbench.commands import register_all

    register_all(main)


_register_commands()
