"""The five published studies' own table shapes, filled with stored runs (pure, no I/O).

`build_layout(name, runs, references)` returns the tables a study printed — the Loongson
table (max/avg/stddev per load, intervals pooled), the lmbench `lat_ctx` table, the ARM
table with its decision line, the IBM-style PASS/FAIL table with the gtod histogram, the
RTAI table with image and footprint — with one column group per run and the published
figures beside them, labelled as published with their platform and kernel.  A run that
lacks every test a layout needs is refused with a LayoutError naming what is missing.
Cells hold numbers in microseconds (floats), counts (ints), text, or None (not measured /
not published); report/layouts.py formats them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rtbench.analysis.reference import PUBLISHED_LABEL, ReferenceCell, ReferenceRun
from rtbench.analysis.stats import LatencyStats, merged_stats
from rtbench.bundle import MeasurementDetail, RunDetail, ScenarioDetail, SeriesDetail
from rtbench.kinds import run_registry
from rtbench.rtprobe.wire import loglin7

Cell = float | int | str | None

# the 25 % rule of the ARM study (reference/README.md): worst case <= 25 % of the cycle
CYCLE_BUDGET = 0.25


class LayoutError(ValueError):
    """A layout asked of runs that cannot fill it; the message is one line (exit 2)."""


@dataclass
class LayoutTable:
    """One table of a study, as the study printed it."""

    title: str
    columns: list[str]
    rows: list[list[Cell]]
    notes: list[str] = field(default_factory=list)


@dataclass
class Layout:
    """A study's tables filled with runs, plus where the published figures come from."""

    name: str
    title: str
    tables: list[LayoutTable]
    sources: list[str]  # one line per published column: name, platform, kernel, label
    notes: list[str] = field(default_factory=list)


def _us(ns: float | int | None) -> float | None:
    """Nanoseconds as microseconds."""
    return None if ns is None else ns / 1000.0


def _run_label(run: RunDetail) -> str:
    """How a run heads its columns: id, host and kernel."""
    return f"run {run.id} ({run.hostname}, {run.kernel})"


def _ref_label(ref: ReferenceRun) -> str:
    """How a reference run heads its column."""
    return f"published: {ref.name}"


def _source_line(ref: ReferenceRun) -> str:
    """The provenance line of a published column."""
    return f"{_ref_label(ref)} = {ref.platform}; kernel {ref.kernel}; {ref.label} ({ref.file})"


def _measurements(run: RunDetail, test: str,
                  scenario: str | None = None) -> list[tuple[ScenarioDetail, MeasurementDetail]]:
    """The run's measurements of one test kind (in one scenario when given)."""
    return [(sc, m) for sc in run.scenarios for m in sc.measurements
            if m.test == test and (scenario is None or sc.name == scenario)]


def _pooled(measurements: Sequence[MeasurementDetail]) -> LatencyStats | None:
    """Statistics of every series of the measurements pooled into one."""
    series: list[SeriesDetail] = [s for m in measurements for s in m.series]
    return merged_stats(series, None) if series else None


def _figure(cell: ReferenceCell | None, key: str) -> float | None:
    """A published figure in microseconds."""
    if cell is None:
        return None
    return _us(cell.figures_ns.get(key))


def _other_number(cell: ReferenceCell | None, key: str) -> float | None:
    """The leading number of a published figure kept as text ("6.49 µs" -> 6.49)."""
    if cell is None or key not in cell.other:
        return None
    match = re.match(r"\s*(-?\d+(?:\.\d+)?)", cell.other[key])
    return float(match.group(1)) if match else None


def _need(runs: Sequence[RunDetail], layout: str) -> None:
    """Refuse runs that have none of the tests a layout shows (the kinds that describe
    themselves as feeding it, rtbench/kinds)."""
    if not runs:
        raise LayoutError(f"layout {layout}: give at least one run")
    for run in runs:
        tests = run_registry(run.source).feeding(layout)
        have = {m.test for sc in run.scenarios for m in sc.measurements}
        if not have & set(tests):
            raise LayoutError(
                f"layout {layout}: run {run.id} has none of its tests "
                f"({', '.join(tests)}; the run has {', '.join(sorted(have)) or 'none'}); "
                f"run `rtbench run {layout}` first")


# --- loongson2f ----------------------------------------------------------------------

# our scenario names (suites/loongson2f.toml) -> the study's load names
LOONGSON_LOADS: tuple[tuple[str, str], ...] = (
    ("idle", "idle"), ("ping", "ping"), ("display", "x"), ("find", "find"),
    ("ping+display+find", "ping+x+find"), ("display+decode", "x+mplayer"),
    ("ping+display+find+decode", "ping+x+find+mplayer"),
)


def _loongson(runs: Sequence[RunDetail], refs: dict[str, ReferenceRun]) -> Layout:
    """Max/avg/stddev of cyclic per load, every interval pooled."""
    _need(runs, "loongson2f")
    ref = refs.get("loongson2f")
    columns = ["load"]
    for run in runs:
        columns += [f"{_run_label(run)} max µs", "avg µs", "stddev µs"]
    if ref:
        columns += [f"{_ref_label(ref)} max µs", "avg µs", "stddev µs"]
    rows: list[list[Cell]] = []
    names = [ours for ours, _ in LOONGSON_LOADS]
    extra = sorted({sc.name for run in runs for sc in run.scenarios} - set(names))
    for ours, theirs in [*LOONGSON_LOADS, *((n, "") for n in extra)]:
        row: list[Cell] = [ours if ours == theirs or not theirs else f"{ours} ({theirs})"]
        for run in runs:
            stats = _pooled([m for _, m in _measurements(run, "cyclic", ours)])
            row += [_us(stats.max_ns), _us(stats.mean_ns), _us(stats.stddev_ns)] \
                if stats and stats.samples else [None, None, None]
        if ref:
            cell = next((c for c in ref.cells if c.scenario == theirs), None)
            row += [_figure(cell, "max"), _figure(cell, "mean"), _figure(cell, "stddev")]
        rows.append(row)
    table = LayoutTable(
        "cyclic latency per load, every interval pooled (cyclictest -p80 -t1 -n)",
        columns, rows,
        ["display and decode are rate-defined stand-ins for the study's X and mplayer "
         "(suites/loongson2f.toml)",
         "the study's latency-over-the-run figure: rtbench plot RUN --kind timeline "
         "--cell 'ping+display+find+decode / cyclic interval=1ms' -o timeline.svg"])
    return Layout("loongson2f", "PREEMPT_RT on a Loongson 2F: cyclictest under seven loads",
                  [table], [_source_line(ref)] if ref else [])


# --- s3c24a0 -------------------------------------------------------------------------

S3C_KERNELS = ("s3c24a0-uclinux", "s3c24a0-linux26", "s3c24a0-linux24")


def _ctx_cells(run: RunDetail) -> tuple[dict[tuple[int, int], float], dict[int, float]]:
    """(size KiB, processes) -> per-switch us and size -> overhead us of the run's ctx."""
    cells: dict[tuple[int, int], float] = {}
    overheads: dict[int, float] = {}
    for _, m in _measurements(run, "ctx"):
        for c in m.data.get("cells") or []:
            if isinstance(c, dict) and c.get("per_switch_ns") is not None:
                cells[(int(c["size_kib"]), int(c["processes"]))] = c["per_switch_ns"] / 1000.0
        for o in m.data.get("overheads") or []:
            if isinstance(o, dict) and o.get("overhead_ns") is not None:
                overheads[int(o["size_kib"])] = o["overhead_ns"] / 1000.0
    return cells, overheads


def _s3c(runs: Sequence[RunDetail], refs: dict[str, ReferenceRun]) -> Layout:
    """The lat_ctx table (processes x sizes, with the overhead) and lat_fifo, bw_pipe."""
    _need(runs, "s3c24a0")
    published = [refs[n] for n in S3C_KERNELS if n in refs]
    columns = ["size KiB", "processes", *(f"{_run_label(r)} µs" for r in runs),
               *(f"{_ref_label(r)} µs" for r in published)]
    ours = [_ctx_cells(run) for run in runs]
    sizes = sorted({s for cells, _ in ours for s, _ in cells}
                   | {s for _, ovr in ours for s in ovr} | {0, 1, 16})
    rows: list[list[Cell]] = []
    for size in sizes:
        row: list[Cell] = [size, "overhead"]
        row += [ovr.get(size) for _, ovr in ours]
        row += [_other_number(_ref_cell(ref, {"size": f"{size}k", "overhead": "yes"}),
                              "per-hop overhead") for ref in published]
        rows.append(row)
        procs = sorted({p for cells, _ in ours for s, p in cells if s == size} | {2, 4, 8, 16})
        for n in procs:
            row = [size, n, *(cells.get((size, n)) for cells, _ in ours)]
            row += [_other_number(_ref_cell(ref, {"size": f"{size}k", "processes": str(n)}),
                                  "per-switch time") for ref in published]
            rows.append(row)
    ctx = LayoutTable("lmbench lat_ctx: microseconds per context switch", columns, rows,
                      ["per-switch = time per hop minus the single-process overhead of the "
                       "same pipe I/O and work (the overhead rows)"])
    ipc_columns = ["figure", *(_run_label(r) for r in runs), *(_ref_label(r) for r in published)]
    fifo: list[Cell] = ["lat_fifo round trip us (mean)"]
    bw: list[Cell] = ["bw_pipe MB/s"]
    for run in runs:
        fifo_ms = [m for _, m in _measurements(run, "ipc")
                   if m.data.get("transport") == "fifo" and m.data.get("mode") != "bandwidth"]
        stats = _pooled(fifo_ms)
        fifo.append(_us(stats.mean_ns) if stats and stats.samples else None)
        rates = [b.get("mb_per_s") for _, m in _measurements(run, "ipc")
                 if m.data.get("mode") == "bandwidth" for b in m.data.get("bandwidth") or []
                 if isinstance(b, dict)]
        bw.append(float(rates[0]) if rates and rates[0] is not None else None)
    for ref in published:
        fifo.append(_other_number(_ref_cell(ref, {"mechanism": "fifo"}), "latency"))
        bw.append(_other_number(_ref_cell(ref, {"mechanism": "pipe-bandwidth"}), "bandwidth"))
    ipc = LayoutTable("lmbench lat_fifo and bw_pipe", ipc_columns, [fifo, bw])
    return Layout("s3c24a0", "Linux 2.6 vs uClinux vs Linux 2.4 on a Samsung S3C24A0: lmbench",
                  [ctx, ipc], [_source_line(r) for r in published])


def _ref_cell(ref: ReferenceRun, params: dict[str, str]) -> ReferenceCell | None:
    """The published cell whose parameters include params."""
    for cell in ref.cells:
        if all(str(cell.params.get(k)) == v for k, v in params.items()):
            return cell
    return None


# --- arm-preemptrt -------------------------------------------------------------------

ARM_BOARDS = ("at91sam9263", "imx31")


def _loaded_scenario(run: RunDetail) -> str | None:
    """The scenario the ARM table reports: the first one with loads, else the last."""
    for sc in run.scenarios:
        if sc.loads:
            return sc.name
    return run.scenarios[-1].name if run.scenarios else None


def _arm(runs: Sequence[RunDetail], refs: dict[str, ReferenceRun]) -> Layout:
    """Worst IRQ, wake-up, cyclic and missed events under load, and the decision line."""
    _need(runs, "arm-preemptrt")
    published = [refs[n] for n in ARM_BOARDS if n in refs]
    columns = ["figure", *(f"{_run_label(r)} [{_loaded_scenario(r)}]" for r in runs),
               *(_ref_label(r) for r in published)]
    rows: list[list[Cell]] = [["worst IRQ/event latency µs"], ["worst UIO-style wake-up µs"],
                              ["cyclic 1 ms max µs"], ["cyclic 1 ms avg µs"],
                              ["missed events"]]
    notes = []
    for run in runs:
        scenario = _loaded_scenario(run)
        event = [m for _, m in _measurements(run, "event", scenario)]
        wake = [m for _, m in _measurements(run, "wakeup", scenario)]
        cyc = _pooled([m for _, m in _measurements(run, "cyclic", scenario)])
        ev = _pooled(event)
        wk = _pooled(wake)
        missed = sum(int(m.data.get("missed") or 0) for m in event) if event else None
        rows[0].append(_us(ev.max_ns) if ev and ev.samples else None)
        rows[1].append(_us(wk.max_ns) if wk and wk.samples else None)
        rows[2].append(_us(cyc.max_ns) if cyc and cyc.samples else None)
        rows[3].append(_us(cyc.mean_ns) if cyc and cyc.samples else None)
        rows[4].append(missed)
        sources = {str(m.params.get("source") or m.data.get("kind") or "") for m in event}
        if any(s.startswith("self") or s == "" for s in sources):
            notes.append(f"{_run_label(run)}: event used the self-stimulus mode (no GPIO/UIO "
                         "source given), so it times a thread-to-thread event, not an interrupt")
        worst = cyc.max_ns if cyc and cyc.samples else None
        if worst is not None:
            notes.append(f"decision, {_run_label(run)}: worst cyclic latency {worst / 1000:.1f} µs "
                         f"under load -> smallest cycle by the 25 % rule "
                         f"{worst / CYCLE_BUDGET / 1000:.0f} µs "
                         "(see `rtbench advise` for the extreme-value estimate)")
    for ref in published:
        irq = next((c for c in ref.cells if c.params.get("source") == "gpio"), None)
        uio = next((c for c in ref.cells if c.params.get("source") == "uio"), None)
        cyc_ref = next((c for c in ref.cells if c.test == "cyclic"), None)
        rows[0].append(_figure(irq, "max"))
        rows[1].append(_figure(uio, "max"))
        rows[2].append(_figure(cyc_ref, "max"))
        rows[3].append(_figure(cyc_ref, "mean"))
        missed_text = uio.other.get("missed events") if uio else None
        rows[4].append(int(missed_text) if missed_text and missed_text.isdigit() else None)
        worst_ref = _figure(cyc_ref, "max")
        if worst_ref is not None:
            notes.append(f"decision, {_ref_label(ref)}: worst {worst_ref:.0f} µs -> smallest "
                         f"cycle {worst_ref / CYCLE_BUDGET:.0f} µs (the study rounded the ARM9 "
                         "to ~1 ms, the ARM11 to 400-500 µs)")
    table = LayoutTable("worst-case latencies under hackbench + network flood", columns, rows)
    return Layout("arm-preemptrt", "PREEMPT_RT on ARM9 and ARM11 boards: IRQ, wake-up, timer",
                  [table], [_source_line(r) for r in published], notes)


# --- celleb --------------------------------------------------------------------------

CELLEB_TESTS = (("cyclictest", "cyclic"), ("gtod_latency", "clock"),
                ("sched_latency", "periodic"), ("async_handler", "wakeup"))
CELLEB_REFS = ("celleb-vanilla", "celleb-rt", "x86-vanilla", "x86-rt")
GTOD_CLASSES = 21  # 0..20 µs, and a last class for everything above


def _verdict(ms: Sequence[MeasurementDetail]) -> str | None:
    """PASS/FAIL from the measurements' verdicts (None when they have none)."""
    verdicts = [v for m in ms for v in m.verdicts if isinstance(v, dict)]
    if not verdicts:
        return None
    failed = [str(v.get("name")) for v in verdicts if not v.get("pass")]
    return "PASS" if not failed else "FAIL: " + "; ".join(failed)


def gtod_classes(series: Sequence[SeriesDetail], classes: int = GTOD_CLASSES) -> list[int]:
    """Counts per 1 µs class (0 <= gap < 1 µs, ...), the last class holding the rest.

    Each loglin7 bucket is placed by its lower bound; a bucket is under 1/128 of its value
    wide, so only buckets straddling a whole microsecond (a few ns wide) could belong
    partly to the next class.
    """
    counts = np.zeros(classes, dtype=np.int64)
    for s in series:
        idx, cnt = loglin7.to_arrays(s.hist)
        if len(idx):
            which = np.minimum(loglin7.lower(idx) // 1000, classes - 1).astype(np.int64)
            np.add.at(counts, which, cnt)
    return [int(c) for c in counts]


def _celleb(runs: Sequence[RunDetail], refs: dict[str, ReferenceRun]) -> Layout:
    """The IBM-style table (min/avg/max/stddev, PASS/FAIL) and the gtod histogram."""
    _need(runs, "celleb")
    published = [refs[n] for n in CELLEB_REFS if n in refs]
    rows: list[list[Cell]] = []
    for label, test in CELLEB_TESTS:
        for run in runs:
            for sc in run.scenarios:
                ms = [m for _, m in _measurements(run, test, sc.name)]
                if not ms:
                    continue
                stats = _pooled(ms)
                ok = stats is not None and stats.samples > 0
                rows.append([label, f"{_run_label(run)} [{sc.name}]",
                             _us(stats.min_ns) if ok and stats else None,
                             _us(stats.mean_ns) if ok and stats else None,
                             _us(stats.max_ns) if ok and stats else None,
                             _us(stats.stddev_ns) if ok and stats else None, _verdict(ms)])
        for ref in published:
            cell = next((c for c in ref.cells if c.test == test and c.figures_ns), None)
            if cell is None:
                continue
            rows.append([label, f"{_ref_label(ref)} [{cell.scenario}]",
                         _figure(cell, "min"), _figure(cell, "mean"), _figure(cell, "max"),
                         _figure(cell, "stddev"), cell.other.get("verdict")])
    table = LayoutTable("rt-tests and LTP realtime tests (IBM style)",
                        ["test", "system", "min µs", "avg µs", "max µs", "stddev µs",
                         "PASS/FAIL"], rows,
                        ["sched_latency PASS needs every delay < 100 µs (LTP's criterion)"])
    hist_cols: list[str] = ["gap µs"]
    hist_data: list[list[int]] = []
    for run in runs:
        for sc in run.scenarios:
            series = [s for _, m in _measurements(run, "clock", sc.name) for s in m.series]
            if series:
                hist_cols.append(f"{_run_label(run)} [{sc.name}]")
                hist_data.append(gtod_classes(series))
    for ref in published:
        for cell in ref.cells:
            if cell.hist:
                hist_cols.append(f"{_ref_label(ref)} [{cell.scenario}]")
                counts = [0] * GTOD_CLASSES
                for lower_ns, count in cell.hist:
                    counts[min(GTOD_CLASSES - 1, int(lower_ns // 1000))] += count
                hist_data.append(counts)
    hist_rows: list[list[Cell]] = []
    for k in range(GTOD_CLASSES):
        name = f"{k}" if k < GTOD_CLASSES - 1 else f">={k}"
        hist_rows.append([name, *(col[k] for col in hist_data)])
    hist = LayoutTable("gtod_latency histogram: clock-read gaps in 1 µs classes (counts)",
                       hist_cols, hist_rows)
    return Layout("celleb", "PREEMPT_RT on Celleb (Cell/B.E.) and x86: LTP realtime tests",
                  [table, hist], [_source_line(r) for r in published])


# --- lrtai ---------------------------------------------------------------------------

LRTAI_MODES = (("oneshot", "abs"), ("periodic (itimer)", "itimer"),
               ("periodic (timerfd)", "timerfd"))
LRTAI_REFS = ("lrtai", "linux-rtai")


def _mode(m: MeasurementDetail) -> str:
    """The timer mode a cyclic measurement used."""
    return str(m.params.get("mode") or m.start.get("params", {}).get("mode") or "abs")


def _footprint(run: RunDetail, key: str) -> int | None:
    """The largest footprint figure over the run's cyclic measurements."""
    values = [m.data.get("footprint", {}).get(key) for _, m in _measurements(run, "cyclic")
              if isinstance(m.data.get("footprint"), dict)]
    numbers = [int(v) for v in values if isinstance(v, int)]
    return max(numbers) if numbers else None


def _lrtai(runs: Sequence[RunDetail], refs: dict[str, ReferenceRun]) -> Layout:
    """Worst case per timer mode and scenario, image size and memory footprint."""
    _need(runs, "lrtai")
    published = [refs[n] for n in LRTAI_REFS if n in refs]
    columns = ["timer mode"]
    scenario_cols: list[tuple[RunDetail, str]] = []
    for run in runs:
        for sc in run.scenarios:
            if any(m.test == "cyclic" for m in sc.measurements):
                columns.append(f"{_run_label(run)} [{sc.name}] worst µs")
                scenario_cols.append((run, sc.name))
    columns += [f"{_ref_label(r)} worst µs" for r in published]
    rows: list[list[Cell]] = []
    for label, mode in LRTAI_MODES:
        row: list[Cell] = [label]
        for run, scenario in scenario_cols:
            ms = [m for _, m in _measurements(run, "cyclic", scenario) if _mode(m) == mode]
            stats = _pooled(ms)
            row.append(_us(stats.max_ns) if stats and stats.samples else None)
        for ref in published:
            cell = ref.cells[0] if ref.cells else None
            printed_mode = "oneshot" if cell and "oneshot" in cell.label else "periodic"
            row.append(_figure(cell, "max") if mode == "abs" and printed_mode == "oneshot"
                       else None)
        rows.append(row)
    worst = LayoutTable("RTAI latency module vs rtprobe cyclic: 100 µs period", columns, rows,
                        ["the study's worst cases are printed as 'ns' but are microseconds "
                         "(see reference/lrtai_ia32.csv)"])
    fp_columns = ["figure", *(_run_label(r) for r in runs), *(_ref_label(r) for r in published)]
    size_row: list[Cell] = ["image / binary KiB"]
    rss_row: list[Cell] = ["memory footprint / peak RSS KiB"]
    lock_row: list[Cell] = ["locked memory KiB"]
    for run in runs:
        size = _footprint(run, "binary_bytes")
        size_row.append(None if size is None else round(size / 1024, 1))
        rss_row.append(_footprint(run, "peak_rss_kib"))
        lock_row.append(_footprint(run, "locked_kib"))
    for ref in published:
        cell = ref.cells[0] if ref.cells else None
        size_row.append(_other_number(cell, "image"))
        rss_row.append(_other_number(cell, "memory footprint"))
        lock_row.append(None)
    footprint = LayoutTable("size and footprint", fp_columns, [size_row, rss_row, lock_row],
                            ["rtprobe's figures are those of the measuring process (its "
                             "binary, its peak resident set and what mlockall locked)"])
    return Layout("lrtai", "Lightweight RTAI vs Linux/RTAI: periodic task at 100 µs",
                  [worst, footprint], [_source_line(r) for r in published])


BUILDERS: dict[str, Callable[[Sequence[RunDetail], dict[str, ReferenceRun]], Layout]] = {
    "loongson2f": _loongson,
    "s3c24a0": _s3c,
    "arm-preemptrt": _arm,
    "celleb": _celleb,
    "lrtai": _lrtai,
}


def layout_names() -> list[str]:
    """The layouts there are (one per built-in study suite)."""
    return list(BUILDERS)


def build_layout(name: str, runs: Sequence[RunDetail],
                 references: Sequence[ReferenceRun]) -> Layout:
    """The study's tables for runs, with the published figures; LayoutError when unfit."""
    builder = BUILDERS.get(name)
    if builder is None:
        raise LayoutError(f"--layout {name!r}: no such layout; choose one of "
                          f"{', '.join(BUILDERS)}")
    layout = builder(runs, {r.name: r for r in references})
    for run in runs:
        if run.suite != name:
            raise LayoutError(
                f"--layout {name}: run {run.id} is of suite {run.suite!r}, and the layout "
                f"shows the cells of suite {name}: run `rtbench run {name}` and report "
                "that run")
    layout.notes.append(f"published columns: {PUBLISHED_LABEL}")
    return layout
