"""A comparison and the advisor's findings as terminal tables and as JSON."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.text import Text

from rtbench.analysis.advise import CellAdvice
from rtbench.analysis.compare import CellData, Comparison, MetricDiff, RunView
from rtbench.core.valuetext import value_text
from rtbench.report.format import fmt_duration, fmt_rate, fmt_threshold, fmt_us
from rtbench.report.layout import Column, FittedTable, NoteRefs

VERDICT_STYLE = {"better": "green", "worse": "bold red", "no detectable difference": "",
                 "no interval": "dim"}


def clean(text: object) -> str:
    """User text for a terminal: control characters dropped, rich markup escaped."""
    return escape("".join(ch for ch in str(text) if ch.isprintable() or ch == " "))


def fmt_signed_us(ns: float | None) -> str:
    """A difference in microseconds with its sign."""
    if ns is None:
        return "-"
    return ("+" if ns > 0 else "") + fmt_us(ns)


def fmt_interval(d: MetricDiff) -> str:
    """'[lo, hi]' in microseconds, or '-' without an interval."""
    if d.lo is None or d.hi is None:
        return "-"
    return f"[{fmt_signed_us(d.lo)}, {fmt_signed_us(d.hi)}]"


def fmt_figure(cell: CellData | None, metric: str) -> str:
    """A cell's figure in microseconds ('n/a' when not published or not enough samples)."""
    if cell is None:
        return "-"
    value = cell.figures.get(metric)
    return "n/a" if value is None else fmt_us(value)


def runs_table(views: list[RunView]) -> FittedTable:
    """Which runs are compared; published ones with source, platform and conditions."""
    rows: list[list[str | Text]] = []
    for v in views:
        if v.reference is not None:
            what = (f"PUBLISHED, NOT MEASURED HERE:\n{v.reference.title} "
                    f"(source: reference/{v.reference.file})")
        else:
            assert v.run is not None
            what = f"{v.run.suite}, {v.run.started_at:%Y-%m-%d %H:%M}" + (
                ", SIMULATED" if v.run.simulated else "")
        rows.append([v.label, what, v.hostname, v.kernel])
    return FittedTable([Column("run", "left", wrap=True), Column("what", "left", wrap=True),
                        Column("host / platform", "left", wrap=True),
                        Column("kernel", "left", wrap=True)], rows,
                       title="runs compared (the first measured run is the baseline)")


def env_table(comp: Comparison) -> FittedTable | Text:
    """Environment facts that differ, or a line saying none do."""
    if not comp.env:
        return Text("environment: every recorded fact is the same")
    title = ("environment facts that differ (NOT LIKE FOR LIKE: the differences below may "
             "come from these)" if not comp.like_for_like
             else "environment facts that differ (only the ones named with --vary)")
    columns = [Column("fact", "left", wrap=True)]
    columns += [Column(v.label, "left", wrap=True) for v in comp.runs]
    columns.append(Column("compared on purpose", "left", abbrev="on purpose"))
    rows: list[list[str | Text]] = [
        [d.fact, *(value_text(x) for x in d.values), "yes" if d.intended else ""]
        for d in comp.env]
    return FittedTable(columns, rows, title=title)


def diff_table(comp: Comparison, run_index: int) -> FittedTable:
    """Every matched cell of one run against the baseline; notes said once below."""
    base = next((i for i, v in enumerate(comp.runs) if not v.published), 0)
    notes = NoteRefs()
    rows: list[list[str | Text]] = []
    for row in comp.rows:
        diffs = row.diffs[run_index]
        a, b = row.cells[base], row.cells[run_index]
        if not diffs or a is None or b is None:
            continue
        label = row.key.label()
        for d in diffs:
            verdict = d.verdict
            if d.note and d.metric != "max":
                verdict += f" ({notes.ref(d.note)})"
            rows.append([label, d.metric, fmt_figure(a, d.metric), fmt_figure(b, d.metric),
                         fmt_signed_us(d.diff), fmt_interval(d),
                         Text(verdict, style=VERDICT_STYLE.get(d.verdict, ""))])
            label = ""
        rows.append(["", "overruns", _count(a.overruns), _count(b.overruns), "", "", ""])
        rows.append(["", "exceedances", _rates(a), _rates(b), "", "", ""])
    columns = [Column("cell", "left", wrap=True), Column("metric", "left"),
               Column("baseline", abbrev="base"), Column("run"),
               Column("difference", abbrev="diff"),
               Column("95 % interval", "left", abbrev="CI (95%)"),
               Column("verdict", "left", wrap=True, verdict=True)]
    return FittedTable(columns, rows,
                       title=f"{comp.runs[run_index].label} against {comp.runs[base].label} "
                             "(µs; difference = run − baseline, 95 % bootstrap interval)",
                       notes=notes.lines())


def _count(n: int | None) -> str:
    """A count or 'n/a'."""
    return "n/a" if n is None else f"{n:,}"


def _rates(cell: CellData) -> str:
    """Exceedance rates per threshold."""
    if cell.published:
        return "n/a"
    if not cell.exceed_rates:
        return "-"
    return ", ".join(f"{fmt_rate(r)} ≥{fmt_threshold(t)}" for t, r in cell.exceed_rates)


def unmatched_text(comp: Comparison) -> Text | None:
    """Cells without a partner, listed."""
    if not comp.unmatched:
        return None
    lines = [f"cells without a partner ({len(comp.unmatched)}):"]
    for i, key in comp.unmatched:
        lines.append(f"  {comp.runs[i].label}: {key.label()}")
    return Text("\n".join(lines))


def comparison_renderables(comp: Comparison, pairs: bool = True) -> list[RenderableType]:
    """Everything compare prints before its summary, in order (pairs: each run's table
    against the baseline too)."""
    out: list[RenderableType] = [runs_table(comp.runs), env_table(comp)]
    base = next((i for i, v in enumerate(comp.runs) if not v.published), 0)
    for i in range(len(comp.runs)):
        if pairs and i != base and any(row.diffs[i] for row in comp.rows):
            out.append(diff_table(comp, i))
    missing = unmatched_text(comp)
    if missing is not None:
        out.append(missing)
    if comp.notes:
        out.append(Group(*(Text(f"note: {n}", style="dim") for n in comp.notes)))
    return out


def _cell_json(cell: CellData | None) -> dict[str, Any] | None:
    """A cell's figures for JSON (ns; null when n/a)."""
    if cell is None:
        return None
    return {"name": cell.name, "published": cell.published, "samples": cell.samples,
            "figures_ns": cell.figures, "overruns": cell.overruns,
            "exceedance_rates_per_hour": [{"threshold_ns": t, "rate": r}
                                          for t, r in cell.exceed_rates],
            "windows": cell.matrix.windows if cell.matrix is not None else None}


def _view_json(v: RunView) -> dict[str, Any]:
    """A run's identity for JSON."""
    out: dict[str, Any] = {"label": v.label, "published": v.published, "host": v.hostname,
                           "kernel": v.kernel, "environment": v.env}
    if v.reference is not None:
        out.update(note=v.reference.label, source=f"reference/{v.reference.file}",
                   title=v.reference.title, platform=v.reference.platform,
                   conditions=v.reference.conditions)
    elif v.run is not None:
        out.update(id=v.run.id, suite=v.run.suite, simulated=v.run.simulated,
                   started_at=v.run.started_at.isoformat(), tags=v.run.tags)
    return out


def comparison_json(comp: Comparison) -> dict[str, Any]:
    """The comparison as a JSON-ready dict (nanoseconds)."""
    return {
        "schema": "rtbench-compare/1",
        "method": "difference = run - baseline; 95 % percentile bootstrap over measured "
                  "windows (docs/statistics.md); verdict only when the interval excludes 0",
        "runs": [_view_json(v) for v in comp.runs],
        "like_for_like": comp.like_for_like,
        "environment_differences": [{"fact": d.fact, "values": d.values,
                                     "compared_on_purpose": d.intended} for d in comp.env],
        "cells": [{"scenario": row.key.scenario, "test": row.key.test,
                   "params": row.key.params, "label": row.key.label(),
                   "runs": [_cell_json(c) for c in row.cells],
                   "differences": [[{"metric": d.metric, "baseline_ns": d.a, "run_ns": d.b,
                                     "difference_ns": d.diff, "ci95_ns": None if d.lo is None
                                     else [d.lo, d.hi], "verdict": d.verdict, "note": d.note}
                                    for d in diffs] for diffs in row.diffs]}
                  for row in comp.rows],
        "unmatched": [{"run": comp.runs[i].label, "cell": key.label()}
                      for i, key in comp.unmatched],
        "notes": comp.notes,
    }


def advice_table(advice: list[CellAdvice], title: str) -> FittedTable:
    """The advisor's findings, one row per cell; a reason shared by rows said once."""
    notes = NoteRefs()
    rows: list[list[str | Text]] = []
    for a in advice:
        if a.fit is not None and not a.unsupported:
            est = (f"{fmt_duration(a.fit.level * 1000)} [{fmt_duration(a.fit.level_lo * 1000)}"
                   f", {fmt_duration(a.fit.level_hi * 1000)}]"
                   + (" — not credible" if a.doubts else ""))
            est_cycle = fmt_cycle(a.evt_cycle_ns)
        else:
            est = f"not estimated ({notes.ref(a.unsupported or 'no fit')})"
            est_cycle = "-"
        verdict = verdict_text(a)
        rows.append([a.cell, str(a.windows), f"{fmt_us(a.observed_max_ns)} µs",
                     fmt_cycle(a.observed_cycle_ns), est, est_cycle,
                     Text(verdict, style="bold red") if verdict == "NOT SAFE" else verdict])
    columns = [Column("cell", "left", wrap=True), Column("windows", abbrev="win"),
               Column("observed max", abbrev="obs. max"),
               Column("cycle ≥ (observed)", abbrev="cycle (obs.)"),
               Column("once per horizon [95%]", "left", wrap=True),
               Column("cycle ≥ (estimate)", abbrev="cycle (est.)"),
               Column("verdict", "left", wrap=True, verdict=True)]
    return FittedTable(columns, rows, title=title, notes=notes.lines())


def fmt_cycle(ns: float | None) -> str:
    """A cycle time in the unit that suits it ('-' for none)."""
    return fmt_duration(ns)


def horizon_text(seconds: float) -> str:
    """'hour', '8 hours', 'day', '30 minutes', '90 s': the horizon in words."""
    for unit_s, name in ((86_400, "day"), (3600, "hour"), (60, "minute")):
        count = seconds / unit_s
        if count >= 1 and abs(count - round(count)) < 1e-9:
            return name if round(count) == 1 else f"{round(count):,} {name}s"
    return fmt_duration(seconds * 1e9)


def advice_words(a: CellAdvice, virtual: bool) -> str | None:
    """The extrapolation of one cell in words: its horizon, the bound, its interval, and
    whether rtbench's credibility rule trusts it (None without an estimate)."""
    fit = a.fit
    if fit is None or a.unsupported:
        return None
    line = (f"{a.cell}: once per {horizon_text(a.horizon_s)} at most "
            f"{fmt_duration(fit.level_hi * 1000)} (estimate {fmt_duration(fit.level * 1000)}, "
            f"95 % interval {fmt_duration(fit.level_lo * 1000)} to "
            f"{fmt_duration(fit.level_hi * 1000)}; measured {fmt_duration(a.measured_s * 1e9)},"
            f" largest latency {fmt_duration(a.observed_max_ns)})")
    if not a.doubts:
        return line + " — credible by the rule in docs/advise.md"
    where = (", on this virtual machine most likely host stalls" if virtual else "")
    return (line + " — this fit is not credible: " + " and ".join(a.doubts)
            + f"; the tail is dominated by a few rare stalls{where}: measure longer"
            + (" or on bare metal" if virtual else ""))


def verdict_text(a: CellAdvice) -> str:
    """'safe', 'NOT SAFE' or the smallest cycle when none was given."""
    if a.safe is None:
        return f"smallest cycle {fmt_cycle(a.required_cycle_ns)}"
    scope = "" if a.evt_cycle_ns is not None else " (observed worst case only)"
    return ("safe" + scope) if a.safe else "NOT SAFE"


def advice_json(a: CellAdvice) -> dict[str, Any]:
    """One cell's advice as a JSON-ready dict."""
    fit = None
    if a.fit is not None:
        fit = {"model": "GEV on per-window maxima (profile-likelihood intervals)",
               "mu_us": a.fit.mu, "sigma_us": a.fit.sigma, "xi": a.fit.xi,
               "xi_ci95": [a.fit.xi_lo, a.fit.xi_hi], "blocks": a.fit.blocks,
               "return_period_blocks": a.fit.m, "level_us": a.fit.level,
               "level_ci95_us": [a.fit.level_lo, a.fit.level_hi]}
    return {"cell": a.cell, "windows": a.windows, "window_s": a.block_s,
            "measured_s": a.measured_s, "budget": a.budget, "horizon_s": a.horizon_s,
            "observed_max_ns": a.observed_max_ns, "overruns": a.overruns,
            "cycle_from_observed_ns": a.observed_cycle_ns,
            "extreme_value": fit if not a.unsupported else None,
            "extreme_value_unsupported": a.unsupported or None,
            "extreme_value_doubts": a.doubts if a.fit is not None and not a.unsupported
            else None,
            "cycle_from_estimate_ns": a.evt_cycle_ns,
            "required_cycle_ns": a.required_cycle_ns, "cycle_ns": a.cycle_ns, "safe": a.safe}
