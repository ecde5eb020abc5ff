"""Latency histogram figures as inline SVG text (matplotlib, no pyplot)."""

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
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.ticker import (
    FuncFormatter,
    LogLocator,
    NullFormatter,
    NullLocator,
    ScalarFormatter,
)

from rtbench._pdeath import die_with_parent
from rtbench.bundle import MeasurementDetail
from rtbench.wire import loglin7 as hist

_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
# Below this many figures a worker pool costs more than it saves.
_POOL_MIN_FIGURES = 4


def histogram_svg(m: MeasurementDetail, title: str) -> str | None:
    """A log-y histogram of each series of m as an <svg> element string.

    x: latency in us (log scale); y: samples per us of bucket width (log),
    one step per loglin7 bucket.  None when the measurement has no samples.
    """
    series = [s for s in m.series if s.hist]
    if not series:
        return None
    fig = Figure(figsize=(7.5, 3.2), dpi=96)
    FigureCanvasSVG(fig)
    ax = fig.add_subplot(1, 1, 1)
    lowest, highest = float("inf"), 0.0
    for s in series:
        idx, cnt = s.hist_arrays()
        # dense over the occupied range so empty buckets show as gaps
        span = np.arange(int(idx.min()), int(idx.max()) + 1)
        counts = np.zeros(span.size, dtype=np.float64)
        counts[idx - span[0]] = cnt
        edges = np.append(hist.lower(span).astype(np.float64),
                          float(hist.upper(span[-1:])[0]) + 1.0) / 1000.0
        # samples per us: buckets double in width at each power of two,
        # so raw counts per bucket would show false steps there
        density = counts / np.diff(edges)
        # the steps as one line (a stairs patch costs a third of the figure in its
        # Bezier-based limits); empty buckets drop below the axis, as stairs do
        lowest = min(lowest, float(density[density > 0].min()))
        highest = max(highest, float(density.max()))
        xs = np.repeat(np.maximum(edges, 1e-3), 2)[1:-1]
        ys = np.repeat(np.where(density > 0, density, 1e-300), 2)
        ax.plot(xs, ys, linewidth=0.9, label=f"{s.label} (n={s.count:,})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(lowest / 2, highest * 2)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("samples per µs")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", linewidth=0.3)
    # plain-text powers of ten: matplotlib's 10^k labels are mathtext, parsed anew
    # for every figure, a quarter of its drawing time
    ax.yaxis.set_major_formatter(FuncFormatter(_power_of_ten))
    ax.yaxis.set_minor_locator(NullLocator())  # decades are gridded; minor ticks cost
    if len(series) <= 8:
        ax.legend(fontsize=7, loc="upper right")
    # fixed margins instead of tight_layout(), which measures every label (half the
    # time of a figure); they fit the fixed size, fonts and label widths used here
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.15, top=0.9)
    buf = io.StringIO()
    # text as <text>, not glyph outlines: smaller and searchable
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "rtbench"}):
        fig.savefig(buf, format="svg")
    text = _METADATA.sub("", _PROLOG.sub("", buf.getvalue(), count=1))
    return text


def _power_of_ten(value: float, _pos: object) -> str:
    """A log-axis tick label as plain text: '1', '10', '100', '1e3' ... '1e-2'."""
    if value <= 0:
        return ""
    exponent = round(math.log10(value))
    if abs(value - 10.0 ** exponent) > 1e-9 * value:
        return ""
    return f"{10 ** exponent:g}" if 0 <= exponent <= 2 else f"1e{exponent}"


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
