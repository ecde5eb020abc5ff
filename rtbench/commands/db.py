"""`rtbench db`: where the results database is, and bringing its schema up to date."""

from __future__ import annotations

import click

from rtbench.commands._common import DB_HELP, handle_errors, open_store


def register(main: click.Group) -> None:
    """Add the `db` group."""
    main.add_command(db)


@click.group()
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

