"""The "why" section of the HTML report: a run's traced spikes, their ranked causes and
a time-line figure of the CPU's events for each of the worst spikes.

Drawn from rtbench.analysis.trace_causes; thread and IRQ names come from the board, so
the template escapes them (autoescape) and the figure draws them literally.  A run
without trace records gets no section.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2
import markupsafe
from matplotlib.figure import Figure

from rtbench.analysis.trace_causes import CellExplanation, explain_run
from rtbench.analysis.trace_spans import KINDS
from rtbench.analysis.trace_spike import SpikeExplanation
from rtbench.bundle import RunDetail
from rtbench.report import format as fmt
from rtbench.report.explain_text import PHASE_NAMES, pct
from rtbench.report.figures import RC, _figure, svg_text
from rtbench.report.text import for_matplotlib

WORST = 3
# one colour per cause kind (colour-blind friendly set), in KINDS order
COLOURS = dict(zip(KINDS, ("#d55e00", "#e69f00", "#cc79a7", "#56b4e9", "#f0e442",
                           "#0072b2", "#999999", "#882255", "#009e73", "#dddddd"),
                   strict=True))


def spike_figure(spike: SpikeExplanation, title: str) -> Figure:
    """The spike's attributed segments and its CPU's kernel events on one time axis
    (microseconds from the expected expiry)."""
    from matplotlib import rc_context

    with rc_context(RC):
        fig, (ax,) = _figure(height=2.4)
        used: dict[str, str] = {}
        total = sum(seg.duration_ns for seg in spike.segments)
        for seg in spike.segments:
            colour = COLOURS.get(seg.cause.kind, "#dddddd")
            ax.broken_barh([(seg.start_ns / 1000, seg.duration_ns / 1000)], (1.6, 0.8),
                           facecolors=colour, edgecolors="black", linewidths=0.3)
            used.setdefault(seg.cause.kind, colour)
            if total and seg.duration_ns * 5 >= total:  # room for its name
                ax.text((seg.start_ns + seg.duration_ns / 2) / 1000, 2.0,
                        for_matplotlib(seg.cause.label[:48]), ha="center", va="center",
                        fontsize=6, clip_on=True)
        if spike.expected_ns is not None and spike.events:
            xs = [(e.ts_ns - spike.expected_ns) / 1000 for e in spike.events]
            ax.vlines(xs, 0.2, 1.2, colors="#444444", linewidths=0.6)
        ax.set_yticks([0.7, 2.0], labels=["kernel events", "causes"])
        ax.set_ylim(0, 2.8)
        ax.set_xlabel("µs from the expected wake-up")
        ax.set_title(for_matplotlib(title), loc="left")
        if used:
            from matplotlib.patches import Patch

            ax.legend(handles=[Patch(facecolor=c, label=k) for k, c in used.items()],
                      loc="upper right", fontsize=6, ncol=min(len(used), 5), frameon=False)
        fig.subplots_adjust(left=0.14, right=0.98, bottom=0.22, top=0.84)
    return fig


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """Jinja2 over the report templates, autoescaped."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True)
    env.filters.update(us=fmt.fmt_us, pct=pct)
    return env


def why_sections(run: RunDetail) -> list[str]:
    """The why section of a run (HTML), or nothing when no measurement was traced."""
    cells = [c for c in explain_run(run) if c.traced]
    if not cells:
        return []
    items = [{"cell": c, "rows": c.causes[:10], "spikes": _spikes(c)} for c in cells]
    html = _environment().get_template("why.html.j2").render(
        items=items, phases=PHASE_NAMES)
    return [html]


def _spikes(cell: CellExplanation) -> list[dict[str, object]]:
    """The worst spikes of a cell with their figures."""
    out = []
    for n, spike in enumerate(cell.worst(WORST), 1):
        where = f" on CPU {spike.cpu}" if spike.cpu is not None else ""
        title = f"{cell.name}: spike {n}, {fmt.fmt_us(spike.latency_ns)} µs{where}"
        svg = "" if not spike.segments else svg_text(spike_figure(spike, title))
        out.append({"spike": spike, "title": title, "svg": markupsafe.Markup(svg)})
    return out
