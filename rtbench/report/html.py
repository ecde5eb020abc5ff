"""Self-contained HTML report of one run (Jinja2 template, inline SVG)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2
import markupsafe

from rtbench.analysis.environment import environment_rows
from rtbench.analysis.measurement import run_stats
from rtbench.analysis.stats import PERCENTILES
from rtbench.analysis.verdict import cell_state, verdict_of
from rtbench.bundle import RunDetail
from rtbench.core.valuetext import value_text
from rtbench.kinds import run_registry
from rtbench.report import format as fmt
from rtbench.report.plot import histogram_svgs
from rtbench.report.resultdata import key_values
from rtbench.report.suitetext import load_text
from rtbench.report.verdict import actions
from rtbench.report.why import why_sections
from rtbench.rtprobe.wire.loglin7 import BUCKET_ERROR_BOUND
from rtbench.util.atomicfile import write_atomic


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """The Jinja2 environment over the package's templates (made once: the server
    renders a report for every run page it serves)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, finalize=fmt.fmt_template_value)
    env.filters.update(us=fmt.fmt_us, count=fmt.fmt_count,
                       rate=fmt.fmt_rate, threshold=fmt.fmt_threshold,
                       exceed=fmt.fmt_exceed, intensity=fmt.fmt_intensity,
                       load_rate=fmt.fmt_load_rate, placement=fmt.fmt_placement,
                       per_s=fmt.fmt_per_s, load_text=load_text, probe_text=fmt.fmt_probe_text,
                       value=lambda pairs: value_text(dict(pairs)))
    return env


def study_sections(runs: list[RunDetail], name: str | None = None) -> list[str]:
    """The study layout section for runs: the one asked for (name), else the one whose
    suite the first run ran (a built-in study suite), else none.  LayoutError propagates
    only when a layout was asked for by name."""
    from rtbench.analysis.layouts import LayoutError, build_layout, layout_names
    from rtbench.reference import reference_runs
    from rtbench.report.layouts import layout_html

    chosen = name or (runs[0].suite if runs and runs[0].suite in layout_names() else None)
    if chosen is None:
        return []
    try:
        return [layout_html(build_layout(chosen, runs, reference_runs()))]
    except LayoutError:
        if name is not None:
            raise
        return []


def render_html(run: RunDetail, sections: list[str] | None = None, *,
                figures: bool = True) -> str:
    """The report page as a string; sections (already escaped HTML, e.g. a study layout)
    go after the verdict, and a run of a study suite gets its study's layout; figures:
    False leaves out the per-measurement histograms (a part of a huge run)."""
    measurements = []
    stats = run_stats(run)
    mark = ("SIMULATED: " if run.simulated else "") + ("EMULATED: " if run.emulated else "")
    svgs = histogram_svgs([(ms.measurement,
                            f"{mark}{ms.scenario.name} / {ms.measurement.name}")
                           for ms in stats]) if figures else [None] * len(stats)
    kinds = run_registry(run.source)
    for ms, svg in zip(stats, svgs, strict=True):
        m = ms.measurement
        state, reason = cell_state(m)
        measurements.append({
            "ms": ms, "rows": ms.table_rows(), "svg": svg,
            "state": state, "reason": reason if state != "ok" else None,
            "notes": fmt.notes_once(ms),
            "caption": fmt.figure_caption(m, f"{BUCKET_ERROR_BOUND * 100:.2f}"),
            "headline": kinds.headline(m.test, m.data),
            "table": kinds.table(m.test, m.data),
            "data": key_values(m.data, kinds.table_keys(m.test))})
    verdict = verdict_of(run)
    template = _environment().get_template("report.html.j2")
    return template.render(
        run=run, measurements=measurements, verdict=verdict,
        verdict_actions=actions(verdict),
        environment=environment_rows(run),
        percentiles=[label for label, _ in PERCENTILES],
        definitions=fmt.DEFINITIONS,
        bucket_error_pct=f"{BUCKET_ERROR_BOUND * 100:.2f}",
        with_intensity=any(sc.intensity for sc in run.scenarios),
        sections=[markupsafe.Markup(s) for s in
                  (study_sections([run]) if sections is None else sections)
                  + why_sections(run)])


def write_html_report(run: RunDetail, path: Path, sections: list[str] | None = None) -> None:
    """Write the report to path (via a temporary name, then rename)."""
    write_text(render_html(run, sections), path)


def write_layout_page(title: str, sections: list[str], path: Path) -> None:
    """A self-contained page holding study layout sections (several runs side by side)."""
    template = _environment().get_template("layout.html.j2")
    write_text(template.render(title=title,
                               sections=[markupsafe.Markup(s) for s in sections]), path)


def write_text(text: str, path: Path) -> None:
    """Write text to path whole or not at all (rtbench.util.atomicfile)."""
    write_atomic(path, text.encode("utf-8"))
