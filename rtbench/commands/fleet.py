"""`rtbench fleet`: one suite on every board of an inventory at once (docs/fleet.md)."""

from __future__ import annotations

import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import click

from rtbench import EXIT_ENV, EXIT_USAGE, data_dir
from rtbench.commands._common import (
    DB_HELP,
    POLICY_HELP,
    SCALE_HELP,
    SIMULATE_HELP,
    CliError,
    check_report_path,
    check_run_options,
    fail,
    handle_errors,
    keep_recovery,
    make_console,
    open_store,
)
from rtbench.run.save import MeasurementNotStored

FLEET_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,100}$")


def register(main: click.Group) -> None:
    """Add `fleet`."""

    @main.command()
    @click.argument("inventory", type=click.Path(dir_okay=False, path_type=Path))
    @click.argument("suite")
    @click.option("--only", multiple=True, metavar="KEY=VALUE",
                  help="Run only the boards with this tag (name=BOARD picks one board); "
                       "repeat to narrow further.")
    @click.option("--db", "db_url", metavar="URL", help=DB_HELP)
    @click.option("--scale", type=float, default=1.0, show_default=True, help=SCALE_HELP)
    @click.option("--simulate", metavar="SEED[:DIST]", help=SIMULATE_HELP)
    @click.option("--policy", type=click.Choice(["other"]), help=POLICY_HELP)
    @click.option("--fleet-id", metavar="ID",
                  help="Tag the runs fleet=ID (default: fleet-<UTC time>-<4 hex digits>).")
    @click.option("--reserve-wait", type=click.FloatRange(min=0), default=0.0,
                  show_default=True, metavar="SECONDS",
                  help="How long to wait for a board someone else has reserved (labgrid "
                       "places) before giving up.")
    @click.option("--report", "report_path",
                  type=click.Path(dir_okay=False, path_type=Path),
                  help="Write the HTML fleet report here (default: "
                       "<data dir>/reports/FLEET-ID.html).")
    @click.option("--no-report", is_flag=True, help="Do not write the HTML fleet report.")
    @click.option("--accept-undefined", is_flag=True, envvar="RTBENCH_ACCEPT_UNDEFINED",
                  help="Exit as if every scenario happened as defined (as rtbench run "
                       "--accept-undefined): a board's loads short of their target do not "
                       "make it exit 6.")
    @handle_errors
    def fleet(inventory: Path, suite: str, only: tuple[str, ...], db_url: str | None,
              scale: float, simulate: str | None, policy: str | None,
              fleet_id: str | None, reserve_wait: float, report_path: Path | None,
              no_report: bool, accept_undefined: bool) -> None:
        """Run a suite on every board of INVENTORY (a TOML file) at once, each board its
        own stored run tagged fleet=ID and board=NAME; then a summary per board and
        scenario and an HTML fleet report.

        \b
        Examples:
          rtbench fleet lab.toml quick
          rtbench fleet lab.toml smoke --only soc=imx8mp --simulate 7
          rtbench fleet lab.toml nightly.toml --fleet-id nightly-2026-11-23 \\
              --db postgresql+psycopg://lab@db/rtbench
          rtbench ls fleet=nightly-2026-11-23

        Exit codes: the worst of the boards' (0 ok, 6 a scenario not as defined,
        1 a threshold failed, 2 bad suite or usage, 3 a board unreachable or lost,
        4 interrupted); 2 for a bad inventory and 3 when a board cannot be reserved,
        with nothing run.
        """
        from rtbench.analysis.fleet import board_summary, fleet_exit_code
        from rtbench.fleet.inventory import InventoryError, load_inventory, select
        from rtbench.report.fleet import FleetProgress, problems, summary_table, write_html
        from rtbench.rtprobe.provider import Probes
        from rtbench.run.fleet import (
            Fleet,
            FleetError,
            FleetSetup,
            new_fleet_id,
            release_all,
            reserve_all,
        )
        from rtbench.suites.parse import load_suite

        check_run_options(scale, report_path, no_report)
        if fleet_id is not None and not FLEET_ID.match(fleet_id):
            fail(f"--fleet-id {fleet_id!r}: use 1-100 letters, digits, _ . : -", EXIT_USAGE)
        try:
            boards = select(load_inventory(inventory), only)
        except InventoryError as exc:
            fail(str(exc), EXIT_USAGE)
        loaded = load_suite(suite, scale)
        if report_path is not None:
            check_report_path(report_path)
        probes = Probes()
        targets = [(board, board.target(probes)) for board in boards]
        store = open_store(db_url)  # created and brought up to date once, here
        store.close()
        setup = FleetSetup(loaded, db_url, fleet_id or new_fleet_id(), list(sys.argv),
                           simulate, policy, _recovery_line, accept_undefined)
        started = datetime.now(timezone.utc)
        console = make_console()
        try:
            reserve_all(targets, reserve_wait)
        except FleetError as exc:
            fail(str(exc), exc.code)
        try:
            console.print(f"fleet [bold]{setup.fleet_id}[/bold]: suite "
                          f"[bold]{_rich(loaded.name)}[/bold] on {len(boards)} boards, "
                          f"database {_rich(store.url)}", highlight=False)
            progress = FleetProgress(console, [b.name for b in boards])
            with progress:
                ends = Fleet(setup, targets, progress).run()
        finally:
            release_all([target for _, target in targets])
        store = open_store(db_url)
        try:
            summaries = [board_summary(end.board, end.status, end.exit_code, end.message,
                                       store.get_run(end.run_id) if end.run_id else None)
                         for end in ends]
        finally:
            store.close()
        code = fleet_exit_code([end.exit_code for end in ends])
        console.print(summary_table(setup.fleet_id, loaded.name, summaries))
        for line in problems(summaries):
            console.print(f"[yellow]{_rich(line)}[/yellow]", highlight=False)
        if not no_report:
            path = report_path or data_dir() / "reports" / f"{setup.fleet_id}.html"
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                write_html(path, setup.fleet_id, loaded.name,
                           started.isoformat(timespec="seconds"), summaries, code)
            except OSError as exc:
                fail(f"cannot write the fleet report {path}: {exc.strerror or exc}; the runs "
                     f"are stored (rtbench ls fleet={setup.fleet_id})", EXIT_ENV)
            console.print(f"report: {_rich(path)}", highlight=False)
        ok = sum(1 for end in ends if end.status == "ok")
        console.print(f"fleet {setup.fleet_id}: {ok} of {len(ends)} boards ok, exit {code}",
                      highlight=False)
        sys.exit(code)


def _rich(value: object) -> str:
    """Text from a file or a board, safe inside rich markup."""
    from rtbench.report.text import for_rich

    return for_rich(value)


def _recovery_line(exc: MeasurementNotStored) -> str:
    """Keep a refused measurement in a recovery file (as `rtbench run` does); the line
    saying where."""
    try:
        keep_recovery(exc)
    except CliError as kept:
        return str(kept)
    return str(exc)  # pragma: no cover - keep_recovery always raises
