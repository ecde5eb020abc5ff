"""`rtbench compare`: runs side by side with intervals, verdicts and environment differences."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import click

from rtbench import EXIT_FAIL, EXIT_USAGE
from rtbench.commands._common import (
    DB_HELP,
    check_writable,
    fail,
    handle_errors,
    make_console,
    open_store,
)
from rtbench.commands._runs import RUN_HELP, views

FACTS = ("kernel", "preemption model", "CPU model", "governor", "isolcpus", "nohz_full",
         "SMT", "clocksource", "probe version", "simulated")


def parse_percent(text: str, option: str) -> float:
    """'10%' or '0.1' as a fraction (exit 2 otherwise)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(%?)\s*", text)
    if not m:
        fail(f"{option} {text!r}: give a percentage such as 10% (or a fraction like 0.1)",
             EXIT_USAGE)
    value = float(m.group(1)) / (100.0 if m.group(2) else 1.0)
    return value


def register(main: click.Group) -> None:
    """Add `compare`."""

    @main.command(epilog=RUN_HELP)
    @click.argument("runs", nargs=-1, metavar="RUN...")
    @click.option("--baseline", metavar="RUN", help="The run the others are measured "
                  "against (default: the first measured run).")
    @click.option("--max-regression", metavar="PCT",
                  help="Exit 1 when a cell's --metric got worse by more than PCT, the whole "
                       "95 % interval above it (a CI gate), e.g. 10%.")
    @click.option("--metric", type=click.Choice(["p50", "p99", "p99.9"]), default="p99",
                  show_default=True, help="The percentile --max-regression checks.")
    @click.option("--vary", "vary", multiple=True, type=click.Choice(FACTS, case_sensitive=False),
                  help="An environment fact that differs on purpose (repeatable).")
    @click.option("--strict", is_flag=True, help="Refuse (exit 2) when any environment fact "
                  "other than --vary differs.")
    @click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
    @click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
                  help="Also write an HTML comparison report here.")
    @click.option("--db", "db_url", metavar="URL", help=DB_HELP)
    @handle_errors
    def compare(runs: tuple[str, ...], baseline: str | None, max_regression: str | None,
                metric: str, vary: tuple[str, ...], strict: bool, as_json: bool,
                output: Path | None, db_url: str | None) -> None:
        """Compare runs cell by cell: p50/p99/p99.9/max with 95 % intervals of the
        differences, overruns, exceedance rates, and every environment fact that differs.

        \b
        Examples:
          rtbench compare 3 4
          rtbench compare latest~1 latest --vary kernel
          rtbench compare latest ref:loongson2f
          rtbench compare --baseline 3 latest --max-regression 10% --metric p99
          rtbench compare host=box,kernel~rt host=box,kernel!~rt --json

        Exit codes: 0 compared, 1 a regression beyond --max-regression, 2 bad runs or
        options (also: no cell in common, --strict and the environments differ).
        """
        from rtbench.analysis.compare import compare as do_compare
        from rtbench.analysis.compare import regressions
        from rtbench.report import compare_html
        from rtbench.report.compare_text import comparison_json, comparison_renderables

        names = ([baseline] if baseline else []) + list(runs)
        if len(names) < 2:
            fail("compare needs two runs or more (or --baseline RUN and one run)", EXIT_USAGE)
        limit = parse_percent(max_regression, "--max-regression") \
            if max_regression is not None else None
        if output is not None:
            check_writable(output, (".html", ".htm"))
        store = open_store(db_url)
        try:
            chosen = views(store, names)
        finally:
            store.close()
        if len(chosen) < 2:
            fail("these names give one run; compare needs two or more", EXIT_USAGE)
        if all(v.published for v in chosen):
            fail("compare needs at least one measured run (all are published references)",
                 EXIT_USAGE)
        comp = do_compare(chosen, vary=tuple(vary))
        if not comp.rows:
            listing = "; ".join(f"{v.label}: " + (", ".join(c.key.label() for c in v.cells[:4])
                                                  or "no latency cells")
                                for v in chosen)
            fail(f"no cell in common (cells match by scenario, test and parameters): "
                 f"{listing}", EXIT_USAGE)
        if strict and not comp.like_for_like:
            facts = ", ".join(d.fact for d in comp.env if not d.intended)
            fail(f"--strict: the environments differ in {facts}; name what you compare on "
                 "purpose with --vary, or drop --strict to see the comparison", EXIT_USAGE)
        if output is not None:
            compare_html.write(comp, output)
        found = regressions(comp, metric, limit) if limit is not None else []
        if as_json:
            data = comparison_json(comp)
            if limit is not None:
                data["gate"] = {"metric": metric, "max_regression": limit,
                                "regressions": [r.__dict__ for r in found]}
            click.echo(json.dumps(data, indent=1, allow_nan=False, default=str))
        else:
            console = make_console()
            for part in comparison_renderables(comp):
                console.print(part)
            if output is not None:
                console.print(f"report: {output}", highlight=False, markup=False)
            if limit is not None:
                if found:
                    for r in found:
                        console.print(f"REGRESSION {r.run} {r.cell}: {metric} +{r.rel:.1%} "
                                      f"(interval from +{r.rel_lo:.1%}), limit "
                                      f"{limit:.1%}", markup=False, highlight=False)
                else:
                    console.print(f"no {metric} regression beyond {limit:.1%} that the "
                                  "intervals support", highlight=False)
        if found:
            sys.exit(EXIT_FAIL)
