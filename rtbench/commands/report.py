"""`rtbench report`: the HTML report of a run, of several runs compared, or a study's table."""

from __future__ import annotations

from pathlib import Path

import click

from rtbench import EXIT_USAGE, data_dir
from rtbench.commands._common import (
    DB_HELP,
    RUN_ARG_HELP,
    check_writable,
    fail,
    handle_errors,
    make_console,
    open_store,
    write_report,
)


def register(main: click.Group) -> None:
    """Add `report`."""
    main.add_command(report)


@click.command(epilog=RUN_ARG_HELP)
@click.argument("runs", metavar="RUN...", nargs=-1, required=True)
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              help="HTML file to write (default: <data dir>/reports/run-RUN.html, or "
                   "compare-RUN-RUN....html for several runs).")
@click.option("--layout", "layout", metavar="STUDY",
              help="Also print (and put in the HTML) a published study's own table with "
                   "these runs beside the published figures: loongson2f, s3c24a0, "
                   "arm-preemptrt, celleb, lrtai.")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@handle_errors
def report(runs: tuple[str, ...], output: Path | None, layout: str | None,
           db_url: str | None) -> None:
    """Write a self-contained HTML report of a run, or of several runs compared
    (differences with intervals, environment differences, advisor, figures).

    \b
    Examples:
      rtbench report 3 -o run3.html
      rtbench report latest~1 latest ref:loongson2f -o compare.html
      rtbench report latest --layout loongson2f    # the Loongson table, ours beside theirs
      rtbench report 4 5 --layout celleb           # vanilla vs PREEMPT_RT, the IBM table
    """
    from rtbench.commands._runs import resolve_all, views

    if output is not None:
        check_writable(output, (".html", ".htm"))
    if layout is not None:
        report_layout(runs, layout, output, db_url)
        return
    store = open_store(db_url, reading=True)
    try:
        named = resolve_all(store, runs)
        single = store.get_run(named[0]) if len(named) == 1 and isinstance(named[0], int) \
            else None
        chosen = [] if single is not None else views(store, runs)
    finally:
        store.close()
    if single is not None:
        path = output or data_dir() / "reports" / f"run-{single.id}.html"
        write_report(single, path)
    else:
        from rtbench.analysis.compare import compare
        from rtbench.report import compare_html

        if all(v.published for v in chosen):
            fail("a report needs at least one measured run; 'rtbench ref show NAME' shows "
                 "a published one", EXIT_USAGE)
        name = "-".join(v.label.replace("run ", "").replace(":", "_") for v in chosen)
        path = output or data_dir() / "reports" / f"compare-{name}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        compare_html.write(compare(chosen), path)
    click.echo(f"report: {path}")


def report_layout(runs: tuple[str, ...], name: str, output: Path | None,
                  db_url: str | None) -> None:
    """`report --layout`: print a study's table for stored runs and write the HTML."""
    from rtbench.analysis.layouts import LayoutError, build_layout
    from rtbench.commands._runs import resolve_all
    from rtbench.reference import reference_runs
    from rtbench.report.html import write_html_report, write_layout_page
    from rtbench.report.layouts import layout_html, layout_renderable

    store = open_store(db_url, reading=True)
    try:
        named = resolve_all(store, runs)
        if not all(isinstance(n, int) for n in named):
            fail(f"--layout {name}: name stored runs only; the study's published figures "
                 "are added beside them", EXIT_USAGE)
        details = [store.get_run(n) for n in named]
    finally:
        store.close()
    try:
        built = build_layout(name, details, reference_runs())
    except LayoutError as exc:
        fail(str(exc), EXIT_USAGE)
    make_console().print(layout_renderable(built))
    section = layout_html(built)
    if len(details) == 1:
        path = output or data_dir() / "reports" / f"run-{details[0].id}-{name}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_html_report(details[0], path, [section])
    else:
        ids = "-".join(str(d.id) for d in details)
        path = output or data_dir() / "reports" / f"{name}-{ids}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_layout_page(built.title, [section], path)
    click.echo(f"report: {path}")

