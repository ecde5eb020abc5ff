"""`rtbench preflight`: the system knobs that decide real-time results, checked."""

from __future__ import annotations

import json

import click

from rtbench.commands._common import (
    PROBE_HELP,
    TargetOption,
    handle_errors,
    make_console,
    open_target,
)

SEVERITY_STYLE = {"ok": "green", "info": "cyan", "warn": "yellow", "bad": "bold red"}


def register(main: click.Group) -> None:
    """Add `preflight`."""
    main.add_command(preflight)


@click.command()
@click.option("--target", "target_uri", metavar="URI", cls=TargetOption)
@click.option("--probe", "probe_path", metavar="PATH", help=PROBE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON.")
@handle_errors
def preflight(target_uri: str | None, probe_path: str | None, as_json: bool) -> None:
    """Check the system knobs that decide real-time results on a target
    (default: this machine).

    \b
    Examples:
      rtbench preflight
      rtbench preflight --json > facts.json
    """
    from rtbench.preflight import run_preflight
    from rtbench.targets.procstat import read_steal

    with open_target(target_uri, probe_path) as target:
        facts = run_preflight(target.sysinfo(), read_steal(target.read_file))
        hostname = target.hostname()
    if as_json:
        click.echo(json.dumps(facts, indent=2))
        return
    from rich.text import Text

    from rtbench.report.layout import Column, FittedTable

    rows: list[list[str | Text]] = [
        [str(fact["name"]), str(fact["value"]),
         Text(str(fact["severity"]), style=SEVERITY_STYLE.get(fact["severity"], "")),
         str(fact["advice"])] for fact in facts]
    make_console().print(FittedTable(
        [Column("knob", "left", True), Column("value", "left", True),
         Column("severity", "left"), Column("advice", "left", True)], rows,
        title=f"preflight: {hostname}"))

