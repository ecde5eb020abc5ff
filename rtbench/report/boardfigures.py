"""Matplotlib figures of a board (`rtbench plot --kind history|combined --board NAME`):
each cell's max, p99.9 and exceedance rate per run over time with kernel changes and
thresholds, and the combined histogram of its last runs (the same content as the
dashboard's /boards/NAME)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from rtbench.analysis.boards import CellHistory
from rtbench.report.figures import FigureError, _dense, _figure, literal
from rtbench.rtprobe import loglin7


def history_figure(board: str, found: Sequence[CellHistory]) -> Figure:
    """Per cell: max and p99.9 (µs) per run in time order over an exceedance-rate panel."""
    if not found:
        raise FigureError(f"board {board}: no run matches (simulated and non-real-time "
                          "runs are left out)")
    fig, axes = _figure(height=2.4, rows=2 * len(found))
    for number, h in enumerate(found):
        ax, rate_ax = axes[2 * number], axes[2 * number + 1]
        xs = np.array([p.started_at.timestamp() for p in h.points])
        days = (xs - xs[0]) / 86400.0
        for label, values, style in (
                ("max", [p.max_ns for p in h.points], "o-"),
                ("p99.9", [p.p999_ns for p in h.points], "s-")):
            known = [(d, v / 1000.0) for d, v in zip(days, values, strict=True)
                     if v is not None]
            if known:
                ax.plot([d for d, _ in known], [v for _, v in known], style, markersize=3,
                        linewidth=1, label=label)
        for threshold in h.thresholds_ns:
            ax.axhline(threshold / 1000.0, color="grey", linestyle="--", linewidth=0.8,
                       label=f"threshold {threshold / 1000:g} µs")
        first = h.points[0].started_at.timestamp()
        for at, kernel in h.kernel_changes:
            x = (at.timestamp() - first) / 86400.0
            for target in (ax, rate_ax):
                target.axvline(x, color="#555", linestyle=":", linewidth=0.8)
            ax.annotate(literal(kernel), (x, 1.0), xycoords=("data", "axes fraction"),
                        fontsize=6, rotation=90, va="top", ha="right")
        ax.set_ylabel("µs")
        ax.set_ylim(bottom=0)
        ax.set_title(literal(f"{board}: {h.suite} / {h.cell}"))
        ax.legend(fontsize=6, loc="upper left")
        rates = [(d, p.exceedance_rate_per_hour) for d, p in zip(days, h.points, strict=True)
                 if p.exceedance_rate_per_hour is not None]
        if rates:
            rate_ax.bar([d for d, _ in rates], [r for _, r in rates],
                        width=max(days[-1] / max(len(days), 1) * 0.6, 0.01), color="#e67e22")
            rate_ax.set_ylabel("above threshold /h")
        else:
            rate_ax.text(0.5, 0.5, "exceedance rate unknown (no threshold or measured time)",
                         transform=rate_ax.transAxes, ha="center", fontsize=7)
        rate_ax.set_xlabel("days since the first run shown")
    fig.subplots_adjust(left=0.1, right=0.98, top=0.95, bottom=0.05, hspace=0.6)
    return fig


def combined_figure(board: str, run_ids: Sequence[int],
                    pairs: list[tuple[int, int]]) -> Figure:
    """The merged histogram of a board's last runs, log count over µs (OSADL style)."""
    if not pairs:
        raise FigureError(f"board {board}: no run with a latency histogram matches")
    fig, (ax,) = _figure()
    edges, counts = _dense(*loglin7.to_arrays(pairs))
    ax.stairs(counts, edges, linewidth=0.9,
              label=literal(f"{len(run_ids)} runs, n={int(counts.sum()):,}"))
    ax.set_yscale("log")
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("samples per bucket")
    ax.set_title(literal(f"{board}: combined histogram of the last {len(run_ids)} runs"))
    ax.legend(fontsize=6, loc="upper right")
    ax.grid(True, which="major", linewidth=0.3)
    return fig
