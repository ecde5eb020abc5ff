"""Latency histogram figures as inline SVG text (matplotlib, no pyplot)."""

from __future__ import annotations

import io
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
from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

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
        ax.stairs(density, np.maximum(edges, 1e-3), linewidth=0.9,
                  label=f"{s.label} (n={s.count:,})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("samples per µs")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", linewidth=0.3)
    if len(series) <= 8:
        ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    buf = io.StringIO()
    # text as <text>, not glyph outlines: smaller and searchable
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "rtbench"}):
        fig.savefig(buf, format="svg")
    text = _METADATA.sub("", _PROLOG.sub("", buf.getvalue(), count=1))
    return text


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
