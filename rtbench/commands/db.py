"""`rtbench db`: where the results database is, bringing its schema up to date, and
pruning old runs."""

from __future__ import annotations

import re
from datetime import timedelta

import click

from rtbench import EXIT_USAGE
from rtbench.commands._common import DB_HELP, fail, handle_errors, open_store


def register(main: click.Group) -> None:
    """Add the `db` group."""
    main.add_command(db)


@click.group()
def db() -> None:
    """The results database: where it is, bring its schema up to date, prune old runs.

    \b
    Examples:
      rtbench db path
      rtbench db migrate --db postgresql+psycopg://lab@dbhost/rtbench
      rtbench db prune --older-than 90d --yes
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



def _age(text: str) -> timedelta:
    """An age such as 90d, 12w or 36h (exit 2 otherwise)."""
    match = re.fullmatch(r"\s*(\d{1,6})\s*([hdw])\s*", text)
    if not match or int(match.group(1)) == 0:
        fail(f"--older-than {text!r}: write a whole number of hours, days or weeks, "
             "e.g. 90d, 12w or 36h", EXIT_USAGE)
    unit = {"h": "hours", "d": "days", "w": "weeks"}[match.group(2)]
    return timedelta(**{unit: int(match.group(1))})


@db.command(name="prune")
@click.option("--older-than", "older_than", required=True, metavar="AGE",
              help="Delete runs started longer ago than AGE (90d, 12w, 36h).")
@click.option("--yes", is_flag=True, help="Really delete (default: list what would go).")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@handle_errors
def db_prune(older_than: str, yes: bool, db_url: str | None) -> None:
    """Retention: delete runs older than AGE, except runs tagged keep or baseline and
    runs still running; a dry run unless --yes (one transaction).

    \b
    Examples:
      rtbench db prune --older-than 90d          # lists what would go
      rtbench db prune --older-than 90d --yes
      rtbench tag 12 keep=yes                    # run 12 is never pruned
    """
    from rtbench.commands._removal_list import print_runs
    from rtbench.store.removal import cutoff_of, expired_runs, prune

    cutoff = cutoff_of(_age(older_than))
    store = open_store(db_url, existing=True)
    try:
        if not yes:
            runs = expired_runs(store, cutoff)
            if runs:
                print_runs(runs, f"would delete {len(runs)} run(s) started before "
                                 f"{cutoff:%Y-%m-%d %H:%M} UTC (dry run; add --yes)")
            else:
                click.echo(f"no run to prune: none started before {cutoff:%Y-%m-%d %H:%M} "
                           "UTC but those tagged keep or baseline")
            return
        gone = prune(store, cutoff)
    finally:
        store.close()
    click.echo(f"deleted {len(gone)} run(s) started before {cutoff:%Y-%m-%d %H:%M} UTC")
