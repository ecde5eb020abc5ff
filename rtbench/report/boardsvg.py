"""Inline SVG drawings of the board pages: a cell's history (max and p99.9 per run,
kernel changes, thresholds, exceedance rate) and a combined histogram.  Plain SVG
text, every label escaped, so that a page draws in milliseconds without matplotlib.
"""

from __future__ import annotations

import math
from html import escape

from rtbench.analysis.boards import CellHistory
from rtbench.report.format import fmt_threshold, fmt_us
from rtbench.rtprobe import loglin7

WIDTH = 760
TOP_H = 220
RATE_H = 70
LEFT = 64
RIGHT = 12
MAX_COLOUR = "#c0392b"
P999_COLOUR = "#2c6fbb"
THRESHOLD_COLOUR = "#7f7f7f"


def _x(index: int, count: int) -> float:
    """The x of the index-th run of count (runs evenly spaced, in time order)."""
    span = WIDTH - LEFT - RIGHT
    return LEFT + (span * (index + 0.5) / count if count else 0.0)


def _polyline(points: list[tuple[float, float]], colour: str) -> str:
    """A line through points with a dot on each."""
    if not points:
        return ""
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{colour}"/>'
                   for x, y in points)
    return f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{path}"/>' \
        + dots


def history_svg(h: CellHistory) -> str:
    """The history of one cell as an SVG element (max, p99.9, thresholds, kernels)."""
    n = len(h.points)
    values = [v for p in h.points for v in (p.max_ns, p.p999_ns) if v is not None]
    top = max(values + h.thresholds_ns + [1]) * 1.15
    plot_h = TOP_H - 40

    def y(ns: float) -> float:
        return 20 + plot_h * (1 - ns / top)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="history" width="{WIDTH}" '
             f'height="{TOP_H + RATE_H}" viewBox="0 0 {WIDTH} {TOP_H + RATE_H}" '
             f'role="img" aria-label="history of {escape(h.cell)}">',
             f'<rect x="{LEFT}" y="20" width="{WIDTH - LEFT - RIGHT}" height="{plot_h}" '
             'fill="#fff" stroke="#ccc"/>']
    for frac in (0.0, 0.5, 1.0):
        ns = top / 1.15 * frac
        parts.append(f'<text x="{LEFT - 4}" y="{y(ns) + 4:.1f}" font-size="10" '
                     f'text-anchor="end">{escape(fmt_us(ns))} µs</text>')
    for threshold in h.thresholds_ns:
        parts.append(f'<line class="threshold" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
                     f'y1="{y(threshold):.1f}" y2="{y(threshold):.1f}" '
                     f'stroke="{THRESHOLD_COLOUR}" stroke-dasharray="6 3"/>'
                     f'<text x="{WIDTH - RIGHT - 2}" y="{y(threshold) - 3:.1f}" font-size="10" '
                     f'text-anchor="end">threshold {escape(fmt_threshold(threshold))}</text>')
    index_of = {p.run_id: i for i, p in enumerate(h.points)}
    for at_run, (_, kernel) in zip(_change_runs(h), h.kernel_changes, strict=True):
        x = _x(index_of[at_run], n) - (WIDTH - LEFT - RIGHT) / max(n, 1) / 2
        parts.append(f'<line class="kernel-change" x1="{x:.1f}" x2="{x:.1f}" y1="20" '
                     f'y2="{TOP_H + RATE_H - 4}" stroke="#555" stroke-dasharray="2 2"/>'
                     f'<text x="{x + 3:.1f}" y="14" font-size="10">{escape(kernel)}</text>')
    parts.append(_polyline([(_x(i, n), y(p.max_ns)) for i, p in enumerate(h.points)
                            if p.max_ns is not None], MAX_COLOUR))
    parts.append(_polyline([(_x(i, n), y(p.p999_ns)) for i, p in enumerate(h.points)
                            if p.p999_ns is not None], P999_COLOUR))
    parts.append(_rate_panel(h))
    parts.append(f'<text x="{LEFT}" y="{TOP_H - 6}" font-size="10">'
                 f'<tspan fill="{MAX_COLOUR}">● max</tspan>  '
                 f'<tspan fill="{P999_COLOUR}">● p99.9</tspan>  runs in time order, '
                 'dashed: kernel changes</text>')
    parts.append("</svg>")
    return "".join(parts)


def _change_runs(h: CellHistory) -> list[int]:
    """The run id where each kernel change of h begins."""
    out = []
    previous: str | None = None
    for p in h.points:
        if p.kernel != previous:
            out.append(p.run_id)
            previous = p.kernel
    return out


def _rate_panel(h: CellHistory) -> str:
    """Bars of the exceedance rate per hour under the history (unknown: no bar, '?')."""
    n = len(h.points)
    rates = [p.exceedance_rate_per_hour for p in h.points]
    known = [r for r in rates if r is not None]
    base = TOP_H + RATE_H - 8
    if not known:
        return (f'<text x="{LEFT}" y="{base - 20}" font-size="10">exceedance rate: '
                'unknown (no threshold or no measured time)</text>')
    top = max(known) or 1.0
    width = max(1.0, (WIDTH - LEFT - RIGHT) / max(n, 1) * 0.7)
    parts = [f'<text x="{LEFT - 4}" y="{base - RATE_H + 26}" font-size="10" '
             f'text-anchor="end">{top:.3g}/h</text>']
    for i, r in enumerate(rates):
        x = _x(i, n) - width / 2
        if r is None:
            parts.append(f'<text x="{x:.1f}" y="{base}" font-size="9">?</text>')
            continue
        bar = (RATE_H - 30) * r / top
        parts.append(f'<rect class="rate" x="{x:.1f}" y="{base - bar:.1f}" '
                     f'width="{width:.1f}" height="{bar:.1f}" fill="#e67e22"/>')
    parts.append(f'<text x="{LEFT}" y="{base + 7}" font-size="9">samples above the '
                 'smallest threshold per hour</text>')
    return "".join(parts)


def histogram_svg(pairs: list[tuple[int, int]], title: str) -> str:
    """A combined latency histogram (log count axis, µs on x) as an SVG element."""
    height = 220
    if not pairs:
        return ""
    idx, cnt = loglin7.to_arrays(pairs)
    lows = [int(v) for v in loglin7.lower(idx)]
    top_ns = max(lows) * 1.1 or 1
    top_count = math.log10(max(int(c) for c in cnt) + 1)
    plot_h = height - 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="combined" width="{WIDTH}" '
             f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
             f'aria-label="{escape(title)}">',
             f'<text x="{LEFT}" y="12" font-size="11">{escape(title)}</text>',
             f'<rect x="{LEFT}" y="20" width="{WIDTH - LEFT - RIGHT}" height="{plot_h}" '
             'fill="#fff" stroke="#ccc"/>']
    span = WIDTH - LEFT - RIGHT
    for low, count in zip(lows, cnt, strict=True):
        x = LEFT + span * low / top_ns
        bar = plot_h * math.log10(int(count) + 1) / top_count
        parts.append(f'<rect x="{x:.1f}" y="{20 + plot_h - bar:.1f}" width="2" '
                     f'height="{bar:.1f}" fill="#34495e"/>')
    for frac in (0.0, 0.5, 1.0):
        ns = top_ns / 1.1 * frac
        parts.append(f'<text x="{LEFT + span * ns / top_ns:.1f}" y="{height - 6}" '
                     f'font-size="10">{escape(fmt_us(ns))} µs</text>')
    parts.append(f'<text x="{LEFT - 4}" y="26" font-size="10" text-anchor="end">'
                 f'{10 ** top_count:.0f}</text><text x="{LEFT - 4}" y="{20 + plot_h}" '
                 'font-size="10" text-anchor="end">1</text></svg>')
    return "".join(parts)
