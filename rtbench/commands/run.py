"""`rtbench run`: a suite on a target into the store, with the live view and the report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rtbench import EXIT_ENV, EXIT_NOT_AS_DEFINED, EXIT_USAGE, __version__, data_dir
from rtbench.commands._common import (
    BOARD_HELP,
    DB_HELP,
    POLICY_HELP,
    PROBE_HELP,
    SCALE_HELP,
    SIMULATE_HELP,
    CliError,
    TargetOption,
    check_board,
    check_report_path,
    check_run_options,
    fail,
    handle_errors,
    keep_recovery,
    make_console,
    open_store,
    open_target,
    write_report,
)

if TYPE_CHECKING:
    from rtbench.suites.model import Suite


def register(main: click.Group) -> None:
    """Add `run`."""
    main.add_command(run)


@click.command()
@click.argument("suite", default="quick")
@click.option("--scale", type=float, default=1.0, show_default=True, help=SCALE_HELP)
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@click.option("--target", "target_uri", metavar="URI", cls=TargetOption)
@click.option("--board", "board", metavar="NAME", help=BOARD_HELP)
@click.option("--probe", "probe_path", metavar="PATH", help=PROBE_HELP)
@click.option("--simulate", metavar="SEED[:DIST]", help=SIMULATE_HELP)
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the HTML report here (default: <data dir>/reports/run-ID.html).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report.")
@click.option("--policy", type=click.Choice(["other"]), help=POLICY_HELP)
@click.option("--window", metavar="DURATION",
              help="Period each window record covers (whole milliseconds, 100ms to 1h; "
                   "default 1s): "
                   "wider windows send fewer records, for a slow serial line.")
@click.option("--trace", type=click.Choice(["on", "auto", "off"]), is_flag=False,
              flag_value="on", default=None, metavar="[=on|auto|off]",
              help="Kernel trace events of each spike (rtprobe --trace; cyclic, wakeup, "
                   "noise): on (the default of a bare --trace) stops when tracefs cannot "
                   "be used, auto runs untraced then; overrides the suite's `trace` keys.")
@click.option("--push", "push_url", metavar="URL",
              help="Upload the stored run to this rtbench serve afterwards (token: "
                   "RTBENCH_TOKEN or --token-file).")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path),
              help="File holding the upload token for --push.")
@click.option("--accept-undefined", is_flag=True, envvar="RTBENCH_ACCEPT_UNDEFINED",
              help="Exit as if every scenario happened as defined: a run whose loads fell "
                   "short of their target or whose idle CPUs were busy exits 0 (or 1) "
                   "instead of 6; its verdict still says NOT AS DEFINED (default: "
                   "RTBENCH_ACCEPT_UNDEFINED=1).")
@click.option("--power-cycle", is_flag=True,
              help="Power-cycle the board before the run (labgrid targets with a power "
                   "driver only).")
@handle_errors
def run(suite: str, scale: float, db_url: str | None, target_uri: str | None,
        board: str | None, probe_path: str | None, simulate: str | None,
        report_path: Path | None, no_report: bool, policy: str | None, window: str | None,
        trace: str | None, push_url: str | None, token_file: Path | None,
        power_cycle: bool, accept_undefined: bool) -> None:
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
      rtbench run smoke --trace            # kernel events of every spike
      rtbench run smoke --accept-undefined # a busy CI host: gate on thresholds only

    Exit codes: 0 ok, 1 a threshold failed, 2 bad suite or usage, 3 the
    environment cannot run it, 4 interrupted (the partial run is kept), 5 a
    measurement without the evidence to decide it (no samples, too few), 6 a
    scenario not as defined (a load short of its target, a busy idle; not a pass
    unless --accept-undefined). See docs/commands.md "Exit codes and errors".
    """
    from rtbench.commands._run_support import plural
    from rtbench.report.live import LiveProgress
    from rtbench.report.text import for_rich
    from rtbench.run.runner import Runner
    from rtbench.run.save import MeasurementNotStored
    from rtbench.suites.parse import load_suite

    check_run_options(scale, report_path, no_report)
    check_board(board)
    token = push_token(push_url, token_file)
    loaded = load_suite(suite, scale)
    if window is not None:
        loaded = loaded.with_window(window_ns_option(window))
    if trace is not None:
        loaded = traced_suite(loaded, trace)
    if report_path is not None:
        check_report_path(report_path)
    chosen = open_target(target_uri, probe_path)
    if power_cycle:
        chosen.enable_power_cycle()
    with chosen as target:
        console = make_console()
        live = LiveProgress(console)
        runner = Runner(target, simulate=simulate, on_event=live, policy=policy,
                        board=board, accept_undefined=accept_undefined)
        runner.validate(loaded)
        loaded = check_tracing(target, loaded, simulate)
        store = open_store(db_url)
        try:
            console.print(f"rtbench {__version__}: suite [bold]{for_rich(loaded.name)}[/bold] "
                          f"({plural(len(loaded.scenarios), 'scenario')} x "
                          f"{plural(len(loaded.tests), 'test')}, "
                          f"{run_estimate(loaded, target, runner).text()}), "
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
        drawn = sum(1 for sc in detail.scenarios for m in sc.measurements
                    if any(se.hist for se in m.series))
        # drawing the figures takes seconds (about 15 s for the quick suite on a busy
        # 2-CPU machine): say so instead of going quiet
        console.print(f"writing the HTML report ({drawn} figure{'' if drawn == 1 else 's'}, "
                      "--no-report skips it) ...", highlight=False)
        try:
            write_report(detail, path)
        except CliError as exc:
            console.print(f"run {outcome.run_id}: {outcome.status}", highlight=False)
            # the run is stored: exit 2 would say nothing ran (an explicit --report
            # path was checked before the run), so the report's failure is the machine's
            fail(f"{exc}; run {outcome.run_id} is stored (`rtbench report "
                 f"{outcome.run_id} -o FILE` writes its report elsewhere)", EXIT_ENV)
        console.print(f"report: {for_rich(path)}", highlight=False)
    console.print(f"run {outcome.run_id}: {outcome_text(outcome, runner.not_as_defined)}",
                  highlight=False)
    if push_url and token:
        push_after_run(detail, push_url, token)
    sys.exit(outcome.exit_code)


def run_estimate(suite: Suite, target: Any, runner: Any) -> Any:
    """How long the run will take on this target (docs/commands.md "How long a run
    takes"): its tests plus the fixed costs of its transport, a range."""
    from rtbench.run.checks import allowed_cpus
    from rtbench.run.estimate import estimate_run

    baud = getattr(target, "baud", None)
    return estimate_run(suite, target.name, baud=baud if isinstance(baud, int) else None,
                        cpus=len(allowed_cpus(runner.sysinfo())) or 1)


def outcome_text(outcome: Any, not_as_defined: list[str]) -> str:
    """The run's closing words: its status, and what a scenario not as defined did to
    the exit code (6, or accepted with --accept-undefined)."""
    if not not_as_defined or outcome.status != "ok":
        return str(outcome.status)
    if outcome.exit_code == EXIT_NOT_AS_DEFINED:
        return ("NOT AS DEFINED, exit 6 (--accept-undefined exits by the thresholds "
                "alone)")
    return "ok; scenarios not as defined, accepted with --accept-undefined"


def check_tracing(target: Any, suite: Suite, simulate: str | None) -> Suite:
    """Before anything is stored: whether the target's rtprobe can trace, when a test of
    the suite asks for it.  --trace=on that cannot: exit 2 with rtprobe's reason;
    --trace=auto that cannot: one line saying the run goes on untraced, and why."""
    modes = {t.params.get("trace") for t in suite.tests} - {None, "off"}
    if not modes:
        return suite
    args = ["cyclic", "--trace=on", "--duration", "1ms", "--warmup", "0",
            "--policy", "other", "--no-mlock", "--no-pmqos", "--output", "/dev/null"]
    if simulate:
        args += ["--simulate", simulate]
    done = target.run_probe(args, timeout_s=60.0)
    if done.returncode == 0:
        return suite
    why = trace_refusal(done.stderr) or f"rtprobe exited {done.returncode}"
    if "on" in modes:
        fail(f"--trace: tracing cannot be used on {target.name}: {why}; nothing was run or "
             "stored (--trace=auto runs untraced)", EXIT_USAGE)
    click.echo(f"rtbench: --trace=auto: tracing cannot be used on {target.name}: {why}; "
               "the run goes on untraced", err=True)
    return suite


def trace_refusal(stderr: str) -> str:
    """rtprobe's reason for not tracing, without the advice meant for its own callers
    (rtbench has no --trace-force; root needs no "run as root")."""
    import re

    lines = [ln for ln in stderr.splitlines() if "--trace" in ln] or stderr.splitlines()
    text = lines[-1].strip() if lines else ""
    text = re.sub(r"^rtprobe: --trace(=on)?: ", "", text)
    text = re.sub(r" \((run as root, or )?use --trace=auto to run untraced\)$", "", text)
    return re.sub(r" or pass --trace-force$", "", text)[:300]


def window_ns_option(text: str) -> int:
    """The --window value in ns (a bare number is seconds), or exit 2 with one line."""
    from rtbench.suites.parse import parse_duration_ns

    try:
        return parse_duration_ns(text, "s")
    except ValueError as exc:
        fail(f"--window: {exc}", EXIT_USAGE)


def traced_suite(suite: Suite, mode: str) -> Suite:
    """The suite with every test that offers --trace tracing as mode; exit 2 with one
    line when none of its tests does."""
    if not any("trace" in t.traits().options for t in suite.tests):
        fail(f"--trace: no test of suite {suite.name} offers it (cyclic, wakeup and noise "
             "do); drop --trace", EXIT_USAGE)
    return suite.with_trace(mode)


def push_token(push_url: str | None, token_file: Path | None) -> str | None:
    """The upload token for --push, checked before anything runs (None without --push)."""
    if not push_url:
        if token_file is not None:
            fail("--token-file is only used with --push URL", EXIT_USAGE)
        return None
    from rtbench.server.client import PushError, check_server_url, read_token

    try:
        check_server_url(push_url)
        return read_token(token_file)
    except PushError as exc:
        fail(f"--push: {exc}", exc.code)


def push_after_run(detail: Any, push_url: str, token: str) -> None:
    """Upload the finished run; a failure keeps it stored here and exits 3."""
    from rtbench.server.client import PushError, push_run

    try:
        pushed = push_run(detail, push_url, token)
    except PushError as exc:
        fail(f"{exc}; the run is stored here, retry with 'rtbench push {detail.id} "
             f"--server {push_url}'", EXIT_ENV)
    click.echo(f"pushed run {detail.id} -> {pushed.url}")
