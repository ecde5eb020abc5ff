"""Per-run cell summaries (table run_cells): computed when a measurement is stored,
read back by the matrix, history and regression pages without touching histograms.

A cell is scenario name + measurement name + series label.  The percentiles follow
the rule of rtbench/analysis/stats.py (p_q needs n >= 10/(1-q) samples, none among an
import's overflow samples); a figure that cannot be known is stored as NULL.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, func, insert, select, true

from rtbench.bundle import MeasurementDetail
from rtbench.store import schema as t
from rtbench.store.utc import as_utc

# (column, quantile) of the stored percentiles
_PERCENTILES = (("p99_ns", 0.99), ("p999_ns", 0.999))
# policies under which a run measured real-time behaviour
RT_POLICIES = ("fifo", "rr", "deadline")


@dataclass(frozen=True)
class RunFacts:
    """What every cell row of a run repeats (so that lists need no join)."""

    run_id: int
    board: str
    suite: str
    kernel: str
    started_at: datetime
    simulated: bool


@dataclass
class CellRow:
    """One run x cell summary as stored."""

    run_id: int
    board: str
    suite: str
    kernel: str
    started_at: datetime
    simulated: bool
    policy: str | None
    scenario: str
    measurement: str
    test: str
    series_label: str
    count: int
    max_ns: int | None
    p99_ns: int | None
    p999_ns: int | None
    measured_ns: int | None
    exceed: list[tuple[int, int]]  # (threshold_ns, samples above it)
    overruns: int
    threshold_ns: int | None = None  # the smallest threshold (None: none)
    above_threshold: int | None = None  # samples above it

    @property
    def exceedance_rate_per_hour(self) -> float | None:
        """Samples above the smallest threshold per measured hour (None: unknown)."""
        if self.above_threshold is None or not self.measured_ns:
            return None
        return self.above_threshold * 3.6e12 / self.measured_ns

    @property
    def cell(self) -> str:
        """'scenario / measurement / series' as tables name the cell."""
        return f"{self.scenario} / {self.measurement} / {self.series_label}"

    @property
    def rt_policy(self) -> bool | None:
        """Whether it ran under a real-time policy (None: unknown)."""
        return None if self.policy is None else self.policy in RT_POLICIES


def _min_samples(q: float) -> int:
    """The fewest samples a q-quantile is reported from (analysis/stats.py's rule)."""
    return int(round(10.0 / (1.0 - q)))


def _policy(m: MeasurementDetail) -> str | None:
    """The scheduling policy the measurement ran under, as rtprobe reported it."""
    for part in ("rt", "common"):
        section = m.start.get(part) if isinstance(m.start, dict) else None
        if isinstance(section, dict) and isinstance(section.get("policy"), str):
            return str(section["policy"])[:32]
    return None


def _overflow(m: MeasurementDetail) -> list[int]:
    """Per series: samples an import holds only as 'beyond the last bucket'."""
    raw = m.data.get("tool_overflow") if isinstance(m.data, dict) else None
    if not isinstance(raw, list):
        return []
    return [n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0
            for n in raw]


def _smallest(exceed: list[tuple[int, int]]) -> dict[str, int | None]:
    """threshold_ns and above_threshold: the smallest threshold and its count."""
    if not exceed:
        return {"threshold_ns": None, "above_threshold": None}
    threshold, above = min(exceed)
    return {"threshold_ns": int(threshold), "above_threshold": int(above)}


def summarize(facts: RunFacts, scenario: str, m: MeasurementDetail
              ) -> list[dict[str, Any]]:
    """The run_cells rows (column dicts) of one stored measurement, one per series."""
    # numpy only when writing: `rtbench ls` and other readers import the store lightly
    from rtbench.rtprobe.wire import loglin7
    overflow = _overflow(m)
    policy = _policy(m)
    rows = []
    for pos, s in enumerate(m.series):
        beyond = max(s.beyond_hist, overflow[pos] if pos < len(overflow) else 0)
        figures: dict[str, int | None] = {name: None for name, _ in _PERCENTILES}
        idx, cnt = loglin7.to_arrays(s.hist)
        n = int(cnt.sum()) if cnt.size else 0
        if n:
            values = loglin7.quantiles(idx, cnt, [q for _, q in _PERCENTILES],
                                       min_ns=s.min_ns, max_ns=s.max_ns)
            for (name, q), value in zip(_PERCENTILES, values, strict=True):
                known = n >= _min_samples(q) and not (
                    beyond and loglin7.rank(q, n) > n - beyond)
                figures[name] = value if known else None
        rows.append(dict(
            run_id=facts.run_id, board=facts.board, suite=facts.suite,
            kernel=facts.kernel, started_at=facts.started_at, simulated=facts.simulated,
            policy=policy, scenario=scenario[:255], measurement=m.name[:255],
            test=m.test[:64], series_label=s.label[:255], count=int(s.count),
            max_ns=s.max_ns if s.count else None, measured_ns=m.measured_ns,
            exceed=json.dumps([[int(a), int(b)] for a, b in s.exceed],
                              separators=(",", ":")),
            overruns=int(s.overruns), **_smallest(s.exceed), **figures))
    return rows


def insert_cells(conn: Connection, facts: RunFacts, scenario: str,
                 measurement_id: int, m: MeasurementDetail) -> None:
    """Store the summaries of measurement m in conn's transaction."""
    rows = summarize(facts, scenario, m)
    if rows:
        conn.execute(insert(t.run_cells),
                     [{**row, "measurement_id": measurement_id} for row in rows])


@dataclass
class CellFilter:
    """Which cell rows to read (None: no restriction)."""

    board: str | None = None
    suite: str | None = None
    kernel: str | None = None
    since: datetime | None = None  # started at or after
    until: datetime | None = None  # started before
    simulated: bool | None = False  # False: real runs only; None: both
    rt_only: bool = False  # leave out runs known to have used a non-real-time policy
    newest_runs: int | None = None  # only the newest this many of the matching runs


def cell_conditions(flt: CellFilter) -> list[ColumnElement[bool]]:
    """The WHERE terms of a cell filter."""
    cond = _conditions(t.run_cells.c, flt)
    if flt.newest_runs is not None:
        inner = t.run_cells.alias("newest")
        n = inner.c
        cond.append(t.run_cells.c.run_id.in_(
            select(n.run_id).where(and_(true(), *_conditions(n, flt))).group_by(n.run_id)
            .order_by(func.max(n.started_at).desc(), n.run_id.desc())
            .limit(flt.newest_runs)))
    return cond


def _conditions(c: Any, flt: CellFilter) -> list[ColumnElement[bool]]:
    """The WHERE terms of flt but newest_runs, over the run_cells columns c."""
    cond: list[ColumnElement[bool]] = []
    for column, value in ((c.board, flt.board), (c.suite, flt.suite),
                          (c.kernel, flt.kernel)):
        if value is not None:
            cond.append(column == value)
    if flt.since is not None:
        cond.append(c.started_at >= flt.since)
    if flt.until is not None:
        cond.append(c.started_at < flt.until)
    if flt.simulated is not None:
        cond.append(c.simulated == flt.simulated)
    if flt.rt_only:
        cond.append(c.policy.is_(None) | c.policy.in_(RT_POLICIES))
    return cond


# the run_cells columns in the order of CellRow's fields (read_cells takes rows as tuples:
# a board's history reads thousands, and a named column of a row costs more than a place)
_C = t.run_cells.c
_CELL_ROW = (_C.run_id, _C.board, _C.suite, _C.kernel, _C.started_at, _C.simulated,
             _C.policy, _C.scenario, _C.measurement, _C.test, _C.series_label,
             _C["count"], _C.max_ns, _C.p99_ns, _C.p999_ns, _C.measured_ns, _C.exceed,
             _C.overruns, _C.threshold_ns, _C.above_threshold)


def read_cells(conn: Connection, flt: CellFilter, limit: int | None = None
               ) -> list[CellRow]:
    """The cell rows matching flt, oldest run first."""
    c = t.run_cells.c
    query = (select(*_CELL_ROW).where(and_(true(), *cell_conditions(flt)))
             .order_by(c.started_at, c.run_id, c.id))
    if limit is not None:
        query = query.limit(limit)
    exceeds: dict[str, tuple[tuple[int, int], ...]] = {}  # a lab's rows share a few
    out = []
    for (run_id, board, suite, kernel, started_at, simulated, policy, scenario,
         measurement, test, series_label, count, max_ns, p99_ns, p999_ns, measured_ns,
         exceed, overruns, threshold_ns, above_threshold) in conn.execute(query):
        pairs = exceeds.get(exceed)
        if pairs is None:
            pairs = exceeds[exceed] = tuple((int(a), int(b)) for a, b in json.loads(exceed))
        out.append(CellRow(
            int(run_id), board, suite, kernel, as_utc(started_at), bool(simulated), policy,
            scenario, measurement, test, series_label, int(count), max_ns, p99_ns,
            p999_ns, measured_ns, list(pairs), int(overruns), threshold_ns,
            above_threshold))
    return out


def row_of(r: Any) -> CellRow:
    """A CellRow from a selected run_cells row."""
    started = as_utc(r.started_at)
    return CellRow(
        run_id=int(r.run_id), board=r.board, suite=r.suite, kernel=r.kernel,
        started_at=started, simulated=bool(r.simulated), policy=r.policy,
        scenario=r.scenario, measurement=r.measurement, test=r.test,
        series_label=r.series_label, count=int(r._mapping["count"]), max_ns=r.max_ns,
        p99_ns=r.p99_ns, p999_ns=r.p999_ns, measured_ns=r.measured_ns,
        exceed=[(int(a), int(b)) for a, b in json.loads(r.exceed)],
        overruns=int(r.overruns), threshold_ns=r.threshold_ns,
        above_threshold=r.above_threshold)
