"""The figures of `rtbench plot` and of the comparison reports (matplotlib, no pyplot).

Every builder returns a matplotlib Figure whose axes carry units and whose title
names host, kernel and test; user text (host names, labels) is drawn literally
(usetex off, `$` escaped, so no mathtext).  Published reference runs join where
they have the figure: a histogram when the paper printed one, else their max as a
dashed line labelled "published".
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from rtbench.analysis.compare import CellData, RunView
from rtbench.analysis.curves import ccdf_us, fixed_width_ccdf_us, merged_windows
from rtbench.analysis.select import CellKey, ref_matches
from rtbench.rtprobe.wire import loglin7 as hist
from rtbench.util.atomicfile import write_atomic

KINDS = ("hist", "timeline", "ccdf", "sweep", "load")
FORMATS = ("svg", "png", "pdf")
RC: Any = {"text.usetex": False, "svg.fonttype": "none", "svg.hashsalt": "rtbench",
      "axes.titlesize": 9, "font.size": 8}
_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)


class FigureError(ValueError):
    """A figure that cannot be drawn from these runs (one line for the user)."""


def literal(text: object) -> str:
    """User text drawn as is: '$' escaped so matplotlib never starts mathtext."""
    return str(text).replace("$", r"\$")


def _figure(height: float = 3.4, rows: int = 1) -> tuple[Figure, list]:  # type: ignore[type-arg]
    """A figure with rows stacked axes (Agg canvas; saving picks the format)."""
    fig = Figure(figsize=(7.5, height * rows if rows > 1 else height), dpi=96)
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(rows, 1, i + 1) for i in range(rows)]
    return fig, axes


def _fixed_layout(fig: Figure, ax: Any) -> None:
    """Margins for one axes with a title of a few lines (instead of tight_layout, which
    measures every label and costs half a figure)."""
    lines = ax.get_title().count("\n") + 1
    height = fig.get_figheight()
    top = 1.0 - (0.16 + 0.15 * lines) / height
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.45 / height + 0.03, top=top)


def cell_of(view: RunView, key: CellKey) -> CellData | None:
    """The view's cell for key (published runs: the loose match)."""
    for cell in view.cells:
        if (ref_matches(cell.key, key) if view.published else cell.key == key):
            return cell
    return None


def title(views: Sequence[RunView], what: str) -> str:
    """'what — run 3 on box (6.1.0-rt); ref:x ...' literal; 'SIMULATED: ' first when a
    run drawn is simulated, each such run marked SIMULATED."""
    names = "; ".join(f"{v.label}: {v.hostname}, {v.kernel}"
                      + (" (published, not measured here)" if v.published else "")
                      + (" (SIMULATED)" if _simulated(v) else "")
                      for v in views)
    if any(_simulated(v) for v in views):
        what = f"SIMULATED: {what}"
    if len(names) > 600:
        names = names[:597] + "..."
    return literal("\n".join([what, *textwrap.wrap(names, 95)]))


def _simulated(view: RunView) -> bool:
    """Whether a view is a simulated run."""
    return view.run is not None and bool(view.run.simulated)


def published_drawn(views: Sequence[RunView], key: CellKey) -> bool:
    """Whether a figure of key draws a published cell (dashed)."""
    return any(v.published and cell_of(v, key) is not None for v in views)


def _plain_us(axis: object) -> None:
    """Latency tick labels as plain numbers (no 10^x notation)."""
    plain = FuncFormatter(lambda v, _pos: f"{v:g}")
    axis.set_major_formatter(plain)  # type: ignore[attr-defined]

    def minor(v: float, _pos: object) -> str:
        lo, hi = axis.get_view_interval()  # type: ignore[attr-defined]
        narrow = lo > 0 and hi / lo < 10
        return f"{v:g}" if narrow or f"{v:g}"[0] in "25" else ""

    axis.set_minor_formatter(FuncFormatter(minor))  # type: ignore[attr-defined]


def _published_max(ax: object, views: Sequence[RunView], key: CellKey, used: list[str]) -> None:
    """Dashed vertical lines at the published max of published cells without a histogram."""
    for v in views:
        cell = cell_of(v, key) if v.published else None
        if cell is None or cell.reference is None or cell.reference.hist:
            continue
        peak = cell.figures.get("max")
        if peak is not None:
            ax.axvline(peak / 1000.0, linestyle="--", linewidth=1.0,  # type: ignore[attr-defined]
                       label=literal(f"{v.label} max {peak / 1000:g} µs (published)"))
            used.append(v.label)


def _dense(idx: hist.I64, cnt: hist.I64) -> tuple[np.ndarray, np.ndarray]:
    """(edges in us, counts) dense over the occupied loglin7 range."""
    span = np.arange(int(idx.min()), int(idx.max()) + 1)
    counts = np.zeros(span.size, dtype=np.float64)
    counts[idx - span[0]] = cnt
    edges = np.append(hist.lower(span).astype(np.float64),
                      float(hist.upper(span[-1:])[0]) + 1.0) / 1000.0
    return np.maximum(edges, 1e-3), counts


def hist_figure(views: Sequence[RunView], key: CellKey) -> Figure:
    """Log-y latency histogram per CPU (series), runs overlaid (the OSADL style)."""
    fig, (ax,) = _figure()
    drawn = 0
    for v in views:
        cell = cell_of(v, key)
        if cell is None:
            continue
        if cell.measurement is not None:
            for s in cell.measurement.series:
                if not s.hist:
                    continue
                edges, counts = _dense(*s.hist_arrays())
                ax.stairs(counts / np.diff(edges), edges, linewidth=0.9,
                          label=literal(f"{v.label} {s.label} (n={s.count:,})"))
                drawn += 1
        elif cell.reference is not None and cell.reference.hist:
            width = cell.reference.hist_width_ns / 1000.0
            lows = np.array([lo for lo, _ in cell.reference.hist]) / 1000.0
            counts = np.array([c for _, c in cell.reference.hist], dtype=np.float64)
            ax.step(np.maximum(lows + width / 2, 1e-3), counts / width, where="mid",
                    linestyle="--", linewidth=0.9,
                    label=literal(f"{v.label} (published histogram)"))
            drawn += 1
    refs: list[str] = []
    _published_max(ax, views, key, refs)
    if not drawn:
        raise FigureError(f"no run has a histogram for {key.label()}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_us(ax.xaxis)
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("samples per µs")
    ax.set_title(title(views, f"latency histogram: {key.label()}"))
    ax.grid(True, which="major", linewidth=0.3)
    ax.legend(fontsize=6, loc="upper right")
    _fixed_layout(fig, ax)
    return fig


def ccdf_figure(views: Sequence[RunView], key: CellKey) -> Figure:
    """Complementary CDF on log-log axes: the share of samples above each latency."""
    fig, (ax,) = _figure()
    drawn = 0
    for v in views:
        cell = cell_of(v, key)
        if cell is None:
            continue
        series = [s for s in cell.measurement.series if s.hist] \
            if cell.measurement is not None else []
        if series:
            idx, cnt = hist.merge(*(s.hist_arrays() for s in series))
            x, p = ccdf_us(idx, cnt, cell.figures.get("max"))
            ax.step(x, p, where="post", linewidth=1.0,
                    label=literal(f"{v.label} (n={int(cnt.sum()):,})"))
            drawn += 1
        elif cell.reference is not None and cell.reference.hist:
            x, p = fixed_width_ccdf_us(cell.reference.hist, cell.reference.hist_width_ns)
            ax.step(x, p, where="post", linestyle="--", linewidth=1.0,
                    label=literal(f"{v.label} (published histogram)"))
            drawn += 1
    refs: list[str] = []
    _published_max(ax, views, key, refs)
    if not drawn:
        raise FigureError(f"no run has a distribution for {key.label()}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_us(ax.xaxis)
    ax.set_xlabel("latency (µs)")
    ax.set_ylabel("share of samples above (1)")
    ax.set_title(title(views, f"complementary CDF: {key.label()}"))
    ax.grid(True, which="major", linewidth=0.3)
    ax.legend(fontsize=6, loc="lower left")
    _fixed_layout(fig, ax)
    return fig


def timeline_figure(views: Sequence[RunView], key: CellKey) -> Figure:
    """Per-window min/avg/max over time, overruns and worst samples marked; one
    panel per measured run."""
    measured: list[tuple[RunView, CellData]] = []
    for v in views:
        c = cell_of(v, key) if not v.published else None
        if c is not None and c.measurement is not None:
            measured.append((v, c))
    if not measured:
        raise FigureError(f"no measured run has windows for {key.label()} "
                          "(published runs have no time line)")
    fig, axes = _figure(2.6, len(measured))
    for ax, (v, cell) in zip(axes, measured, strict=True):
        m = cell.measurement
        assert m is not None
        rows = merged_windows(m.windows)
        if rows:
            t = np.array([r.mid_s for r in rows])
            peak = np.array([r.max_ns for r in rows], dtype=np.float64) / 1000
            ax.plot(t, peak, linewidth=0.9, label="max")
            ax.plot(t, np.array([r.mean_ns for r in rows]) / 1000, linewidth=0.9, label="avg")
            ax.plot(t, np.array([r.min_ns for r in rows], dtype=np.float64) / 1000,
                    linewidth=0.9, label="min")
            over = np.array([r.overruns > 0 for r in rows])
            if over.any():
                ax.plot(t[over], peak[over], "rx", label="window with overruns")
        worst = [(tt, lat) for s in m.series for tt, lat in s.worst]
        if worst:
            ax.plot([tt / 1e9 for tt, _ in worst], [lat / 1000 for _, lat in worst], "kv",
                    markersize=4, label="worst samples")
        ax.set_yscale("log")
        _plain_us(ax.yaxis)
        ax.set_xlabel("time since start (s)")
        ax.set_ylabel("latency (µs)")
        ax.set_title(title([v], f"per-window latency: {key.label()}"))
        ax.grid(True, linewidth=0.3)
        ax.legend(fontsize=6, loc="upper right")
    fig.tight_layout()
    return fig


def sweep_figure(views: Sequence[RunView], test: str, metric: str) -> Figure:
    """A percentile against the cells (scenario and parameters) of one test."""
    anchor = next((v for v in views if not v.published), views[0])
    keys = [c.key for c in anchor.cells if c.key.test == test]
    if not keys:
        raise FigureError(f"{anchor.label} has no {test} cells to sweep")
    fig, (ax,) = _figure()
    x = np.arange(len(keys))
    drawn = 0
    for v in views:
        values = []
        for key in keys:
            cell = cell_of(v, key)
            value = cell.figures.get(metric) if cell is not None else None
            values.append(np.nan if value is None else value / 1000.0)
        if all(np.isnan(values)):
            continue
        # a single value is a point: a line through one point draws nothing honest
        single = int(np.count_nonzero(~np.isnan(values))) == 1
        style = "o" if single else ("--o" if v.published else "-o")
        ax.plot(x, values, style, linewidth=1.0, markersize=5 if single else 3,
                label=literal(v.label + (" (published)" if v.published else "")))
        drawn += 1
    if not drawn:
        raise FigureError(f"no run has {metric} for the {test} cells")
    ax.set_xticks(x)
    ax.set_xticklabels([literal(k.label().replace(f" / {test}", "")) for k in keys],
                       rotation=30, ha="right", fontsize=6)
    ax.set_yscale("log")
    _plain_us(ax.yaxis)
    ax.set_xlabel("scenario and parameters")
    ax.set_ylabel(f"{metric} latency (µs)")
    ax.set_title(title(views, f"{metric} of {test} per cell"))
    ax.grid(True, linewidth=0.3)
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def load_figure(views: Sequence[RunView]) -> Figure:
    """Achieved load intensity per scenario in run order: CPU busy % and context
    switches per second, one bar per measured run."""
    measured = [v for v in views if v.run is not None]
    scenarios: list[str] = []
    for v in measured:
        assert v.run is not None
        scenarios.extend(sc.name for sc in v.run.scenarios if sc.name not in scenarios)
    if not scenarios:
        raise FigureError("no measured run has scenarios with a recorded load intensity")
    fig, axes = _figure(2.4, 2)
    width = 0.8 / max(1, len(measured))
    x = np.arange(len(scenarios))
    for i, v in enumerate(measured):
        assert v.run is not None
        its = {sc.name: sc.intensity or {} for sc in v.run.scenarios}
        for ax, field in zip(axes, ("cpu_busy_pct", "ctxt_per_s"), strict=True):
            vals = [its.get(s, {}).get(field) for s in scenarios]
            ax.bar(x + i * width, [np.nan if a is None else a for a in vals], width,
                   label=literal(v.label))
    axes[0].set_ylabel("CPU busy (%)")
    axes[1].set_ylabel("context switches per s (1/s)")
    for ax in axes:
        ax.set_xticks(x + width * (len(measured) - 1) / 2)
        ax.set_xticklabels([literal(s) for s in scenarios], rotation=20, ha="right")
        ax.set_xlabel("scenario (run order)")
        ax.grid(True, axis="y", linewidth=0.3)
        ax.legend(fontsize=6)
    axes[0].set_title(title(measured, "achieved load intensity"))
    fig.tight_layout()
    return fig


def svg_text(fig: Figure) -> str:
    """The figure as an inline <svg> element (no XML prolog, no metadata)."""
    buf = io.StringIO()
    with rc_context(RC):
        fig.savefig(buf, format="svg")
    return _METADATA.sub("", _PROLOG.sub("", buf.getvalue(), count=1))


def save(fig: Figure, path: Path) -> None:
    """Write the figure to path (format from the suffix) via a temp name and rename."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise FigureError(f"{path}: the file name must end in .svg, .png or .pdf")
    def draw(out: BinaryIO) -> None:
        with rc_context(RC):
            fig.savefig(out, format=fmt)

    write_atomic(path, draw)


def build(kind: str, views: Sequence[RunView], key: CellKey | None, metric: str) -> Figure:
    """The figure of one kind (key: the cell; for sweep its test is used)."""
    builders: dict[str, Callable[[], Figure]] = {
        "hist": lambda: hist_figure(views, _need(key)),
        "ccdf": lambda: ccdf_figure(views, _need(key)),
        "timeline": lambda: timeline_figure(views, _need(key)),
        "sweep": lambda: sweep_figure(views, _need(key).test, metric),
        "load": lambda: load_figure(views),
    }
    if kind not in builders:
        raise FigureError(f"--kind {kind}: use one of {', '.join(KINDS)}")
    with rc_context(RC):
        return builders[kind]()


def _need(key: CellKey | None) -> CellKey:
    """The cell key, or an error saying a cell is needed."""
    if key is None:
        raise FigureError("no cell to draw: the runs have no latency cell in common")
    return key
