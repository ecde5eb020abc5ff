"""`rtbench ls`: the stored runs, newest first, optionally selected."""

from __future__ import annotations

import json

import click

from rtbench import EXIT_USAGE
from rtbench.commands._common import DB_HELP, RUN_ID, fail, handle_errors, make_console, open_store


def register(main: click.Group) -> None:
    """Add `ls`."""
    main.add_command(list_runs)


@click.command(name="ls")
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
    from rtbench.report.target import fmt_target

    conditions: tuple[tuple[str, str, str], ...] = ()
    if selector is not None:
        try:
            spec = parse_spec(selector)
        except SelectError as exc:
            fail(str(exc), EXIT_USAGE)
        if spec.kind != "selector":
            fail(f"ls {selector!r}: give a selector such as host=box,kernel~rt", EXIT_USAGE)
        conditions = spec.conditions
    store = open_store(db_url, reading=True)
    try:
        runs = store.list_runs(2**62 if conditions else limit)
    finally:
        store.close()
    runs = [r for r in runs if matches(r, conditions)][:limit]
    if as_json:
        click.echo(json.dumps([run_summary_json(r) for r in runs], indent=1))
        return
    columns = [Column("id"), Column("started (UTC)", "left"), Column("board", "left", True),
               Column("host", "left", True),
               Column("target", "left", True), Column("kernel", "left", True),
               Column("suite", "left", True),
               Column("status", "left"), Column("worst max µs", abbrev="max µs")]
    # the tags column only when a run has tags (an empty column costs the others room)
    tagged = any(r.tags for r in runs)
    if tagged:
        columns.append(Column("tags", "left", True))
    rows = []
    for r in runs:
        worst = "-" if r.worst_max_ns is None else f"{r.worst_max_ns / 1000:,.1f}"
        suite = f"{r.suite} (simulated)" if r.simulated else r.suite
        suite = f"{suite} (emulated)" if r.emulated else suite
        rows.append([str(r.id), r.started_at.strftime("%Y-%m-%d %H:%M:%S"), r.board,
                     r.hostname,
                     fmt_target(r.target, r.tags), r.kernel, suite, r.status, worst])
        if tagged:
            rows[-1].append(" ".join(f"{k}={v}" for k, v in sorted(r.tags.items())))
    make_console().print(FittedTable(columns, rows, title=f"runs in {store.url}"))

