"""`rtbench tag`: label a stored run with key=value tags (selectors can then find it)."""

from __future__ import annotations

import re

import click

from rtbench import EXIT_USAGE
from rtbench.commands._common import DB_HELP, fail, handle_errors, open_store
from rtbench.commands._runs import RUN_HELP, stored_id

_TAG = re.compile(r"^([A-Za-z0-9_.:-]+)=(.*)$")
RESERVED = ("board", "host", "kernel", "suite", "status", "simulated")


def register(main: click.Group) -> None:
    """Add `tag`."""

    @main.command(epilog=RUN_HELP)
    @click.argument("run", metavar="RUN")
    @click.argument("tags", nargs=-1, metavar="KEY=VALUE...")
    @click.option("--remove", multiple=True, metavar="KEY", help="Remove this tag (repeatable).")
    @click.option("--db", "db_url", metavar="URL", help=DB_HELP)
    @handle_errors
    def tag(run: str, tags: tuple[str, ...], remove: tuple[str, ...], db_url: str | None) -> None:
        """Add tags to a run, or remove them; print the run's tags.

        \b
        Examples:
          rtbench tag latest lab=adelaide kernel_config=rt-full
          rtbench tag 3 --remove lab
          rtbench ls lab=adelaide
          rtbench tag 812 baseline=yes     # the board's runs are checked against it

        Tagging a run `baseline` (or removing the tag) checks every run of its board
        and suite again against the board's new baseline (the regression board).
        """
        from rtbench.analysis.boardcheck import BASELINE_TAG
        from rtbench.regress.board import recheck

        new: dict[str, str] = {}
        for text in tags:
            m = _TAG.match(text)
            if not m:
                fail(f"tag {text!r}: write KEY=VALUE (KEY of letters, digits, _ . : -)",
                     EXIT_USAGE)
            if m.group(1) in RESERVED:
                fail(f"tag {m.group(1)!r}: that name selects a run field (a board is "
                     "named with --board when the run is made); choose another key",
                     EXIT_USAGE)
            new[m.group(1)] = m.group(2)
        if not new and not remove:
            fail("give KEY=VALUE tags to add or --remove KEY", EXIT_USAGE)
        store = open_store(db_url, existing=True)
        try:
            run_id = stored_id(store, run)
            result = store.set_tags(run_id, new, tuple(remove))
            rechecked = 0
            if BASELINE_TAG in new or BASELINE_TAG in remove:
                # the board's baseline changed: its runs are checked against it again
                detail = store.get_run(run_id)
                rechecked = recheck(store, board=detail.board, suite=detail.suite)
        finally:
            store.close()
        shown = " ".join(f"{k}={v}" for k, v in sorted(result.items())) or "(no tags)"
        from rtbench.report.text import for_terminal

        click.echo(f"run {run_id}: {for_terminal(shown)}")
        if rechecked:
            click.echo(f"regression board: {rechecked} runs of board {detail.board} "
                       f"(suite {detail.suite}) checked again against the new baseline")
