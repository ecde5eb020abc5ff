"""`rtbench show`: everything stored about one run, as tables or as JSON."""

from __future__ import annotations

import click

from rtbench.commands._common import DB_HELP, RUN_ARG_HELP, handle_errors, make_console, open_store


def register(main: click.Group) -> None:
    """Add `show`."""
    main.add_command(show)


@click.command(epilog=RUN_ARG_HELP)
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

    store = open_store(db_url, reading=True)
    try:
        detail = store.get_run(stored_id(store, run))
    finally:
        store.close()
    if as_json:
        from rtbench.interop.runjson import dumps

        click.echo(dumps(detail))
        return
    show_run(make_console(), detail)

