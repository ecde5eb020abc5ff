"""`rtbench plot`: one figure of one or more runs to an SVG, PNG or PDF file."""

from __future__ import annotations

from pathlib import Path

import click

from rtbench import EXIT_USAGE
from rtbench.commands._common import DB_HELP, check_writable, fail, handle_errors, open_store
from rtbench.commands._runs import RUN_HELP, views

BOARD_KINDS = ("history", "combined")


def plot_board(kind: str, runs: tuple[str, ...], board: str | None, suite: str | None,
               last: int, simulated: bool, all_policies: bool, output: Path,
               db_url: str | None) -> None:
    """Draw --kind history or combined of one board into output."""
    from rtbench.analysis.boards import histories
    from rtbench.report import figures
    from rtbench.report.boardfigures import combined_figure, history_figure
    from rtbench.store.boards import board_histogram

    if runs:
        fail(f"--kind {kind} draws a board, not runs: give --board NAME instead of "
             f"{' '.join(runs)}", EXIT_USAGE)
    if not board:
        fail(f"--kind {kind} needs --board NAME ('rtbench ls' shows the boards)",
             EXIT_USAGE)
    store = open_store(db_url, reading=True)
    try:
        if kind == "history":
            from rtbench.server.views.lab import marks_for, regression_marks

            found = histories(store.cell_rows(board=board, suite=suite,
                                              simulated=None if simulated else False,
                                              rt_only=not all_policies))
            flagged = regression_marks(store, board, suite)
        else:
            run_ids, pairs = board_histogram(store, board, suite=suite, last=last,
                                             simulated=None if simulated else False)
    finally:
        store.close()
    try:
        fig = history_figure(board, found, lambda h: marks_for(h, flagged)) \
            if kind == "history" \
            else combined_figure(board, run_ids, pairs)
        figures.save(fig, output)
    except figures.FigureError as exc:
        fail(str(exc), EXIT_USAGE)
    click.echo(f"{kind}: {output} (board {board})")


def register(main: click.Group) -> None:
    """Add `plot`."""

    @main.command(epilog=RUN_HELP)
    @click.argument("runs", nargs=-1, metavar="RUN...")
    @click.option("--kind", type=click.Choice(["hist", "timeline", "ccdf", "sweep", "load",
                                               "history", "combined"]),
                  required=True, help="hist: log-y histogram per CPU, runs overlaid; "
                  "timeline: per-window min/avg/max with overruns and worst samples; "
                  "ccdf: share of samples above each latency, log-log; sweep: a percentile "
                  "per cell of one test; load: achieved load per scenario; history: a "
                  "board's max, p99.9 and exceedance rate per run over time (--board); "
                  "combined: the merged histogram of a board's last runs (--board, --last).")
    @click.option("--board", metavar="NAME", help="The board of --kind history/combined.")
    @click.option("--suite", metavar="NAME", help="Only this suite (history, combined).")
    @click.option("--last", type=click.IntRange(1, 10_000), default=10, show_default=True,
                  help="How many of the board's newest runs --kind combined merges.")
    @click.option("--simulated", is_flag=True,
                  help="history/combined: include simulated runs (left out by default).")
    @click.option("--all-policies", is_flag=True,
                  help="history: include runs measured under a non-real-time policy.")
    @click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
                  required=True, help="File to write: .svg, .png or .pdf.")
    @click.option("--cell", "cell_filter", metavar="TEXT",
                  help="The cell to draw: the first whose 'scenario / test params' or "
                       "'scenario/name' contains TEXT (default: the first cell in common).")
    @click.option("--metric", type=click.Choice(["p50", "p99", "p99.9", "max", "mean"]),
                  default="p99", show_default=True, help="What sweep draws.")
    @click.option("--db", "db_url", metavar="URL", help=DB_HELP)
    @handle_errors
    def plot(runs: tuple[str, ...], kind: str, board: str | None, suite: str | None,
             last: int, simulated: bool, all_policies: bool, output: Path,
             cell_filter: str | None, metric: str, db_url: str | None) -> None:
        """Draw a figure of one or more runs (published reference runs join where they
        have the figure).

        \b
        Examples:
          rtbench plot latest --kind hist -o hist.svg
          rtbench plot latest~1 latest --kind ccdf --cell busy -o tails.png
          rtbench plot latest ref:loongson2f --kind sweep --metric max -o sweep.pdf
          rtbench plot latest --kind timeline -o timeline.svg
          rtbench plot --kind history --board imx8-1 --suite nightly -o imx8-1.svg
          rtbench plot --kind combined --board imx8-1 --last 20 -o imx8-1-hist.png
        """
        from rtbench.analysis.select import match_cells
        from rtbench.report import figures

        check_writable(output, tuple(f".{f}" for f in figures.FORMATS))
        if kind in BOARD_KINDS:
            plot_board(kind, runs, board, suite, last, simulated, all_policies, output,
                       db_url)
            return
        if board is not None:
            fail(f"--board goes with --kind history or combined, not {kind}; name runs "
                 "instead (e.g. board=NAME)", EXIT_USAGE)
        if not runs:
            fail(f"--kind {kind} needs one or more RUN (an id, latest, a selector)",
                 EXIT_USAGE)
        store = open_store(db_url, reading=True)
        try:
            chosen = views(store, runs)
        finally:
            store.close()
        key = None
        if kind != "load":
            measured = [v for v in chosen if not v.published] or chosen
            if cell_filter:
                lowered = cell_filter.lower()
                for cell in measured[0].cells:
                    scen_name = f"{cell.key.scenario}/{cell.name}".lower()
                    if lowered in cell.key.label().lower() or lowered in scen_name:
                        key = cell.key
                        break
                if key is None:
                    fail(f"--cell {cell_filter!r}: {measured[0].label} has no such cell; its "
                         "cells: " + ", ".join(c.key.label() for c in measured[0].cells[:8]),
                         EXIT_USAGE)
            elif len(chosen) > 1:
                rows, _ = match_cells([[(c.key, c) for c in v.cells] for v in chosen],
                                      [v.published for v in chosen])
                if rows:
                    key = rows[0].key
            elif chosen[0].cells:
                key = chosen[0].cells[0].key
            if key is None:
                fail("the runs have no latency cell in common; choose one with --cell",
                     EXIT_USAGE)
        try:
            fig = figures.build(kind, chosen, key, metric)
            figures.save(fig, output)
        except figures.FigureError as exc:
            fail(str(exc), EXIT_USAGE)
        click.echo(f"{kind}: {output}" + (f" ({key.label()})" if key is not None else ""))
