"""Read queries of the results server: filtered, paged run lists, filter choices,
and the measurements of runs (series with histograms) for statistics.

Each query filters and pages in SQL (indexes from migration 0003) so a database
of tens of thousands of runs answers a page in milliseconds; statistics are
left to rtbench.analysis (the store does no analysis).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select, true

from rtbench.bundle import RunSummary, SeriesDetail
from rtbench.store import RUN_STATUSES, Store
from rtbench.store import schema as t
from rtbench.store.read import not_as_defined_counts
from rtbench.store.runmarks import marker_columns, marker_fields
from rtbench.store.utc import as_utc

MAX_PER_PAGE = 500


@dataclass
class RunFilter:
    """What a runs list is restricted to (None: no restriction)."""

    host: str | None = None
    board: str | None = None
    kernel: str | None = None
    suite: str | None = None
    tag: str | None = None  # "key" (present) or "key=value"
    status: str | None = None
    since: datetime | None = None  # started at or after
    until: datetime | None = None  # started before


@dataclass
class RunPage:
    """One page of a filtered runs list and the number of runs that match."""

    runs: list[RunSummary]
    total: int
    page: int
    per_page: int
    arch: dict[int, str] = field(default_factory=dict)  # run id -> arch
    uid: dict[int, str] = field(default_factory=dict)  # run id -> uid

    @property
    def pages(self) -> int:
        """How many pages the matching runs fill (at least 1)."""
        return max(1, -(-self.total // self.per_page))


def _like_literal(text: str) -> str:
    """text with LIKE wildcards escaped (escape character: backslash)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _tag_condition(tag: str) -> ColumnElement[bool]:
    """runs.tags (compact JSON, sorted keys) holds the key, or key=value.

    The pattern is the JSON text of the pair right after "{" or ",", so a key or
    value that merely contains the text does not match.
    """
    key, sep, value = tag.partition("=")
    tails: tuple[str, ...]
    if sep:
        pair = json.dumps(key) + ":" + json.dumps(value)
        tails = (",", "}")
    else:
        pair, tails = json.dumps(key) + ":", ("",)
    pattern = _like_literal(pair)
    return or_(*(t.runs.c.tags.like(f"%{head}{pattern}{tail}%", escape="\\")
                 for head in ("{", ",") for tail in tails))


def _conditions(flt: RunFilter) -> list[ColumnElement[bool]]:
    """The WHERE terms of a filter."""
    cond: list[ColumnElement[bool]] = []
    if flt.host:
        cond.append(t.hosts.c.hostname == flt.host)
    if flt.board:
        cond.append(t.runs.c.board == flt.board)
    if flt.kernel:
        cond.append(t.runs.c.kernel == flt.kernel)
    if flt.suite:
        cond.append(t.runs.c.suite == flt.suite)
    if flt.status:
        cond.append(t.runs.c.status == flt.status)
    if flt.since:
        cond.append(t.runs.c.started_at >= flt.since)
    if flt.until:
        cond.append(t.runs.c.started_at < flt.until)
    if flt.tag:
        cond.append(_tag_condition(flt.tag))
    return cond


def list_runs_page(store: Store, flt: RunFilter, page: int = 1,
                   per_page: int = 50) -> RunPage:
    """The runs matching flt, newest first, one page of them, with the total."""
    per_page = max(1, min(per_page, MAX_PER_PAGE))
    page = max(1, page)
    joined = t.runs.join(t.hosts, t.hosts.c.id == t.runs.c.host_id)
    where = and_(true(), *_conditions(flt))
    with store.transaction("list runs") as conn:
        total = int(conn.execute(select(func.count()).select_from(joined).where(where))
                    .scalar_one())
        rows = conn.execute(
            select(t.runs.c.id, t.runs.c.started_at, t.hosts.c.hostname, t.hosts.c.arch,
                   t.runs.c.kernel, t.runs.c.suite, t.runs.c.status, t.runs.c.simulated,
                   t.runs.c.tags, t.runs.c.uid, t.runs.c.target, t.runs.c.board,
                   *marker_columns())
            .select_from(joined).where(where).order_by(t.runs.c.id.desc())
            .limit(per_page).offset((page - 1) * per_page)).all()
        ids = [r.id for r in rows]
        worst: dict[int, int] = {}
        if ids:
            for run_id, value in conn.execute(
                    select(t.scenarios.c.run_id, func.max(t.series.c.max_ns))
                    .select_from(t.scenarios.join(
                        t.measurements, t.measurements.c.scenario_id == t.scenarios.c.id)
                        .join(t.series, t.series.c.measurement_id == t.measurements.c.id))
                    .where(t.scenarios.c.run_id.in_(ids))
                    .group_by(t.scenarios.c.run_id)):
                if value is not None:
                    worst[int(run_id)] = int(value)
        counts = _threshold_counts(conn, ids)
        undefined = not_as_defined_counts(conn, ids)
    runs = [RunSummary(id=r.id, started_at=as_utc(r.started_at) or r.started_at,
                       hostname=r.hostname, kernel=r.kernel, suite=r.suite, status=r.status,
                       worst_max_ns=worst.get(r.id), simulated=bool(r.simulated),
                       tags=json.loads(r.tags) if r.tags else {}, target=r.target,
                       board=r.board, **marker_fields(r),
                       not_as_defined=undefined.get(r.id, 0),
                       measurement_count=counts.get(r.id, (0, 0))[0],
                       checked_count=counts.get(r.id, (0, 0))[1])
            for r in rows]
    return RunPage(runs=runs, total=total, page=page, per_page=per_page,
                   arch={r.id: r.arch for r in rows}, uid={r.id: r.uid for r in rows})


def _threshold_counts(conn: Any, run_ids: list[int]) -> dict[int, tuple[int, int]]:
    """Per run: (its measurements, those with a threshold or a criterion verdict)."""
    counts: dict[int, tuple[int, int]] = {}
    if not run_ids:
        return counts
    rows = conn.execute(
        select(t.scenarios.c.run_id, t.measurements.c.thresholds_ns,
               t.measurements.c.verdicts)
        .select_from(t.scenarios.join(
            t.measurements, t.measurements.c.scenario_id == t.scenarios.c.id))
        .where(t.scenarios.c.run_id.in_(run_ids)))
    for run_id, thresholds_text, verdicts_text in rows:
        total, checked = counts.get(int(run_id), (0, 0))
        decided = bool(_json_list(thresholds_text) or _json_list(verdicts_text))
        counts[int(run_id)] = (total + 1, checked + int(decided))
    return counts


def _json_list(text: str | None) -> list[Any]:
    """A stored JSON list column; an unreadable one counts as empty."""
    try:
        value = json.loads(text) if text else []
    except ValueError:
        return []
    return value if isinstance(value, list) else []


FACETS = ("host", "board", "kernel", "suite")


def facets(store: Store, limit: int = 500,
           keys: tuple[str, ...] = FACETS) -> dict[str, list[str]]:
    """The values the runs list can be filtered on: hosts, boards, kernels, suites (those
    of keys, one query each) and statuses."""
    columns = {"host": t.hosts.c.hostname, "board": t.runs.c.board,
               "kernel": t.runs.c.kernel, "suite": t.runs.c.suite}
    with store.transaction("list filter values") as conn:
        def distinct(column: Any) -> list[str]:
            return [str(v) for (v,) in conn.execute(
                select(column).distinct().order_by(column).limit(limit))]
        out = {key: distinct(columns[key]) for key in keys}
    out["status"] = list(RUN_STATUSES)
    return out


def measurement_series(store: Store, run_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Per measurement of run_ids: run id, names, measured time and its series.

    {measurement id: {"run_id", "scenario", "name", "test", "measured_ns",
    "series": [SeriesDetail with histogram]}} -- enough for latency statistics
    without reading windows or spikes.
    """
    out: dict[int, dict[str, Any]] = {}
    if not run_ids:
        return out
    with store.transaction("read measurements") as conn:
        for m in conn.execute(
                select(t.measurements.c.id, t.measurements.c.name, t.measurements.c.test,
                       t.measurements.c.measured_ns, t.scenarios.c.run_id,
                       t.scenarios.c.name.label("scenario"))
                .select_from(t.measurements.join(
                    t.scenarios, t.scenarios.c.id == t.measurements.c.scenario_id))
                .where(t.scenarios.c.run_id.in_(run_ids))
                .order_by(t.scenarios.c.run_id, t.scenarios.c.position,
                          t.measurements.c.position)):
            out[m.id] = {"run_id": int(m.run_id), "scenario": m.scenario, "name": m.name,
                         "test": m.test, "measured_ns": m.measured_ns, "series": []}
        if not out:
            return out
        ids = list(out)
        hists: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for b in conn.execute(
                select(t.hist_buckets.c.measurement_id, t.hist_buckets.c.series_index,
                       t.hist_buckets.c.bucket, t.hist_buckets.c.count)
                .where(t.hist_buckets.c.measurement_id.in_(ids))
                .order_by(t.hist_buckets.c.measurement_id, t.hist_buckets.c.series_index,
                          t.hist_buckets.c.bucket)):
            hists.setdefault((b.measurement_id, b.series_index), []).append(
                (int(b.bucket), int(b._mapping["count"])))
        for s in conn.execute(select(t.series).where(t.series.c.measurement_id.in_(ids))
                              .order_by(t.series.c.measurement_id, t.series.c.series_index)):
            out[s.measurement_id]["series"].append(SeriesDetail(
                index=s.series_index, label=s.label, cpu=s.cpu,
                count=int(s._mapping["count"]), min_ns=s.min_ns, max_ns=s.max_ns,
                sum_ns=int(s.sum_ns), overruns=int(s.overruns), early=int(s.early),
                exceed=[(int(a), int(b)) for a, b in json.loads(s.exceed)],
                worst=[(int(a), int(b)) for a, b in json.loads(s.worst)],
                warmup=json.loads(s.warmup),
                hist=hists.get((s.measurement_id, s.series_index), []),
                spikes_dropped=int(s.spikes_dropped), raw_dropped=int(s.raw_dropped),
                error=s.error))
    return out
