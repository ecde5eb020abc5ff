"""`rtbench explain`: why a run's spikes happened, from the trace records stored with it."""

from __future__ import annotations

import json

import click

from rtbench import EXIT_USAGE
from rtbench.commands._common import DB_HELP, fail, handle_errors, open_store
from rtbench.commands._runs import RUN_HELP, stored_id


def register(main: click.Group) -> None:
    """Add `explain`."""
    main.add_command(explain)


@click.command(epilog=RUN_HELP)
@click.argument("run", metavar="RUN")
@click.option("--cell", "cells", metavar="TEXT", multiple=True,
              help="Only cells whose 'scenario/measurement' name contains TEXT "
                   "(repeatable).")
@click.option("--worst", default=3, show_default=True, type=click.IntRange(0, 1000),
              help="How many of each cell's largest spikes to show as time lines.")
@click.option("--json", "as_json", is_flag=True, help="Print the causes as JSON.")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@handle_errors
def explain(run: str, cells: tuple[str, ...], worst: int, as_json: bool,
            db_url: str | None) -> None:
    """Why the spikes of a run happened: causes ranked by the spikes they led and the
    latency they took, and the time lines of the worst spikes (needs a run measured
    with --trace, or an imported trace).

    \b
    Examples:
      rtbench explain latest
      rtbench explain 12 --cell cyclic --worst 5
      rtbench explain latest --json
    """
    from rtbench.analysis.trace_causes import explain_run, explanation_json
    from rtbench.report.explain_text import (
        NO_TRACES,
        NOT_TRACED,
        cell_lines,
        untraced_reason,
    )

    store = open_store(db_url, reading=True)
    try:
        run_id = stored_id(store, run)
        detail = store.get_run(run_id)
    finally:
        store.close()
    found = explain_run(detail, list(cells) or None)
    if cells and not found:
        names = ", ".join(f"{sc.name}/{m.name}" for sc in detail.scenarios
                          for m in sc.measurements)
        fail(f"--cell {'/'.join(cells)!r}: no cell of run {run_id} matches; its cells: "
             f"{names or 'none'}", EXIT_USAGE)
    traced = [c for c in found if c.traced]
    if as_json:
        click.echo(json.dumps({"run": run_id, "traced": bool(traced),
                               "cells": explanation_json(found, worst)}, indent=1))
        return
    if not traced:
        why = untraced_reason(detail)
        click.echo(NO_TRACES.format(run=run_id) if why is None
                   else NOT_TRACED.format(run=run_id, why=why))
        return
    lines = [f"run {run_id}: causes of its traced spikes"]
    for cell in found:
        lines.extend(cell_lines(cell, worst))
    click.echo("\n".join(lines))
