"""`rtbench suites`: the built-in suites, or one suite validated and shown."""

from __future__ import annotations

from typing import Any

import click

from rtbench.commands._common import handle_errors, make_console


def register(main: click.Group) -> None:
    """Add `suites`."""
    main.add_command(suites)


@click.command()
@click.argument("name", required=False)
@click.option("--scale", type=float, default=1.0, show_default=True,
              help="Show durations multiplied by this factor.")
@handle_errors
def suites(name: str | None, scale: float) -> None:
    """List the built-in suites, or validate and show one (name or file).

    \b
    Examples:
      rtbench suites               # built-in suites with their length
      rtbench suites quick         # the scenarios and tests of quick
      rtbench suites ./my.toml     # validate a suite file
    """

    from rtbench.commands._run_support import expected_text
    from rtbench.report.layout import Column, FittedTable
    from rtbench.report.suitetext import load_text, params_text
    from rtbench.report.text import for_rich
    from rtbench.run.estimate import estimate_run
    from rtbench.suites.parse import builtin_suites, load_suite

    console = make_console()
    if name is None:
        rows = []
        for suite_name, path in builtin_suites().items():
            suite = load_suite(str(path), scale)
            rows.append([suite_name, suite.description, str(len(suite.scenarios)),
                         str(len(suite.tests)), estimate_run(suite).text()])
        console.print(FittedTable(
            [Column("name", "left", True), Column("description", "left", True),
             Column("scenarios"), Column("tests"), Column("length")], rows,
            title="built-in suites"))
        return
    suite = load_suite(name, scale)
    _check_values_locally(suite)
    console.print(f"[bold]{for_rich(suite.name)}[/bold] ({for_rich(suite.source)}): "
                  f"{for_rich(suite.description)}",
                  highlight=False)
    console.print(f"scale {suite.scale:g}, {estimate_run(suite).text()} (a board: "
                  f"{estimate_run(suite, 'serial').text().removeprefix('about ')})")
    scen_rows = [[s.name, "\n".join(load_text(ld.describe()) for ld in s.loads) or "none",
                  s.load_cpus or "auto", s.measure_cpus or "auto", f"{s.settle_ns / 1e9:g}"]
                 for s in suite.scenarios]
    console.print(FittedTable(
        [Column("name", "left", True), Column("loads", "left", True),
         Column("load cpus", "left", True), Column("measure cpus", "left", True),
         Column("settle s")], scen_rows, title="scenarios",
        caption="auto: with loads in the suite and >= 4 CPUs, loads on the first half of "
                "the CPUs and tests on the rest; else shared"))
    test_rows = []
    for t in suite.tests:
        duration = f"{t.duration_ns / 1e9:g}" if t.traits().timed \
            else f"~{t.expected_seconds():g} (fixed work)"
        test_rows.append([t.name, t.test, duration, f"{t.warmup_ns / 1e9:g}",
                          expected_text(t),
                          ",".join(f"{x / 1000:g}" for x in t.thresholds_ns) or "-",
                          params_text(t.params)])
    console.print(FittedTable(
        [Column("name", "left", True), Column("test", "left"), Column("duration s", "left"),
         Column("warmup s"), Column("expected s", "left", True),
         Column("thresholds µs", "left", True), Column("params", "left", True)],
        test_rows, title="tests (run in every scenario)"))



def _check_values_locally(suite: Any) -> None:
    """`rtbench suites FILE`: every param value as this machine's rtprobe parses it (a
    board's probe is asked again at `run`)."""
    from rtbench.suites.compat import check_param_values
    from rtbench.targets import open_target as open_uri

    with open_uri("local") as target:
        check_param_values(suite, target)
