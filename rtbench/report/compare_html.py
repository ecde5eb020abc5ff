"""Self-contained HTML report of several runs: comparison, environment differences,
the advisor's findings and figures (inline SVG)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial
from pathlib import Path

import jinja2

from rtbench.analysis.advise import CellAdvice, advise_cell
from rtbench.analysis.compare import Comparison, RunView
from rtbench.analysis.multicompare import Summary, summarize
from rtbench.analysis.select import CellKey
from rtbench.report import compare_text as ct
from rtbench.report import figures
from rtbench.report.compare_summary import fmt_value
from rtbench.report.format import fmt_template_value, fmt_us
from rtbench.report.html import write_text
from rtbench.report.parallel import run_all

BUDGET = 0.25
HORIZON_S = 3600.0


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """Jinja2 over the package templates, autoescaped."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, finalize=fmt_template_value)
    env.filters.update(us=fmt_us, signed=ct.fmt_signed_us, interval=ct.fmt_interval,
                       figure=ct.fmt_figure, cycle=ct.fmt_cycle)
    return env


def advice_of(comp: Comparison) -> list[tuple[str, list[CellAdvice]]]:
    """The advisor (25 % budget, 1 h horizon, no cycle) for each measured run's cells."""
    tasks: list[Callable[[], CellAdvice | None]] = []
    owners: list[str] = []
    for v in comp.runs:
        for cell in v.cells:
            if v.published or cell.measurement is None:
                continue
            tasks.append(partial(advise_cell, cell.key.label(), cell.measurement,
                                 budget=BUDGET, horizon_s=HORIZON_S, cycle_ns=None))
            owners.append(v.label)
    results = run_all(tasks)
    out: dict[str, list[CellAdvice]] = {v.label: [] for v in comp.runs if not v.published}
    for owner, advice in zip(owners, results, strict=True):
        if advice is not None:
            out[owner].append(advice)
    return list(out.items())


def _figure_svg(kind: str, views: list[RunView], key: CellKey | None) -> str | None:
    """One figure as SVG text, None when it cannot be drawn."""
    try:
        return figures.svg_text(figures.build(kind, views, key, "p99"))
    except figures.FigureError:
        return None


def figure_svgs(comp: Comparison) -> list[tuple[str, str]]:
    """(caption, svg) of the report's figures: a CCDF per matched cell, a p99 sweep per
    test, the achieved load."""
    jobs: list[tuple[str, str, CellKey | None]] = [
        (f"Complementary CDF, {row.key.label()}: share of samples above each latency"
         + ("; dashed: published figures" if figures.published_drawn(comp.runs, row.key)
            else ""), "ccdf", row.key) for row in comp.rows]
    jobs += [(f"p99 of every {test} cell of each run", "sweep", CellKey("", test, ""))
             for test in dict.fromkeys(row.key.test for row in comp.rows)]
    jobs.append(("Achieved load intensity per scenario", "load", None))
    svgs = run_all([partial(_figure_svg, kind, comp.runs, key) for _, kind, key in jobs])
    return [(caption, svg) for (caption, _, _), svg in zip(jobs, svgs, strict=True)
            if svg is not None]


def render(comp: Comparison, summary: Summary | None = None) -> str:
    """The page as a string (summary: the summary table, by default each run against
    the run before it with the gate's default metrics and +10 %)."""
    base = next((i for i, v in enumerate(comp.runs) if not v.published), 0)
    template = _environment().get_template("compare.html.j2")
    return template.render(
        comp=comp, base=base, views=comp.runs, advice=advice_of(comp),
        figures=figure_svgs(comp), budget_pct=f"{BUDGET * 100:g}",
        unmatched=[(comp.runs[i].label, key.label()) for i, key in comp.unmatched],
        verdict_class=_verdict_class, summary_value=fmt_value,
        summary=summary if summary is not None else summarize(comp))


def _verdict_class(verdict: str) -> str:
    """CSS class of a verdict."""
    return {"better": "good", "worse": "bad"}.get(verdict, "")


def write(comp: Comparison, path: Path, summary: Summary | None = None) -> None:
    """Write the comparison report (temp name, then rename)."""
    write_text(render(comp, summary), path)
