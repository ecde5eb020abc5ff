"""Matplotlib figures of a board (`rtbench plot --kind history|combined --board NAME`):
each cell's max, p99.9 and exceedance rate per run against its date with kernel changes,
thresholds and the runs the regression board flagged, and the combined histogram of its
last runs (the same content as the dashboard's /boards/NAME)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import matplotlib.dates as mdates
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from rtbench.analysis.boards import CellHistory
from rtbench.report.axis import duration_label, use_log
from rtbench.report.figures import FigureError, _dense, _figure, literal
from rtbench.rtprobe.wire import loglin7


def history_figure(board: str, found: Sequence[CellHistory],
                   marks: Callable[[CellHistory], Sequence[tuple[int, str]]] | None = None
                   ) -> Figure:
    """Per cell: max and p99.9 of each run at its date (latency labels in µs, ms or s, a
    log axis when they span more than 100x), kernel changes named, the runs marks(h)
    gives as (run id, state) marked with a diamond, over an exceedance-rate panel."""
    if not found:
        raise FigureError(f"board {board}: no run matches (simulated and non-real-time "
                          "runs are left out)")
    fig, axes = _figure(height=2.4, rows=2 * len(found))
    for number, h in enumerate(found):
        ax, rate_ax = axes[2 * number], axes[2 * number + 1]
        dates = [p.started_at for p in h.points]
        values: list[float] = [float(t) for t in h.thresholds_ns]
        for label, attr, style in (("max", "max_ns", "o-"), ("p99.9", "p999_ns", "s-")):
            known = [(d, float(getattr(p, attr))) for d, p in zip(dates, h.points, strict=True)
                     if getattr(p, attr) is not None]
            values += [v for _, v in known]
            if known:
                ax.plot([d for d, _ in known], [v for _, v in known], style, markersize=3,
                        linewidth=1, label=label)
        for threshold in h.thresholds_ns:
            ax.axhline(threshold, color="grey", linestyle="--", linewidth=0.8,
                       label=f"threshold {duration_label(threshold)}")
        _mark_regressions(ax, h, marks(h) if marks else ())
        for at, kernel in h.kernel_changes:
            for target in (ax, rate_ax):
                target.axvline(at, color="#555", linestyle=":", linewidth=0.8)
            ax.annotate(literal(kernel), (mdates.date2num(at), 1.0),  # type: ignore[no-untyped-call]
                        xycoords=("data", "axes fraction"), fontsize=6, rotation=90,
                        va="top", ha="right")
        if use_log(values):
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: duration_label(v)))
        ax.set_ylabel("latency")
        ax.set_title(literal(f"{board}: {h.suite} / {h.cell}"))
        ax.legend(fontsize=6, loc="upper left")
        rates = [(d, p.exceedance_rate_per_hour) for d, p in zip(dates, h.points, strict=True)
                 if p.exceedance_rate_per_hour is not None]
        if rates:
            span = (dates[-1] - dates[0]).total_seconds() / 86400.0
            rate_ax.bar([d for d, _ in rates], [r for _, r in rates],
                        width=max(span / max(len(dates), 1) * 0.6, 0.01), color="#e67e22")
            rate_ax.set_ylabel("above threshold /h")
        else:
            rate_ax.text(0.5, 0.5, "exceedance rate unknown (no threshold or measured time)",
                         transform=rate_ax.transAxes, ha="center", fontsize=7)
        for target in (ax, rate_ax):
            locator = mdates.AutoDateLocator(minticks=3, maxticks=8)  # type: ignore[no-untyped-call]
            target.xaxis.set_major_locator(locator)
            target.xaxis.set_major_formatter(
                mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
        rate_ax.set_xlim(ax.get_xlim())
        rate_ax.set_ylim(bottom=0)
        rate_ax.set_xlabel("run start (UTC)")
    fig.subplots_adjust(left=0.14, right=0.98, top=0.95, bottom=0.05, hspace=0.6)
    return fig


def _mark_regressions(ax: Any, h: CellHistory, marks: Sequence[tuple[int, str]]) -> None:
    """A diamond on the max of each run the regression board flagged (hollow: suspected)."""
    states = {run_id: state for run_id, state in marks}
    for state_group, face in (("suspected", "none"), ("flagged", "#8e1b10")):
        hits = [(p.started_at, float(p.max_ns)) for p in h.points
                if p.max_ns is not None and p.run_id in states
                and (states[p.run_id] == "suspected") == (state_group == "suspected")]
        if hits:
            ax.plot([d for d, _ in hits], [v for _, v in hits], "D", markersize=7,
                    markerfacecolor=face, markeredgecolor="#8e1b10", alpha=0.7,
                    label="suspected regression" if face == "none" else "regression")


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
