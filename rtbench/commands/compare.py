"""`rtbench compare`: runs side by side with intervals, verdicts and environment differences."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import click

from rtbench import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, EXIT_USAGE
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


def parse_metrics(text: str) -> tuple[str, ...]:
    """'p99,max' as gate metrics (exit 2 naming a metric the gate does not know)."""
    from rtbench.analysis.gate import GATE_METRICS

    names = tuple(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    bad = [m for m in names if m not in GATE_METRICS]
    if bad or not names:
        fail(f"--metric {text!r}: give one or more of {', '.join(GATE_METRICS)}, "
             "separated by commas", EXIT_USAGE)
    return names


def register(main: click.Group) -> None:
    """Add `compare`."""

    @main.command(epilog=RUN_HELP)
    @click.argument("runs", nargs=-1, metavar="RUN...")
    @click.option("--baseline", metavar="RUN", help="The run the others are measured "
                  "against (default: the first measured run).")
    @click.option("--max-regression", metavar="PCT",
                  help="A CI gate: exit 1 when a cell's --metric surely got worse by more "
                       "than PCT (e.g. 10%), 5 when the runs cannot decide it.")
    @click.option("--metric", "metric_text", metavar="M[,M...]", default=None,
                  help="What --max-regression checks: p50, p99, p99.9, max, "
                       "exceedance-rate, comma separated (default p50,p99,max).")
    @click.option("--inconclusive", type=click.Choice(["pass", "fail"]), default=None,
                  help="Exit 0 (pass) or 1 (fail) instead of 5 when the gate is "
                       "inconclusive.")
    @click.option("--vary", "vary", multiple=True, type=click.Choice(FACTS, case_sensitive=False),
                  help="An environment fact that differs on purpose (repeatable).")
    @click.option("--strict", is_flag=True, help="Refuse (exit 2) when any environment fact "
                  "other than --vary differs.")
    @click.option("--allow-simulated", is_flag=True, help="Compare measured runs with "
                  "simulated ones (refused otherwise: simulated numbers are not latencies).")
    @click.option("--against", type=click.Choice(["previous", "first"]), default="previous",
                  show_default=True, help="What each run's step in the summary table is "
                  "decided against: the run before it, or the first measured run.")
    @click.option("--pairs", is_flag=True, help="Also print the table of every run against "
                  "the baseline (printed anyway for two runs).")
    @click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
    @click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
                  help="Also write an HTML comparison report here.")
    @click.option("--db", "db_url", metavar="URL", help=DB_HELP)
    @handle_errors
    def compare(runs: tuple[str, ...], baseline: str | None, max_regression: str | None,
                metric_text: str | None, inconclusive: str | None, vary: tuple[str, ...],
                strict: bool, allow_simulated: bool, against: str, pairs: bool,
                as_json: bool, output: Path | None, db_url: str | None) -> None:
        """Compare runs cell by cell: p50/p99/p99.9/max with 95 % intervals of the
        differences, overruns, exceedance rates, and every environment fact that differs.
        Any number of runs: one summary table (runs as columns) marks each run whose
        step from the run before it (--against first: from the first run) the
        regression gate calls a regression or cannot decide.

        \b
        Examples:
          rtbench compare 3 4
          rtbench compare latest~1 latest --vary kernel
          rtbench compare latest ref:loongson2f
          rtbench compare --baseline 3 latest --max-regression 10%
          rtbench compare --baseline 3 latest --max-regression 10% --metric p99,max
          rtbench compare host=box,kernel~rt host=box,kernel!~rt --json
          rtbench compare suite=quick --against first --pairs

        Exit codes: 0 compared (with --max-regression: every check says no regression),
        1 a regression beyond --max-regression, 2 bad runs or options (also: no cell in
        common, --strict and the environments differ, a measured and a simulated run
        without --allow-simulated), 5 the gate is inconclusive (the
        runs cannot decide a check; --inconclusive pass|fail chooses 0 or 1 instead).
        """
        from rtbench.analysis.compare import compare as do_compare
        from rtbench.analysis.gate import DEFAULT_METRICS, gate, overall
        from rtbench.analysis.multicompare import DEFAULT_LIMIT, summarize
        from rtbench.report import compare_html
        from rtbench.report.compare_summary import summary_json, summary_lines, summary_table
        from rtbench.report.compare_text import comparison_json, comparison_renderables
        from rtbench.report.explain_text import cause_changes, change_lines
        from rtbench.report.gate_text import gate_json, gate_lines

        names = ([baseline] if baseline else []) + list(runs)
        if not names:
            fail("compare needs two runs or more (or --baseline RUN and one run); a "
                 "selector such as suite=quick adds every run it matches", EXIT_USAGE)
        limit = parse_percent(max_regression, "--max-regression") \
            if max_regression is not None else None
        metrics = parse_metrics(metric_text) if metric_text is not None else DEFAULT_METRICS
        if limit is None and (metric_text is not None or inconclusive is not None):
            fail("--metric and --inconclusive choose what --max-regression checks: give "
                 "--max-regression PCT too", EXIT_USAGE)
        if output is not None:
            check_writable(output, (".html", ".htm"))
        store = open_store(db_url, reading=True)
        try:
            chosen = views(store, names)
        finally:
            store.close()
        if len(chosen) < 2:
            fail(f"{' '.join(names)} names one run; compare needs two or more (a "
                 "selector adds every run it matches)", EXIT_USAGE)
        if all(v.published for v in chosen):
            fail("compare needs at least one measured run (all are published references)",
                 EXIT_USAGE)
        simulated = [v.label for v in chosen if v.run is not None and v.run.simulated]
        measured = [v.label for v in chosen if v.run is not None and not v.run.simulated]
        if simulated and measured and not allow_simulated:
            fail(f"{', '.join(simulated)} simulated, {', '.join(measured)} measured: a "
                 "comparison of the two says nothing about latency; add --allow-simulated "
                 "to compare them anyway", EXIT_USAGE)
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
        summary = summarize(comp, against, metrics,
                            DEFAULT_LIMIT if limit is None else limit)
        if output is not None:
            compare_html.write(comp, output, summary)
        checks = gate(comp, metrics, limit) if limit is not None else []
        changes = cause_changes([(v.label, v.run) for v in chosen if v.run is not None])
        if as_json:
            data = comparison_json(comp)
            data["summary"] = summary_json(summary)
            data["simulated_runs"] = simulated
            if changes:
                data["cause_changes"] = [
                    {"from": a, "to": b, "moves": None if moves is None else
                     [{"cause": m.label, "before": m.before, "after": m.after}
                      for m in moves]} for a, b, moves in changes]
            if limit is not None:
                data["gate"] = gate_json(checks, metrics, limit)
            click.echo(json.dumps(data, indent=1, allow_nan=False, default=str))
        else:
            console = make_console()
            if simulated:
                console.print(simulated_headline(simulated, len(chosen)), markup=False,
                              highlight=False)
            for part in comparison_renderables(comp, pairs=pairs or len(chosen) == 2):
                console.print(part)
            console.print(summary_table(summary))
            for line in [*summary_lines(summary, checks), *change_lines(changes)]:
                console.print(line, markup=False, highlight=False)
            if output is not None:
                console.print(f"report: {output}", highlight=False, markup=False)
            if limit is not None:
                for line in gate_lines(checks, limit):
                    console.print(line, markup=False, highlight=False)
        if limit is not None:
            sys.exit(gate_exit(overall(checks), inconclusive))


def simulated_headline(simulated: list[str], runs: int) -> str:
    """The first line of a comparison with simulated runs in it."""
    which = "every run is" if len(simulated) == runs else ", ".join(simulated) + " are"
    return (f"SIMULATED: {which} simulated (rtprobe's synthetic latency source): the "
            "numbers below are not latencies of any machine")


def gate_exit(outcome: str, inconclusive: str | None) -> int:
    """The exit code of a gate's overall outcome (--inconclusive pass|fail for the third)."""
    from rtbench.analysis.gate import INCONCLUSIVE, REGRESSION

    if outcome == REGRESSION:
        return EXIT_FAIL
    if outcome == INCONCLUSIVE:
        return {"pass": EXIT_OK, "fail": EXIT_FAIL}.get(inconclusive or "", EXIT_INCONCLUSIVE)
    return EXIT_OK
