"""Inline SVG drawings of the board pages: a cell's history (max and p99.9 per run
against its date, labelled kernel changes, thresholds, runs the regression board marked,
exceedance rate) and a combined histogram.  Plain SVG text, every label escaped, so that
a page draws in milliseconds without matplotlib.  Every label is placed to stay inside
the SVG: the left margin grows with the longest latency label (units step µs, ms, s,
rtbench/report/axis.py), labels near an edge are anchored to it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from html import escape

from rtbench.analysis.boards import CellHistory, HistoryPoint
from rtbench.report.axis import date_ticks, duration_label, linear_ticks, log_ticks, use_log
from rtbench.report.format import fmt_threshold
from rtbench.rtprobe.wire import loglin7

WIDTH = 760
TOP_H = 240
RATE_H = 70
RIGHT = 12
PLOT_TOP = 34  # two rows of kernel labels above the plot
X_AXIS_H = 30  # date labels and the axis caption under the plot
CHAR_W = 6.2  # the most a character of the 10 px labels takes (a safe estimate)
KERNEL_CHARS = 28  # longer kernel names are cut (the full name is the tooltip)
MAX_COLOUR = "#c0392b"
P999_COLOUR = "#2c6fbb"
THRESHOLD_COLOUR = "#7f7f7f"
CONFIRMED_COLOUR = "#8e1b10"
# states of the regression board a run may be marked with, and how they are drawn
REGRESSION_STATES = ("confirmed", "regression", "suspected")


def text_width(text: str, size: float = 10) -> float:
    """An upper estimate of the width of text in px at font size size."""
    return len(text) * CHAR_W * size / 10


def _text(x: float, y: float, text: str, *, size: float = 10, anchor: str = "start",
          cls: str = "", fill: str = "") -> str:
    """A <text> element, its content escaped."""
    extra = (f' class="{cls}"' if cls else "") + (f' fill="{fill}"' if fill else "")
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" text-anchor="{anchor}"'
            f'{extra}>{escape(text)}</text>')


def _fitted(x: float, text: str, size: float = 10) -> tuple[float, str]:
    """(x, anchor) that keep text centred on x where it fits, else inside the SVG."""
    half = text_width(text, size) / 2
    if x - half < 2:
        return 2.0, "start"
    if x + half > WIDTH - 2:
        return WIDTH - 2.0, "end"
    return x, "middle"


def _polyline(points: list[tuple[float, float, str]], colour: str) -> str:
    """A line through points with a dot on each (its tooltip the third item)."""
    if not points:
        return ""
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{colour}">'
                   f'<title>{escape(tip)}</title></circle>' for x, y, tip in points)
    return f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{path}"/>' \
        + dots


class _Scale:
    """Where a latency (y) and a time (x) of one history go on the SVG."""

    def __init__(self, values: list[float], times: list[datetime], left: float) -> None:
        """The axes of values (ns, thresholds included) and times (run starts)."""
        self.log = use_log(values)
        positive = [v for v in values if v > 0]
        if self.log:
            self.ticks = log_ticks(min(positive), max(positive))
        else:
            self.ticks = linear_ticks(max(values + [0.0]))
        self.left = left
        self.plot_h = TOP_H - PLOT_TOP - X_AXIS_H
        start, end = min(times), max(times)
        if (end - start).total_seconds() < 3600:  # one run, or runs within the hour
            start, end = start - timedelta(hours=1), end + timedelta(hours=1)
        pad = (end - start) * 0.03
        self.start, self.end = start - pad, end + pad

    def y(self, ns: float) -> float:
        """The y of a latency (a log axis puts 0 and below on its floor)."""
        low, high = self.ticks[0], self.ticks[-1]
        if self.log:
            frac = 0.0 if ns <= low else (math.log10(ns) - math.log10(low)) / (
                math.log10(high) - math.log10(low))
        else:
            frac = (ns - low) / (high - low)
        return PLOT_TOP + self.plot_h * (1 - min(max(frac, 0.0), 1.0))

    def x(self, at: datetime) -> float:
        """The x of a time."""
        span = (self.end - self.start).total_seconds()
        return self.left + (WIDTH - self.left - RIGHT) * (
            (at - self.start).total_seconds() / span)


def _tip_head(p: HistoryPoint) -> str:
    """The start of the tooltips of a run's dots: run, time, kernel (the figure follows)."""
    return f"run {p.run_id}, {p.started_at.strftime('%Y-%m-%d %H:%M')} UTC, {p.kernel}: "


def history_svg(h: CellHistory, marks: Sequence[tuple[int, str]] = ()) -> str:
    """The history of one cell as an SVG element: max and p99.9 of each run at its start
    time (dates on x, latencies on a linear axis, or a log one when they span more than
    100x), thresholds, labelled kernel changes, the exceedance rate, and the runs marked
    by the regression board (marks: (run id, state), state one of REGRESSION_STATES)."""
    values = [float(v) for p in h.points for v in (p.max_ns, p.p999_ns) if v is not None]
    values += [float(t) for t in h.thresholds_ns]
    labels = [duration_label(v) for v in (log_ticks(min(x for x in values if x > 0),
                                                     max(values))
                                          if use_log(values) else
                                          linear_ticks(max(values + [0.0])))]
    left = max(40.0, max(text_width(t) for t in labels) + 10)
    scale = _Scale(values, [p.started_at for p in h.points], left)
    height = TOP_H + RATE_H
    bottom = PLOT_TOP + scale.plot_h
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="history" width="{WIDTH}" '
             f'height="{height}" viewBox="0 0 {WIDTH} {height}" '
             f'role="img" aria-label="history of {escape(h.cell)}">',
             f'<rect x="{left:.1f}" y="{PLOT_TOP}" width="{WIDTH - left - RIGHT:.1f}" '
             f'height="{scale.plot_h}" fill="#fff" stroke="#ccc"/>']
    for ns in scale.ticks:
        y = scale.y(ns)
        parts.append(f'<line x1="{left:.1f}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
                     'stroke="#eee"/>')
        parts.append(_text(left - 4, y + 4, duration_label(ns), anchor="end", cls="y-tick"))
    ticks, fmt, phrase = date_ticks(scale.start, scale.end)
    for at in ticks:
        x = scale.x(at)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{bottom}" y2="{bottom + 4}" '
                     'stroke="#999"/>')
        label = at.strftime(fmt)
        tx, anchor = _fitted(x, label)
        parts.append(_text(tx, bottom + 15, label, anchor=anchor, cls="x-tick"))
    for threshold in h.thresholds_ns:
        y = scale.y(threshold)
        parts.append(f'<line class="threshold" x1="{left:.1f}" x2="{WIDTH - RIGHT}" '
                     f'y1="{y:.1f}" y2="{y:.1f}" stroke="{THRESHOLD_COLOUR}" '
                     'stroke-dasharray="6 3"/>')
        parts.append(_text(WIDTH - RIGHT - 2, y - 3, f"threshold {fmt_threshold(threshold)}",
                           anchor="end"))
    parts.extend(_kernel_changes(h, scale, height))
    xs = [scale.x(p.started_at) for p in h.points]
    heads = [_tip_head(p) for p in h.points]
    for colour, what, attr in ((MAX_COLOUR, "max", "max_ns"), (P999_COLOUR, "p99.9", "p999_ns")):
        parts.append(_polyline([(x, scale.y(value), f"{head}{what} {duration_label(value)}")
                                for x, head, value in zip(
                                    xs, heads, (getattr(p, attr) for p in h.points),
                                    strict=True) if value is not None], colour))
    parts.extend(_regression_marks(h, scale, marks))
    parts.append(_peak_label(h, scale))
    parts.append(_rate_panel(h, scale))
    axis = "log axis" if scale.log else "linear axis"
    parts.append(f'<text x="{left:.1f}" y="{bottom + 27}" font-size="10">'
                 f'<tspan fill="{MAX_COLOUR}">● max</tspan>  '
                 f'<tspan fill="{P999_COLOUR}">● p99.9</tspan>  run start (UTC), '
                 f'{escape(phrase)}; {axis}; dashed: kernel changes'
                 + ('; ◆ regression' if marks else '') + '</text>')
    parts.append("</svg>")
    return "".join(parts)


def _kernel_changes(h: CellHistory, scale: _Scale, height: float) -> list[str]:
    """A dashed line at each kernel change and its name above the plot, in the first of
    two rows where it does not overlap the label before it."""
    parts: list[str] = []
    row_end = [-1e9, -1e9]  # where the last label of each row ends
    for at, kernel in h.kernel_changes:
        x = scale.x(at)
        shown = kernel if len(kernel) <= KERNEL_CHARS else kernel[:KERNEL_CHARS - 1] + "…"
        width = text_width(shown)
        start = x + 3 if x + 3 + width <= WIDTH - 2 else x - 3 - width
        start = max(2.0, start)
        row = 0 if start > row_end[0] + 4 else 1
        row_end[row] = start + width
        parts.append(f'<line class="kernel-change" x1="{x:.1f}" x2="{x:.1f}" '
                     f'y1="{PLOT_TOP}" y2="{height - 4}" stroke="#555" '
                     'stroke-dasharray="2 2"/>')
        parts.append(f'<text class="kernel" x="{start:.1f}" y="{12 + 12 * row}" '
                     f'font-size="10"><title>{escape(kernel)}</title>{escape(shown)}</text>')
    return parts


def _regression_marks(h: CellHistory, scale: _Scale, marks: Sequence[tuple[int, str]]
                      ) -> list[str]:
    """A diamond around the max of each marked run: filled when confirmed (or a stored
    regression), hollow when only suspected."""
    states = {run_id: state for run_id, state in marks if state in REGRESSION_STATES}
    parts = []
    for p in h.points:
        state = states.get(p.run_id)
        value = p.max_ns if p.max_ns is not None else p.p999_ns
        if state is None or value is None:
            continue
        x, y = scale.x(p.started_at), scale.y(value)
        fill = "none" if state == "suspected" else CONFIRMED_COLOUR
        parts.append(f'<path class="regression {escape(state)}" d="M{x:.1f},{y - 6:.1f} '
                     f'L{x + 6:.1f},{y:.1f} L{x:.1f},{y + 6:.1f} L{x - 6:.1f},{y:.1f} Z" '
                     f'fill="{fill}" fill-opacity="0.6" stroke="{CONFIRMED_COLOUR}">'
                     f'<title>run {p.run_id}: {escape(state)} regression</title></path>')
    return parts


def _peak_label(h: CellHistory, scale: _Scale) -> str:
    """The largest max, written next to its dot ('9.4 s')."""
    known = [p for p in h.points if p.max_ns is not None]
    if not known:
        return ""
    peak = max(known, key=lambda p: p.max_ns or 0)
    assert peak.max_ns is not None
    label = duration_label(peak.max_ns, significant=2)
    x, y = scale.x(peak.started_at), max(scale.y(peak.max_ns) - 6, PLOT_TOP + 10)
    if x + 6 + text_width(label) <= WIDTH - 2:
        return _text(x + 6, y, label, cls="peak", fill=MAX_COLOUR)
    return _text(x - 6, y, label, anchor="end", cls="peak", fill=MAX_COLOUR)


def _rate_panel(h: CellHistory, scale: _Scale) -> str:
    """Bars of the exceedance rate per hour under the history (unknown: no bar, '?')."""
    n = len(h.points)
    rates = [p.exceedance_rate_per_hour for p in h.points]
    known = [r for r in rates if r is not None]
    base = TOP_H + RATE_H - 10
    if not known:
        return (f'<text x="{scale.left:.1f}" y="{base - 20}" font-size="10">exceedance rate: '
                'unknown (no threshold or no measured time)</text>')
    top = max(known) or 1.0
    width = max(1.5, min(12.0, (WIDTH - scale.left - RIGHT) / max(n, 1) * 0.7))
    parts = [_text(scale.left - 4, base - RATE_H + 30, f"{top:.3g}/h", anchor="end")]
    for p, r in zip(h.points, rates, strict=True):
        x = scale.x(p.started_at) - width / 2
        if r is None:
            parts.append(f'<text x="{x:.1f}" y="{base}" font-size="9">?</text>')
            continue
        bar = (RATE_H - 34) * r / top
        parts.append(f'<rect class="rate" x="{x:.1f}" y="{base - bar:.1f}" '
                     f'width="{width:.1f}" height="{bar:.1f}" fill="#e67e22"/>')
    parts.append(f'<text x="{scale.left:.1f}" y="{base + 8}" font-size="9">samples above the '
                 'smallest threshold per hour</text>')
    return "".join(parts)


def histogram_svg(pairs: list[tuple[int, int]], title: str) -> str:
    """A combined latency histogram (log count axis, latency on x) as an SVG element."""
    height = 220
    if not pairs:
        return ""
    idx, cnt = loglin7.to_arrays(pairs)
    lows = [int(v) for v in loglin7.lower(idx)]
    top_ns = max(lows) * 1.1 or 1
    top_count = math.log10(max(int(c) for c in cnt) + 1)
    plot_h = height - 40
    count_label = f"{10 ** top_count:.0f}"
    left = max(40.0, text_width(count_label) + 10)
    span = WIDTH - left - RIGHT
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="combined" width="{WIDTH}" '
             f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
             f'aria-label="{escape(title)}">',
             _text(left, 12, title, size=11),
             f'<rect x="{left:.1f}" y="20" width="{span:.1f}" height="{plot_h}" '
             'fill="#fff" stroke="#ccc"/>']
    for low, count in zip(lows, cnt, strict=True):
        x = left + span * low / top_ns
        bar = plot_h * math.log10(int(count) + 1) / top_count
        parts.append(f'<rect x="{x:.1f}" y="{20 + plot_h - bar:.1f}" width="2" '
                     f'height="{bar:.1f}" fill="#34495e"/>')
    for ns in linear_ticks(top_ns / 1.1):
        if ns > top_ns:
            continue
        label = duration_label(ns)
        x, anchor = _fitted(left + span * ns / top_ns, label)
        parts.append(_text(x, height - 6, label, anchor=anchor, cls="x-tick"))
    parts.append(_text(left - 4, 26, count_label, anchor="end"))
    parts.append(_text(left - 4, 20 + plot_h, "1", anchor="end"))
    parts.append("</svg>")
    return "".join(parts)
