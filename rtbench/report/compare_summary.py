"""The summary table of a multi-run comparison, for terminals and as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from rtbench.analysis.gate import INCONCLUSIVE, REGRESSION, GateCheck
from rtbench.analysis.multicompare import Summary
from rtbench.report.format import fmt_us
from rtbench.report.gate_text import plain
from rtbench.report.layout import Column, FittedTable

MARK = {REGRESSION: "▲", INCONCLUSIVE: "~"}  # "▲" is "^" on an ASCII terminal
MARK_STYLE = {REGRESSION: "bold red", INCONCLUSIVE: "dim"}


def fmt_value(metric: str, value: float | None) -> str:
    """A summary value: µs, or samples per million for the exceedance rate."""
    if value is None:
        return "-"
    if metric == "exceedance-rate":
        return f"{value:.3g}/M"
    return fmt_us(value)


def against_text(summary: Summary) -> str:
    """What each step compares with, in words."""
    return "the run before it" if summary.against == "previous" else "the first run"


def entry(metric: str, value: float | None, check: GateCheck | None) -> Text:
    """One table entry: the value and the mark of its step."""
    mark = MARK.get(check.outcome, "") if check is not None else ""
    text = Text(fmt_value(metric, value))
    if mark:
        text.append(" " + mark, style=MARK_STYLE[check.outcome if check else ""])
    return text


def summary_table(summary: Summary) -> FittedTable:
    """Runs as columns, cell x metric as rows; each step's regression or doubt marked."""
    rows: list[list[str | Text]] = []
    for row in summary.rows:
        label = row.key.label()
        for metric in summary.metrics:
            rows.append([plain(label), metric,
                         *(entry(metric, v, c) for v, c in zip(row.values[metric],
                                                               row.steps[metric],
                                                               strict=True))])
            label = ""
    columns = [Column("cell", "left", wrap=True), Column("metric", "left")]
    columns += [Column(plain(label)) for label in summary.runs]
    return FittedTable(columns, rows, title=(
        f"summary (µs): ▲ the gate finds a regression beyond +{summary.limit:.0%} against "
        f"{against_text(summary)}, ~ it cannot decide (not a pass)"))


def summary_lines(summary: Summary, printed: Sequence[GateCheck] = ()) -> list[str]:
    """One line per step the gate finds a regression or cannot decide, with its reason,
    one word per outcome (REGRESSION, INCONCLUSIVE); printed: the gate's own checks
    against the baseline, printed after these: a step that is the same check (the same
    run, cell and metric against the same run) is left to them, so each prints once."""
    first = next((r for r in summary.reference if r is not None), None)
    done = {(c.run, c.cell, c.metric) for c in printed}

    def shown(c: GateCheck) -> bool:
        same = summary.reference[summary.runs.index(c.run)] == first \
            if c.run in summary.runs else False
        return not (same and (c.run, c.cell, c.metric) in done)

    lines = []
    for c in summary.jumps():
        if shown(c):
            lines.append(f"REGRESSION {plain(c.run)} {plain(c.cell)}: {c.metric}: "
                         f"{plain(c.reason)}")
    for c in summary.inconclusive():
        if shown(c):
            lines.append(f"INCONCLUSIVE {plain(c.run)} {plain(c.cell)}: {c.metric}: "
                         f"{plain(c.reason)}")
    if not lines and not printed:
        lines.append(f"no regression: every step is within +{summary.limit:.0%}")
    return lines


def _check_json(check: GateCheck | None) -> dict[str, Any] | None:
    """A step's decision as JSON."""
    if check is None:
        return None
    return {"outcome": check.outcome, "reason": check.reason, "rel": check.rel,
            "rel_lo": check.rel_lo, "rel_hi": check.rel_hi}


def summary_json(summary: Summary) -> dict[str, Any]:
    """The summary for `compare --json` and the API (ns; exceedance rate per million)."""
    return {
        "against": summary.against, "metrics": list(summary.metrics),
        "max_regression": summary.limit, "runs": summary.runs,
        "step_against": [None if r is None else summary.runs[r] for r in summary.reference],
        "cells": [{"label": row.key.label(), "scenario": row.key.scenario,
                   "test": row.key.test, "params": row.key.params,
                   "metrics": {m: {"values": row.values[m],
                                   "steps": [_check_json(c) for c in row.steps[m]]}
                               for m in summary.metrics}}
                  for row in summary.rows],
        "jumps": [c.__dict__ for c in summary.jumps()],
    }
