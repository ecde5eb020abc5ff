"""Compare runs cell by cell: percentiles with bootstrap intervals, verdicts, and
every environment fact that differs (pure: takes bundles and reference runs)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rtbench.analysis import bootstrap
from rtbench.analysis.reference import ReferenceCell, ReferenceRun, hist_quantile
from rtbench.analysis.select import CellKey, CellMatch, cell_key, match_cells
from rtbench.analysis.stats import merged_stats
from rtbench.bundle import MeasurementDetail, RunDetail
from rtbench.rtprobe.wire.records import windows_hist_arrays

METRICS = (("p50", 0.50), ("p99", 0.99), ("p99.9", 0.999))
QUANTILE = dict(METRICS)
LOAD_TOLERANCE = 0.20  # achieved load intensity differing by more than this is listed
MAX_NOTE = ("max has no interval: one sample decides it; see the exceedance rate and "
            "`rtbench advise` for the tail")


@dataclass
class CellData:
    """The figures of one cell of one run (measured or published)."""

    key: CellKey
    name: str
    published: bool
    samples: int | None
    figures: dict[str, float | None]  # p50 p99 p99.9 max mean min (ns); None: n/a
    overruns: int | None
    exceed_rates: list[tuple[int, float | None]]  # (threshold_ns, per hour)
    measured_ns: int | None
    matrix: bootstrap.WindowMatrix | None  # None for published cells
    measurement: MeasurementDetail | None = None
    reference: ReferenceCell | None = None
    replicates: dict[int, Any] = field(default_factory=dict)  # seed -> bootstrap (reps x 3)


def cell_replicates(cell: CellData, reps: int, seed: int) -> Any:
    """Bootstrap replicates of p50, p99, p99.9 of a cell (computed once per seed)."""
    assert cell.matrix is not None
    if seed not in cell.replicates:
        cell.replicates[seed] = bootstrap.replicates(cell.matrix, [q for _, q in METRICS],
                                                     reps, seed)
    return cell.replicates[seed]


@dataclass
class RunView:
    """A run as compare, plot and report see it: a stored run or a published one."""

    label: str  # "run 12" or "ref:loongson2f"
    published: bool
    hostname: str
    kernel: str
    env: dict[str, str]
    cells: list[CellData]
    run: RunDetail | None = None
    reference: ReferenceRun | None = None
    intensity: dict[str, dict[str, Any]] = field(default_factory=dict)  # per scenario

    @property
    def title(self) -> str:
        """One line naming the run."""
        if self.reference is not None:
            return f"{self.label}: {self.reference.title} ({self.reference.label})"
        assert self.run is not None
        sim = ", SIMULATED" if self.run.simulated else ""
        return f"{self.label}: {self.run.suite} on {self.hostname}, {self.kernel}{sim}"


def _windows(m: MeasurementDetail) -> bootstrap.WindowMatrix:
    """The measured windows of a measurement as a bootstrap matrix."""
    mins = [s.min_ns for s in m.series if s.min_ns is not None and s.count]
    maxs = [s.max_ns for s in m.series if s.max_ns is not None and s.count]
    kept = [w for w in m.windows if not w.warmup and w.count]
    return bootstrap.window_matrix(
        ((w.index, idx, cnt) for w, (idx, cnt) in zip(kept, windows_hist_arrays(kept),
                                                       strict=True)),
        min_ns=min(mins) if mins else None, max_ns=max(maxs) if maxs else None)


def measured_cell(scenario: str, m: MeasurementDetail) -> CellData | None:
    """CellData of a measurement with latency series (None when it has none)."""
    series = [s for s in m.series if s.count]
    stats = merged_stats(series, m.measured_ns)
    if stats is None or not stats.samples:
        return None
    figures: dict[str, float | None] = {label: (None if stats.pct(label) is None
                                                else float(stats.pct(label) or 0))
                                        for label, _ in METRICS}
    figures.update(max=float(stats.max_ns) if stats.max_ns is not None else None,
                   mean=stats.mean_ns, min=float(stats.min_ns)
                   if stats.min_ns is not None else None)
    return CellData(
        key=cell_key(scenario, m.test, m.params), name=m.name, published=False,
        samples=stats.samples, figures=figures, overruns=stats.overruns,
        exceed_rates=[(e.threshold_ns, e.rate_per_hour) for e in stats.exceedances],
        measured_ns=m.measured_ns, matrix=_windows(m), measurement=m)


def published_cell(cell: ReferenceCell) -> CellData:
    """CellData of a published cell: only what the paper printed (others None)."""
    figures: dict[str, float | None] = {label: None for label, _ in METRICS}
    if cell.hist:
        for label, q in METRICS:
            figures[label] = hist_quantile(cell, q)
        figures["max"] = max(lo for lo, _ in cell.hist)
        figures["min"] = min(lo for lo, _ in cell.hist)
    figures.update({k: v for k, v in cell.figures_ns.items()})
    figures.setdefault("max", None)
    samples = sum(c for _, c in cell.hist) if cell.hist else None
    return CellData(key=cell_key(cell.scenario, cell.test, cell.params), name=cell.label,
                    published=True, samples=samples, figures=figures, overruns=None,
                    exceed_rates=[], measured_ns=None, matrix=None, reference=cell)


def nohz_full(cmdline: str) -> str:
    """The nohz_full= list of a kernel command line ('' when absent)."""
    m = re.search(r"(?:^|\s)nohz_full=(\S+)", cmdline or "")
    return m.group(1) if m else ""


def env_facts(run: RunDetail) -> dict[str, str]:
    """The environment facts compare checks, as text."""
    si = run.sysinfo or {}
    governors = si.get("governors")
    gov = ", ".join(sorted({str(g) for g in governors.values()})) \
        if isinstance(governors, dict) and governors else "-"
    probes = sorted({m.probe_version for sc in run.scenarios for m in sc.measurements
                     if m.probe_version})
    smt = si.get("smt_active")
    return {
        "kernel": str((si.get("uname") or {}).get("release") or run.kernel or "-"),
        "preemption model": str(si.get("preempt_model") or "-")
        + (" (PREEMPT_RT)" if si.get("preempt_rt") else ""),
        "CPU model": str(si.get("cpu_model") or "-"),
        "governor": gov,
        "isolcpus": "-" if si.get("cpus_isolated") is None
        else str(si.get("cpus_isolated") or "none"),
        "nohz_full": "-" if si.get("cmdline") is None
        else nohz_full(str(si.get("cmdline"))) or "none",
        "SMT": "-" if smt is None else ("on" if smt else "off"),
        "clocksource": str(si.get("clocksource") or "-"),
        "probe version": ", ".join(probes) or str((run.tool_versions or {}).get("rtprobe", "-")),
        "simulated": "yes" if run.simulated else "no",
    }


def view_of_run(run: RunDetail) -> RunView:
    """A stored run as a RunView."""
    cells = []
    for sc in run.scenarios:
        for m in sc.measurements:
            cell = measured_cell(sc.name, m)
            if cell is not None:
                cells.append(cell)
    return RunView(label=f"run {run.id}", published=False, hostname=run.hostname,
                   kernel=run.kernel, env=env_facts(run), cells=cells, run=run,
                   intensity={sc.name: sc.intensity or {} for sc in run.scenarios
                              if sc.loads})


def view_of_reference(ref: ReferenceRun) -> RunView:
    """A published run as a RunView (facts it does not state are absent)."""
    return RunView(label=f"ref:{ref.name}", published=True, hostname=ref.platform,
                   kernel=ref.kernel, env={"kernel": ref.kernel, "CPU model": ref.platform},
                   cells=[published_cell(c) for c in ref.cells], reference=ref)


@dataclass
class MetricDiff:
    """One metric of one cell: run b against the baseline a."""

    metric: str
    a: float | None
    b: float | None
    diff: float | None
    lo: float | None
    hi: float | None
    verdict: str
    note: str = ""

    @property
    def rel_lo(self) -> float | None:
        """The interval's lower end relative to the baseline value."""
        return None if self.lo is None or not self.a else self.lo / self.a

    @property
    def rel(self) -> float | None:
        """The difference relative to the baseline value."""
        return None if self.diff is None or not self.a else self.diff / self.a


@dataclass
class CellComparison:
    """A matched cell: each run's figures and each run's differences to the baseline."""

    key: CellKey
    cells: list[CellData | None]
    diffs: list[list[MetricDiff]]  # per run (empty for the baseline and missing cells)


@dataclass
class EnvDiff:
    """An environment fact whose value differs between the runs."""

    fact: str
    values: list[str]
    intended: bool  # named with --vary: the thing being compared


@dataclass
class Comparison:
    """Everything `rtbench compare` says."""

    runs: list[RunView]
    rows: list[CellComparison]
    unmatched: list[tuple[int, CellKey]]
    env: list[EnvDiff]
    metrics: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def like_for_like(self) -> bool:
        """No fact differs besides the ones named as compared."""
        return all(d.intended for d in self.env)


def diff_metric(a: CellData, b: CellData, metric: str, reps: int,
                seeds: tuple[int, int]) -> MetricDiff:
    """One metric of b against a, with an interval where both have windows (seeds: of
    a's and b's bootstrap; each cell is resampled once for every metric and run)."""
    va, vb = a.figures.get(metric), b.figures.get(metric)
    diff = None if va is None or vb is None else vb - va
    if metric not in QUANTILE:
        note = MAX_NOTE if metric == "max" else "no interval for this figure"
        return MetricDiff(metric, va, vb, diff, None, None, "no interval", note)
    if a.matrix is None or b.matrix is None:
        return MetricDiff(metric, va, vb, diff, None, None, "no interval",
                          "published figure: no distribution to resample")
    q = QUANTILE[metric]
    pa, pb = bootstrap.point_quantile(a.matrix, q), bootstrap.point_quantile(b.matrix, q)
    if min(a.matrix.windows, b.matrix.windows) == 0:
        iv = bootstrap.Interval(diff, None, None, "no per-window histograms stored")
    elif pa is None or pb is None:
        iv = bootstrap.Interval(None, None, None, "not enough samples")
    elif min(a.matrix.windows, b.matrix.windows) < bootstrap.MIN_WINDOWS:
        iv = bootstrap.Interval(pb - pa, None, None,
                                f"{min(a.matrix.windows, b.matrix.windows)} windows; an "
                                f"interval needs {bootstrap.MIN_WINDOWS}")
    else:
        k = [label for label, _ in METRICS].index(metric)
        iv = bootstrap.difference_of_replicates(
            pa, pb, cell_replicates(a, reps, seeds[0])[:, k],
            cell_replicates(b, reps, seeds[1])[:, k])
    return MetricDiff(metric, va, vb, diff, iv.lo, iv.hi, bootstrap.verdict(iv), iv.note)


def _rel_off(a: Any, b: Any) -> float | None:
    """|b - a| / max(|a|, |b|) for two numbers (None when not both numbers)."""
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) \
            or not isinstance(b, (int, float)):
        return None
    top = max(abs(float(a)), abs(float(b)))
    return abs(float(b) - float(a)) / top if top else 0.0


def intensity_diffs(views: list[RunView], scenarios: list[str]) -> list[EnvDiff]:
    """Achieved load intensity of loaded scenarios that differs by more than 20 %."""
    out = []
    measured = [v for v in views if not v.published]
    for sc in scenarios:
        its = [v.intensity.get(sc) for v in measured]
        if len(its) < 2 or any(i is None for i in its):
            continue
        first = its[0] or {}
        checks: list[tuple[str, int]] = [("cpu busy %", -1)]
        for n, load in enumerate(first.get("loads") or []):
            if isinstance(load, dict) and load.get("achieved") is not None:
                checks.append((f"load {load.get('kind') or n} achieved "
                               f"{load.get('unit') or ''}".rstrip(), n))
        for name, n in checks:
            values = [(i or {}).get("cpu_busy_pct") if n < 0 else _load_achieved(i or {}, n)
                      for i in its]
            offs = [_rel_off(values[0], v) for v in values[1:]]
            if any(o is not None and o > LOAD_TOLERANCE for o in offs):
                out.append(EnvDiff(f"{sc}: {name}", _with_published(views, [
                    "-" if v is None else f"{float(v):.4g}" for v in values]), False))
    return out


def _load_achieved(intensity: dict[str, Any], n: int) -> Any:
    """The achieved rate of the n-th load of an intensity record."""
    loads = intensity.get("loads") or []
    if n < len(loads) and isinstance(loads[n], dict):
        return loads[n].get("achieved")
    return None


def _with_published(views: list[RunView], measured_values: list[str]) -> list[str]:
    """Spread values of the measured runs over all runs ('-' for published ones)."""
    it = iter(measured_values)
    return ["-" if v.published else next(it) for v in views]


def env_differences(views: list[RunView], vary: tuple[str, ...] = ()) -> list[EnvDiff]:
    """Every fact known for two or more runs whose values differ."""
    facts: list[str] = []
    for v in views:
        facts.extend(f for f in v.env if f not in facts)
    out = []
    for fact in facts:
        values = [v.env.get(fact, "-") for v in views]
        known = {x for x in values if x != "-"}
        if len(known) > 1:
            out.append(EnvDiff(fact, values, fact.lower() in {x.lower() for x in vary}))
    return out


def compare(views: list[RunView], metrics: tuple[str, ...] = ("p50", "p99", "p99.9", "max"),
            vary: tuple[str, ...] = (), reps: int = bootstrap.REPLICATES,
            seed: int = 0) -> Comparison:
    """Compare runs: the first measured run is the baseline of every difference."""
    rows_raw, unmatched = match_cells(
        [[(c.key, c) for c in v.cells] for v in views], [v.published for v in views])
    base = next((i for i, v in enumerate(views) if not v.published), 0)
    rows = []
    for match in rows_raw:
        rows.append(_row(match, base, metrics, reps, seed))
    scenarios = sorted({r.key.scenario for r in rows})
    env = env_differences(views, vary) + intensity_diffs(views, scenarios)
    notes = [MAX_NOTE] if "max" in metrics else []
    if any(v.published for v in views):
        notes.append("published runs: figures as printed in the paper; percentiles it did "
                     "not print are n/a and no interval is possible")
    return Comparison(views, rows, unmatched, env, list(metrics), notes)


def _row(match: CellMatch, base: int, metrics: tuple[str, ...], reps: int,
         seed: int) -> CellComparison:
    """Differences of one matched cell, each run against the baseline."""
    cells: list[CellData | None] = list(match.partners)
    a = cells[base]
    diffs: list[list[MetricDiff]] = []
    for i, b in enumerate(cells):
        if i == base or a is None or b is None:
            diffs.append([])
        else:
            diffs.append([diff_metric(a, b, metric, reps, (seed + 17 * base, seed + 17 * i))
                          for metric in metrics])
    return CellComparison(match.key, cells, diffs)


@dataclass
class Regression:
    """A cell whose metric got worse by more than the allowed amount, surely."""

    cell: str
    run: str
    metric: str
    rel_lo: float
    rel: float


def regressions(comp: Comparison, metric: str, limit: float) -> list[Regression]:
    """Cells where the interval of the relative increase lies wholly above limit."""
    if metric not in comp.metrics:
        raise ValueError(f"metric {metric} was not compared")
    mi = comp.metrics.index(metric)
    out = []
    for row in comp.rows:
        for i, diffs in enumerate(row.diffs):
            if not diffs:
                continue
            d = diffs[mi]
            if d.rel_lo is not None and d.rel_lo > limit:
                out.append(Regression(row.key.label(), comp.runs[i].label, metric,
                                      d.rel_lo, d.rel or 0.0))
    return out
