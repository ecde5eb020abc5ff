"""Latency figures (histogram and per-window timeline) as inline SVG text (matplotlib)."""

from __future__ import annotations

import io
import math
import multiprocessing
import os
import re
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.ticker import (
    FuncFormatter,
    LogLocator,
    NullLocator,
    ScalarFormatter,
)

from rtbench.analysis.curves import window_means_ns
from rtbench.bundle import MeasurementDetail
from rtbench.report.text import for_matplotlib
from rtbench.rtprobe.wire import loglin7 as hist
from rtbench.rtprobe.wire.records import WindowRecord
from rtbench.util._pdeath import die_with_parent

_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
# coordinates in path data and x/y attributes: matplotlib writes 6 decimals of a point
_COORDINATES = re.compile(r'(?<= )(d|x|y)="([^"]*)"')
_LONG_DECIMAL = re.compile(r"(\d\.\d\d)\d+")
# Below this many figures a worker pool costs more than it saves.
_POOL_MIN_FIGURES = 4


def histogram_svg(m: MeasurementDetail, title: str) -> str | None:
    """The figure of a measurement as an <svg> element string: histogram and timeline.

    Top: a log-y histogram of each series, x latency in us (log scale), y the number of
    samples in each loglin7 bucket (counts, not a density: one sample reads as 1),
    with the measurement's thresholds drawn as dashed lines.  Bottom, when the
    measurement stored windows: each series' largest and mean latency per window over
    time (warm-up windows shaded), with the same thresholds.  None when the measurement
    has no samples.
    """
    series = [s for s in m.series if s.hist]
    if not series:
        return None
    windows = [w for w in m.windows if w.count and w.max_ns is not None]
    fig = Figure(figsize=(7.5, 5.6 if windows else 3.2), dpi=96)
    FigureCanvasSVG(fig)
    ax = fig.add_subplot(2 if windows else 1, 1, 1)
    for s in series:
        idx, cnt = s.hist_arrays()
        # dense over the occupied range so empty buckets show as gaps
        span = np.arange(int(idx.min()), int(idx.max()) + 1)
        counts = np.zeros(span.size, dtype=np.float64)
        counts[idx - span[0]] = cnt
        edges = np.append(hist.lower(span).astype(np.float64),
                          float(hist.upper(span[-1:])[0]) + 1.0) / 1000.0
        # the steps as one line (a stairs patch costs a third of the figure in its
        # Bezier-based limits); empty buckets drop below the axis, as stairs do
        xs = np.repeat(np.maximum(edges, 1e-3), 2)[1:-1]
        ys = np.repeat(np.where(counts > 0, counts, 1e-300), 2)
        ax.plot(xs, ys, linewidth=0.9,
                label=for_matplotlib(f"{s.label} (n={s.count:,})"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    top_count = max(float(s.hist_arrays()[1].max()) for s in series) * 2
    ax.set_ylim(0.5, top_count)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_locator(NullLocator())  # 1-2-5 majors are gridded; minor ticks cost
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("samples per bucket")
    ax.set_title(for_matplotlib(title), fontsize=10)
    ax.grid(True, which="major", linewidth=0.3)
    _plain_decades(ax, 0.5, top_count)
    _draw_thresholds(ax, m.thresholds_ns, vertical=True)
    if len(series) <= 8:
        ax.legend(fontsize=7, loc="upper right")
    if windows:
        _draw_timeline(fig.add_subplot(2, 1, 2), m, windows)
    # fixed margins instead of tight_layout(), which measures every label (half the
    # time of a figure); they fit the fixed sizes, fonts and label widths used here
    if windows:
        fig.subplots_adjust(left=0.09, right=0.98, bottom=0.08, top=0.95, hspace=0.32)
    else:
        fig.subplots_adjust(left=0.09, right=0.98, bottom=0.15, top=0.9)
    buf = io.StringIO()
    # text as <text>, not glyph outlines: smaller and searchable
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "rtbench"}):
        fig.savefig(buf, format="svg")
    text = _METADATA.sub("", _PROLOG.sub("", buf.getvalue(), count=1))
    return _COORDINATES.sub(_short_coordinates, text)


def _short_coordinates(match: re.Match[str]) -> str:
    """An SVG d/x/y attribute with its numbers cut to 2 decimals (1/100 pt: invisible).

    Six decimals make up half the size of a figure's path data.
    """
    return match.group(1) + '="' + _LONG_DECIMAL.sub(r"\1", match.group(2)) + '"'


def _plain_decades(ax: Axes, low: float, high: float) -> None:
    """Label a log y axis showing about low..high in plain text, without minor ticks.

    matplotlib's 10^k labels are mathtext, parsed anew for every figure (a quarter
    of its drawing time), and its minor ticks cost as much; the decades are gridded.
    A range of under ~1.5 decades is labelled at 1, 2 and 5 of each decade instead,
    so it always carries labels.
    """
    if low > 0 and high / low < 10 ** 1.5:
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(_plain_number))
    ax.yaxis.set_minor_locator(NullLocator())


def _plain_number(value: float, _pos: object) -> str:
    """A log-axis tick label as plain text: '0.5', '1', '20', '500', '1e3', '2e4', '1e-2'."""
    if value <= 0:
        return ""
    exponent = math.floor(math.log10(value) + 1e-9)
    mantissa = value / 10.0 ** exponent
    if 0 <= exponent <= 2 or exponent == -1:
        return f"{value:g}"
    return f"{mantissa:.3g}e{exponent}"


def _draw_thresholds(ax: Axes, thresholds_ns: list[int], *, vertical: bool) -> None:
    """The thresholds as dashed lines (vertical on a latency x axis), each labelled inside
    the axes: a vertical line's label runs up from the bottom on its left side (clear of
    the legend and the title), a horizontal line's label sits just below it."""
    for th in thresholds_ns:
        us = th / 1000.0
        label = f"{th // 1_000_000} ms" if th % 1_000_000 == 0 else f"{us:g} µs"
        if vertical:
            ax.axvline(us, color="#b00020", linestyle="--", linewidth=0.8)
            ax.annotate(f"threshold {label}", (us, 0.0), xycoords=("data", "axes fraction"),
                        xytext=(-2, 3), textcoords="offset points", fontsize=7,
                        color="#b00020", ha="right", va="bottom", rotation=90)
        else:
            ax.axhline(us, color="#b00020", linestyle="--", linewidth=0.8)
            ax.annotate(f"threshold {label}", (0.0, us), xycoords=("axes fraction", "data"),
                        xytext=(3, -2), textcoords="offset points", fontsize=7,
                        color="#b00020", va="top")


def _draw_timeline(ax: Axes, m: MeasurementDetail, windows: list[WindowRecord]) -> None:
    """Per window and series: the largest and the mean latency against time."""
    t0 = min(w.start_ns for w in windows)
    labels = {s.index: s.label for s in m.series}
    for index in sorted({w.series for w in windows}):
        own = sorted((w for w in windows if w.series == index), key=lambda w: w.start_ns)
        mid = np.array([(w.start_ns + w.end_ns) / 2 - t0 for w in own]) / 1e9
        peak = np.array([w.max_ns for w in own], dtype=np.float64) / 1000.0
        mean = np.array(window_means_ns(own)) / 1000.0
        # one window is a point, not a line
        single = len(own) == 1
        name = for_matplotlib(labels.get(index, index))
        line = ax.plot(mid, peak, marker="o" if single else ".", markersize=4 if single else 3,
                       linewidth=0 if single else 0.8, label=f"{name} max")[0]
        ax.plot(mid, mean, marker="x" if single else "", markersize=4,
                linewidth=0 if single else 0.6, linestyle=":", color=line.get_color(),
                label=f"{name} mean")
    warm = [w for w in windows if w.warmup]
    if warm:
        ax.axvspan(0.0, (max(w.end_ns for w in warm) - t0) / 1e9, color="#eeeeee",
                   label="warm-up (not in the statistics)")
    ax.set_yscale("log")
    ax.set_xlabel("time since the start (s)")
    ax.set_ylabel("latency per window (µs)")
    ax.grid(True, which="major", linewidth=0.3)
    shown = [ns / 1000.0 for ns in window_means_ns(windows)] + [
        float(w.max_ns or 0) / 1000.0 for w in windows] + [th / 1000.0 for th in m.thresholds_ns]
    positive = [v for v in shown if v > 0]
    _plain_decades(ax, min(positive, default=0.0), max(positive, default=0.0))
    _draw_thresholds(ax, m.thresholds_ns, vertical=False)
    if len({w.series for w in windows}) <= 4:
        ax.legend(fontsize=6, loc="best", ncol=2)


def _histogram_svg_args(args: tuple[MeasurementDetail, str]) -> str | None:
    """histogram_svg() of one (measurement, title) pair, for a worker pool."""
    return histogram_svg(*args)


def histogram_svgs(items: list[tuple[MeasurementDetail, str]]) -> list[str | None]:
    """histogram_svg() of each (measurement, title), in order.

    Each figure costs about 0.3 s of matplotlib layout and drawing (text
    metrics and mathtext tick labels are cached per renderer, so nothing
    carries over between figures); a 49-cell report spends nearly all its time
    here.  The figures are independent, so with several usable CPUs they are
    drawn by forked worker processes.  The SVG text is the same either way
    (fixed hash salt, no dates); without fork, with other threads running (fork
    would copy their locks) or if the pool breaks, it draws them in turn.  The
    workers are forked by this (the only) thread and die with the process.
    """
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    workers = min(cpus, len(items))
    if (workers < 2 or len(items) < _POOL_MIN_FIGURES
            or "fork" not in multiprocessing.get_all_start_methods()
            or threading.active_count() > 1):
        return [histogram_svg(m, title) for m, title in items]
    try:
        with ProcessPoolExecutor(max_workers=workers,
                                 mp_context=multiprocessing.get_context("fork"),
                                 initializer=die_with_parent,
                                 initargs=(int(signal.SIGKILL), os.getpid())) as pool:
            return list(pool.map(_histogram_svg_args, items,
                                 chunksize=max(1, len(items) // (4 * workers))))
    except (OSError, BrokenProcessPool):
        return [histogram_svg(m, title) for m, title in items]
