"""`rtbench advise`: is this cycle time safe here? The 25 % rule on the observed worst
case and on an extreme-value estimate of the latency exceeded once per horizon."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from rtbench import EXIT_FAIL, EXIT_USAGE
from rtbench.commands._common import DB_HELP, fail, handle_errors, make_console, open_store
from rtbench.commands._runs import RUN_HELP, stored_id
from rtbench.commands.compare import parse_percent

if TYPE_CHECKING:
    from rtbench.analysis.advise import CellAdvice


def parse_duration(text: str, option: str, default_unit: str) -> int:
    """A duration option in ns (exit 2 when it is not one or not > 0)."""
    from rtbench.suites.parse import parse_duration_ns

    try:
        ns = parse_duration_ns(text.strip(), default_unit)
    except ValueError as exc:
        fail(f"{option}: {exc}", EXIT_USAGE)
    if ns <= 0:
        fail(f"{option} {text!r}: must be longer than zero", EXIT_USAGE)
    return ns


def safe_line(cycle: str, advice: list[CellAdvice], simulated: bool) -> str:
    """The closing line when no cell found the cycle unsafe: which rules it rests on."""
    observed_only = [a for a in advice if a.evt_cycle_ns is None]
    line = f"cycle {cycle} is safe by the observed worst case" + (
        f" only in {len(observed_only)} of {len(advice)} cell(s) (no extreme-value "
        "estimate: see the table)" if observed_only else " and the extreme-value estimate")
    if simulated:
        line += "; SIMULATED data: this says nothing about a real machine"
    return line


def is_virtual(preflight: list[Any]) -> bool:
    """True when the run's preflight found a virtual machine (a warning or worse)."""
    return any(isinstance(f, dict) and f.get("name") == "virtualization"
               and f.get("severity") in ("warn", "bad") for f in preflight)


class FitProgress:
    """The live line while cells are fitted (stderr: one line rewritten on a terminal,
    one line per cell with --verbose, nothing otherwise)."""

    def __init__(self, verbose: bool) -> None:
        self.tty = sys.stderr.isatty()
        self.verbose = verbose
        self.width = 0

    def cell(self, n: int, total: int, label: str) -> None:
        """Cell n of total is being fitted."""
        text = "".join(ch for ch in f"advise: fitting cell {n} of {total}: {label} ..."
                       if ch.isprintable())
        if self.tty and not self.verbose:
            sys.stderr.write("\r" + text.ljust(self.width))
            self.width = len(text)
        elif self.verbose:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def done(self) -> None:
        """Clear the live line."""
        if self.tty and not self.verbose and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


def register(main: click.Group) -> None:
    """Add `advise`."""

    @main.command(epilog=RUN_HELP)
    @click.argument("run", metavar="RUN")
    @click.option("--cycle", metavar="DURATION", help="The cycle time to check, e.g. 1ms "
                  "(bare number: us). Without it the smallest safe cycle is shown.")
    @click.option("--budget", default="25%", show_default=True, metavar="PCT",
                  help="Share of the cycle the worst-case latency may use.")
    @click.option("--horizon", default="1h", show_default=True, metavar="DURATION",
                  help="Estimate the latency exceeded once in this much running time.")
    @click.option("--cell", "cell_filter", metavar="TEXT",
                  help="Only cells whose 'scenario / test params' or name contains TEXT.")
    @click.option("--json", "as_json", is_flag=True, help="Print the advice as JSON.")
    @click.option("--db", "db_url", metavar="URL", help=DB_HELP)
    @click.option("--verbose", is_flag=True,
                  help="Say on stderr which cell is being fitted, one line per cell (on "
                       "a terminal one live line is shown anyway).")
    @handle_errors
    def advise(run: str, cycle: str | None, budget: str, horizon: str,
               cell_filter: str | None, as_json: bool, db_url: str | None,
               verbose: bool) -> None:
        """Smallest safe cycle time from a run, by the 25 % rule: the worst-case latency
        should stay within BUDGET of the cycle.  Applied to the observed worst case and to
        the upper end of the 95 % interval of the latency exceeded once per HORIZON (a GEV
        fitted to the per-window maxima).  Says plainly when the run is too short or the
        fit is not supported.  See docs/advise.md.

        \b
        Examples:
          rtbench advise latest --cycle 1ms
          rtbench advise 3 --cycle 500us --budget 20% --horizon 8h
          rtbench advise latest --cell idle --json

        Exit codes: 0 the cycle is safe (or none was given), 1 it is not safe for some
        cell, 2 bad run or option.
        """
        from rtbench.analysis.advise import advise_cell
        from rtbench.analysis.select import cell_key
        from rtbench.report.compare_text import (
            advice_json,
            advice_table,
            advice_words,
            clean,
        )

        fraction = parse_percent(budget, "--budget")
        if not 0 < fraction <= 1:
            fail(f"--budget {budget!r}: must be more than 0 % and at most 100 %", EXIT_USAGE)
        cycle_ns = parse_duration(cycle, "--cycle", "us") if cycle is not None else None
        horizon_s = parse_duration(horizon, "--horizon", "s") / 1e9
        store = open_store(db_url, reading=True)
        try:
            detail = store.get_run(stored_id(store, run))
        finally:
            store.close()
        chosen = []
        for sc in detail.scenarios:
            for m in sc.measurements:
                label = cell_key(sc.name, m.test, m.params).label()
                if cell_filter and cell_filter.lower() not in label.lower() \
                        and cell_filter.lower() not in f"{sc.name}/{m.name}".lower():
                    continue
                chosen.append((label, m))
        advice = []
        progress = FitProgress(verbose)
        for n, (label, m) in enumerate(chosen, 1):
            progress.cell(n, len(chosen), label)
            a = advise_cell(label, m, budget=fraction, horizon_s=horizon_s,
                            cycle_ns=cycle_ns)
            if a is not None:
                advice.append(a)
        progress.done()
        if not advice:
            fail(f"run {detail.id} has no latency cell"
                 + (f" matching --cell {cell_filter!r}" if cell_filter else ""), EXIT_USAGE)
        unsafe = [a for a in advice if a.safe is False]
        if as_json:
            click.echo(json.dumps({"schema": "rtbench-advise/1", "run": detail.id,
                                   "rule": f"worst-case latency <= {fraction:.0%} of the cycle",
                                   "cells": [advice_json(a) for a in advice],
                                   "safe": None if cycle_ns is None else not unsafe},
                                  indent=1, allow_nan=False, default=str))
        else:
            console = make_console()
            if detail.simulated:
                console.print(f"SIMULATED: run {detail.id} is rtprobe's synthetic latency "
                              "source, not a measurement: nothing below is advice for a "
                              "machine", style="bold yellow", markup=False, highlight=False)
            what = f"cycle {cycle}" if cycle else "smallest safe cycle"
            console.print(advice_table(
                advice, f"run {detail.id} ({detail.hostname}, {detail.kernel}"
                f"{', SIMULATED' if detail.simulated else ''}): {what}, budget "
                f"{fraction:.0%}, horizon {horizon}"))
            virtual = is_virtual(detail.preflight)
            for a in advice:
                words = advice_words(a, virtual)
                if words is not None:
                    console.print(clean(words), style="yellow" if a.doubts else "",
                                  highlight=False)
            for a in advice:
                if a.overruns:
                    console.print(f"{clean(a.cell)}: {a.overruns} overruns were measured "
                                  "(periods missed entirely)", style="yellow")
            if cycle_ns is not None:
                if unsafe:
                    console.print(f"NOT SAFE: cycle {cycle} is shorter than "
                                  f"{len(unsafe)} cell(s) need", style="bold red",
                                  markup=False, highlight=False)
                else:
                    console.print(safe_line(cycle or "", advice, detail.simulated),
                                  style="yellow" if detail.simulated else "green",
                                  markup=False, highlight=False)
        if unsafe:
            sys.exit(EXIT_FAIL)
