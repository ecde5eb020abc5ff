"""Terminal output of stored runs (rich tables)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rtbench import EMULATED_WORDS
from rtbench.analysis.environment import environment_rows
from rtbench.analysis.measurement import MeasurementStats, run_stats
from rtbench.analysis.stats import PERCENTILES
from rtbench.analysis.verdict import (
    cell_state,
    policy_other,
    short_run_text,
    verdict_of,
)
from rtbench.bundle import INCONCLUSIVE, MeasurementDetail, RunDetail
from rtbench.core.valuetext import value_text
from rtbench.kinds import KindRegistry, packaged, run_registry
from rtbench.report.format import (
    DEFINITIONS,
    fmt_count,
    fmt_exceed,
    fmt_intensity,
    fmt_load_rate,
    fmt_per_s,
    fmt_placement,
    fmt_probe_text,
    fmt_rate,
    fmt_threshold,
    fmt_us,
    notes_once,
)
from rtbench.report.layout import Column, FittedTable
from rtbench.report.resultdata import key_values
from rtbench.report.suitetext import load_text
from rtbench.report.target import fmt_target
from rtbench.report.text import for_rich, for_terminal
from rtbench.report.verdict import verdict_text


def summary_table(run: RunDetail) -> FittedTable:
    """One row per scenario x measurement (series merged), times in us.

    Columns: samples, min, avg, p99, p99.9, max, overruns and one column of
    exceedances per threshold.  A test without a latency series shows its key
    figures from the result's data under its name instead of numbers.  The
    achieved load of each scenario is in load_table().  Too wide for the
    terminal, it becomes records: one block per cell, its status on its first line.
    """
    title = f"Run {run.id} · {for_rich(run.suite)} · {for_rich(run.status)}"
    if run.simulated:
        title += " · SIMULATED"
    if run.emulated:
        title += " · EMULATED"
    if policy_other(run):
        title += " · SCHED_OTHER (not real-time)"
    stats = run_stats(run)
    thresholds = sorted({e.threshold_ns for ms in stats if ms.merged
                         for e in ms.merged.exceedances})
    columns = [Column("scenario / test", "left", wrap=True),
               Column("status", "left", verdict=True)]
    columns += [Column(name) for name in ("samples", "min", "avg", "p99", "p99.9", "max")]
    columns.append(Column("overruns", abbrev="ovr"))
    columns += [Column(f"≥{fmt_threshold(th)}") for th in thresholds]
    kinds = run_registry(run.source)
    return FittedTable(columns, [_summary_cells(ms, thresholds, kinds) for ms in stats],
                       title=title, caption="times in µs, threads merged")


def _summary_cells(ms: MeasurementStats, thresholds: list[int],
                   kinds: KindRegistry) -> list[str | Text]:
    """The summary table's cells for one measurement."""
    m, s = ms.measurement, ms.merged
    name = f"{ms.scenario.name} / {m.name}"
    state, why = cell_state(m)
    status = Text(state, style="" if state == "ok" else "bold red")
    if state == INCONCLUSIVE and why:
        name += f"\n({why.partition(':')[0]})"  # the verdict below gives the whole reason
    if s is None:
        figures = kinds.headline(m.test, m.data)
        if figures:
            name += f"\n{m.test}: {figures}"
        return [name, status, *["-"] * (7 + len(thresholds))]
    exceed = {e.threshold_ns: e.count for e in s.exceedances}
    return [name, status, fmt_count(s.samples), fmt_us(s.min_ns),
            fmt_us(s.mean_ns), fmt_us(s.pct("p99")), fmt_us(s.pct("p99.9")),
            fmt_us(s.max_ns), fmt_count(s.overruns),
            *[fmt_count(exceed[th]) if th in exceed else "-" for th in thresholds]]


def load_table(run: RunDetail) -> FittedTable | None:
    """One row per scenario: the achieved load intensity and the CPU placement.

    None when no scenario stored an intensity (e.g. an imported run).
    """
    scenarios = [sc for sc in run.scenarios if sc.intensity]
    if not scenarios:
        return None
    return FittedTable(
        [Column("scenario", "left", wrap=True), Column("achieved load", "left", wrap=True),
         Column("CPUs", "left", wrap=True)],
        [[sc.name, fmt_intensity(sc.intensity), fmt_placement(sc)] for sc in scenarios],
        title="Achieved load (each load: achieved/target rate)")


def series_table(ms: MeasurementStats) -> FittedTable:
    """Every statistic of every series of one measurement (and merged)."""
    m = ms.measurement
    columns = [Column("series", "left", wrap=True)] + [Column(name) for name in [
        "samples", "min", "mean", "stddev"] + [label for label, _ in PERCENTILES] + [
        "max", "overruns", "exceedances", "rate"]]
    rows = []
    for label, s in ms.table_rows():
        sd = "-" if s.stddev_ns is None else (
            f"{fmt_us(s.stddev_ns)}±{fmt_us(s.stddev_error_ns)}")
        rate = ", ".join(fmt_rate(e.rate_per_hour) for e in s.exceedances)
        rows.append([label, fmt_count(s.samples), fmt_us(s.min_ns),
                     fmt_us(s.mean_ns), sd,
                     *[fmt_us(s.pct(lb)) for lb, _ in PERCENTILES],
                     fmt_us(s.max_ns), fmt_count(s.overruns),
                     fmt_exceed(s), rate or "-"])
    return FittedTable(columns, rows, title=f"{ms.scenario.name} / {m.name} ({m.test}, "
                       f"{cell_state(m)[0]}) — µs")


def show_run(console: Console, run: RunDetail) -> None:
    """Print everything stored about a run."""
    if run.simulated:
        console.print("[bold yellow]SIMULATED RUN: synthetic latencies, "
                      "not measurements of this machine[/]")
    if run.emulated:
        console.print(f"[bold yellow]EMULATED RUN: the CPU was emulated; {EMULATED_WORDS}[/]")
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold", no_wrap=True)
    head.add_column(overflow="fold")
    finished = run.finished_at.isoformat(timespec="seconds") \
        if run.finished_at else "-"
    for key, value in (
            ("run", str(run.id)), ("suite", " · ".join(
                [f"{run.suite} (scale {run.scale:g})",
                 *filter(None, [short_run_text(run.scale)])])),
            ("status", f"{run.status}: {run.source['partial']}"
             if run.status == "partial" and run.source.get("partial") else run.status),
            ("started", run.started_at.isoformat(timespec="seconds")),
            ("finished", finished), ("board", run.board), ("host", run.hostname),
            ("target", fmt_target(run.target, run.tags)), ("kernel", run.kernel),
            ("arch", run.arch),
            ("command", " ".join(run.command_line)),
            ("tools", value_text(dict(sorted(run.tool_versions.items()))))):
        head.add_row(key, for_rich(value))
    console.print(head)
    console.print(environment_table(run))
    if run.preflight:
        console.print(preflight_table(run))
    console.print(summary_table(run))
    console.print(verdict_text(verdict_of(run)))
    loads = load_table(run)
    if loads is not None:
        console.print(loads)
    console.print(scenario_table(run))
    kinds = run_registry(run.source)
    for ms in run_stats(run):
        m = ms.measurement
        console.print(f"\n[bold]{for_rich(ms.scenario.name)} / {for_rich(m.name)}[/]  "
                      f"loads: {for_rich(_loads_text(ms.scenario.loads))}  "
                      f"achieved: {for_rich(fmt_intensity(ms.scenario.intensity))}  "
                      f"CPUs: {for_rich(fmt_placement(ms.scenario))}")
        if m.command:  # a measurement that never started has none
            console.print(f"command: {for_rich(' '.join(map(str, m.command)))}")
        if m.reason:
            console.print(hanging("reason: ", fmt_probe_text(m.reason)))
        if m.series:
            console.print(series_table(ms))
        for label, s in ms.per_series:
            if s.worst:
                worst = ", ".join(f"{fmt_us(v)} µs at {t / 1e9:.3f} s"
                                  for t, v in s.worst[:5])
                console.print(hanging(f"  worst {label}: ", worst))
        for labels, note in notes_once(ms):
            console.print(hanging(f"  note {labels}: ", note))
        for v in m.verdicts:
            mark = Text("  pass ", style="green") if v.get("pass") else Text("  FAIL ",
                                                                                style="red")
            console.print(hanging(mark, f"{fmt_probe_text(v.get('name'))}: "
                                        f"{fmt_probe_text(v.get('detail'))}"))
        for heading, table in data_tables(m, kinds):
            console.print(for_rich(heading))
            console.print(table)
    console.print("\n[bold]Definitions[/]")
    for name, text in DEFINITIONS:
        console.print(f"  {name}: {text}")


def hanging(head: str | Text, text: str) -> Table:
    """head, then text wrapped under its own first word (never back to column 0)."""
    grid = Table.grid()
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(head if isinstance(head, Text) else Text(for_terminal(head)),
                 Text(for_terminal(text)))
    return grid


def scenario_table(run: RunDetail) -> FittedTable:
    """Per scenario: CPU placement and the achieved intensity, each load against its target."""
    columns = [Column("scenario", "left", wrap=True), Column("placement", "left", wrap=True),
               Column("cpu busy"), Column("ctxt/s"), Column("irq/s"), Column("loadavg 1m"),
               Column("loads (achieved / target)", "left", wrap=True)]
    rows = []
    for sc in run.scenarios:
        it = sc.intensity or {}
        busy = it.get("cpu_busy_pct")
        per_load = [fmt_load_rate(ld) or load_text(ld) for ld in it.get("loads") or []
                    if isinstance(ld, dict)]
        rows.append([
            sc.name, fmt_placement(sc), "-" if busy is None else f"{busy:.1f}%",
            fmt_per_s(it.get("ctxt_per_s")), fmt_per_s(it.get("irq_per_s")),
            "-" if it.get("loadavg_1m_max") is None else f"{it['loadavg_1m_max']:.2f} max",
            "\n".join(per_load) or ("none" if not sc.loads else "-")])
    return FittedTable(columns, rows, title="Scenarios: placement and achieved load")


def data_tables(m: MeasurementDetail,
                kinds: KindRegistry | None = None) -> list[tuple[str, FittedTable]]:
    """The result's data as (heading, table): the kind's own table (ctx's lmbench-shaped
    one), then the rest as key/value rows; kinds: the run's (run_registry)."""
    kinds = kinds or packaged()
    tables = []
    own = kinds.table(m.test, m.data)
    if own is not None:
        columns = [Column(h, "right" if i else "left", wrap=not i)
                   for i, h in enumerate(own.headers)]
        star = f" (* {own.star})" if own.star else ""
        tables.append((f"  {m.test}: {own.caption}{star}", FittedTable(columns, own.rows)))
    pairs = key_values(m.data, kinds.table_keys(m.test))
    if pairs:
        figures = kinds.headline(m.test, m.data)
        table = FittedTable([Column("key", "left", True), Column("value", "left", True)],
                            [list(pair) for pair in pairs])
        tables.append((f"  result data: {figures}" if figures else "  result data", table))
    return tables


def _loads_text(loads: list[dict[str, object]]) -> str:
    """A scenario's loads in one line, as a suite file writes them."""
    if not loads:
        return "none"
    return "; ".join(load_text(load) for load in loads)


def environment_table(run: RunDetail) -> FittedTable:
    """The environment facts as a table."""
    return FittedTable([Column("fact", "left", wrap=True), Column("value", "left", wrap=True)],
                       [list(row) for row in environment_rows(run)], title="Environment")


def preflight_table(run: RunDetail) -> FittedTable:
    """The stored preflight checks as a table."""
    columns = [Column("check", "left", wrap=True), Column("severity", "left"),
               Column("value", "left", wrap=True), Column("advice", "left", wrap=True)]
    rows = [[value_text(item.get("name", item.get("check", "?"))),
             value_text(item.get("severity", item.get("status"))),
             value_text(item.get("value")), value_text(item.get("advice") or "")]
            for item in run.preflight]
    return FittedTable(columns, rows, title="Preflight")
