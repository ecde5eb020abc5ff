"""`rtbench rm`: delete stored runs; bulk deletes are a dry run unless --yes."""

from __future__ import annotations

import click

from rtbench import EXIT_USAGE
from rtbench.commands._common import DB_HELP, fail, handle_errors, open_store
from rtbench.commands._removal_list import print_runs
from rtbench.commands._runs import RUN_HELP, resolve_all


def register(main: click.Group) -> None:
    """Add `rm`."""
    main.add_command(rm)


def _is_bulk(texts: tuple[str, ...], count: int) -> bool:
    """More than one run, or any selector: a bulk delete."""
    from rtbench.analysis.select import SelectError, parse_spec

    if count > 1:
        return True
    for text in texts:
        try:
            if parse_spec(text).kind == "selector":
                return True
        except SelectError:
            return True
    return False


@click.command(epilog=RUN_HELP)
@click.argument("runs", metavar="RUN...", nargs=-1, required=True)
@click.option("--yes", is_flag=True,
              help="Really delete a bulk selection (more than one run, or a selector); "
                   "without it, bulk deletes only list what would go.")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@handle_errors
def rm(runs: tuple[str, ...], yes: bool, db_url: str | None) -> None:
    """Delete stored runs and everything stored with them (one transaction).

    \b
    Examples:
      rtbench rm 12                       # one run: deleted at once
      rtbench rm suite=smoke,kernel~6.1   # lists what would go (dry run)
      rtbench rm suite=smoke,kernel~6.1 --yes
      rtbench rm 3 4 5 --yes
    """
    from rtbench.store.removal import delete_runs

    store = open_store(db_url, existing=True)
    try:
        found = resolve_all(store, runs)
        for item in found:
            if not isinstance(item, int):
                fail(f"ref:{item.name} is a published reference run shipped with rtbench; "
                     "it cannot be deleted", EXIT_USAGE)
        ids: list[int] = [int(i) for i in found]
        if _is_bulk(runs, len(ids)) and not yes:
            wanted = set(ids)
            chosen = [r for r in store.list_runs(limit=2**62) if r.id in wanted]
            print_runs(chosen, f"would delete {len(ids)} run(s) (dry run; add --yes to "
                               "delete them)")
            return
        delete_runs(store, ids)
    finally:
        store.close()
    click.echo(f"deleted {len(ids)} run(s): {' '.join(str(i) for i in sorted(ids))}")
