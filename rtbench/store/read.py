"""Store's reads: the runs list, a run read back whole as a bundle (or in parts), the
cell summaries."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select

from rtbench.bundle import (
    MeasurementDetail,
    RunDetail,
    RunSummary,
    ScenarioDetail,
    SeriesDetail,
    mark_beyond_hist,
)
from rtbench.store import schema as t
from rtbench.store.base import StoreBase
from rtbench.store.cells import CellFilter, CellRow, read_cells
from rtbench.store.errors import RunNotFound
from rtbench.store.rows import _loads, _now
from rtbench.store.utc import as_utc


def not_as_defined_counts(conn: Any, run_ids: list[int]) -> dict[int, int]:
    """Per run: how many ways its scenarios did not happen as defined (the flags the
    runner stored with each scenario's intensity as `not_as_defined`).  A busy idle
    scenario of a simulated run does not count (analysis.scenario_check.deciding_flags:
    synthetic latencies cannot be disturbed)."""
    counts: dict[int, int] = {}
    for start in range(0, len(run_ids), 500):  # bounded IN lists
        rows = conn.execute(
            select(t.scenarios.c.run_id, t.scenarios.c.loads, t.scenarios.c.intensity,
                   t.runs.c.simulated)
            .select_from(t.scenarios.join(t.runs, t.runs.c.id == t.scenarios.c.run_id))
            .where(t.scenarios.c.run_id.in_(run_ids[start:start + 500])))
        for run_id, loads, stored, simulated in rows:
            try:
                intensity = json.loads(stored) if stored else None
                idle = not json.loads(loads or "[]")
            except ValueError:
                continue
            flags = intensity.get("not_as_defined") if isinstance(intensity, dict) else None
            if isinstance(flags, list) and flags and not (simulated and idle):
                counts[int(run_id)] = counts.get(int(run_id), 0) + len(flags)
    return counts


class StoreReads(StoreBase):
    """The reads of Store."""

    def list_runs(self, limit: int = 50) -> list[RunSummary]:
        """The newest runs first, with their worst max latency."""
        from rtbench.store.runmarks import marker_columns, marker_fields

        worst = (
            select(t.scenarios.c.run_id.label("run_id"),
                   func.max(t.series.c.max_ns).label("worst"))
            .select_from(t.scenarios.join(
                t.measurements,
                t.measurements.c.scenario_id == t.scenarios.c.id)
                .join(t.series,
                      t.series.c.measurement_id == t.measurements.c.id))
            .group_by(t.scenarios.c.run_id).subquery())
        query = (
            select(t.runs.c.id, t.runs.c.started_at, t.hosts.c.hostname,
                   t.runs.c.kernel, t.runs.c.suite, t.runs.c.status,
                   worst.c.worst, t.runs.c.simulated, t.runs.c.tags, t.runs.c.target,
                   t.runs.c.board, *marker_columns())
            .select_from(t.runs.join(t.hosts,
                                     t.hosts.c.id == t.runs.c.host_id)
                         .outerjoin(worst, worst.c.run_id == t.runs.c.id))
            .order_by(t.runs.c.id.desc()).limit(limit))
        with self._tx("list runs") as conn:
            rows = conn.execute(query).all()
            undefined = not_as_defined_counts(conn, [r.id for r in rows])
            return [RunSummary(id=r.id, started_at=as_utc(r.started_at)
                               or _now(), hostname=r.hostname,
                               kernel=r.kernel, suite=r.suite,
                               status=r.status,
                               worst_max_ns=None if r.worst is None
                               else int(r.worst),
                               simulated=bool(r.simulated),
                               tags=_loads(r.tags) or {}, target=r.target,
                               board=r.board, **marker_fields(r),
                               not_as_defined=undefined.get(r.id, 0))
                    for r in rows]

    def run_outline(self, run_id: int) -> list[tuple[int, int]]:
        """(scenario id, number of measurements) of each scenario of run_id, in order;
        RunNotFound when the run does not exist."""
        with self._tx(f"read run {run_id}") as conn:
            if not 0 < run_id < 2**63 or conn.execute(select(t.runs.c.id).where(
                    t.runs.c.id == run_id)).first() is None:
                raise RunNotFound(f"run {run_id} is not in {self.url}; "
                                  "'rtbench ls' lists the stored runs")
            rows = conn.execute(
                select(t.scenarios.c.id, func.count(t.measurements.c.id))
                .select_from(t.scenarios.outerjoin(
                    t.measurements, t.measurements.c.scenario_id == t.scenarios.c.id))
                .where(t.scenarios.c.run_id == run_id)
                .group_by(t.scenarios.c.id, t.scenarios.c.position)
                .order_by(t.scenarios.c.position, t.scenarios.c.id)).all()
        return [(int(sid), int(n)) for sid, n in rows]

    def get_run(self, run_id: int, parts: dict[int, tuple[int, int]] | None = None
                ) -> RunDetail:
        """Everything stored about run_id; StoreError when it does not exist.

        parts, when given, reads only those scenarios ({scenario id: (first, end)}) and of
        each only its measurements first..end-1 (in order): one page of a huge run; {}
        reads the run's own row only (no scenarios).
        """
        if not 0 < run_id < 2**63:  # no such row can exist (and SQLite cannot bind it)
            raise RunNotFound(f"run {run_id} is not in {self.url}; "
                              "'rtbench ls' lists the stored runs")
        from rtbench.rtprobe.wire.records import no_gc

        with self._tx(f"read run {run_id}") as conn, no_gc():
            row = conn.execute(
                select(t.runs, t.hosts.c.hostname, t.hosts.c.arch)
                .join(t.hosts, t.hosts.c.id == t.runs.c.host_id)
                .where(t.runs.c.id == run_id)).first()
            if row is None:
                raise RunNotFound(f"run {run_id} is not in {self.url}; "
                                  "'rtbench ls' lists the stored runs")
            run = RunDetail(
                id=row.id, suite=row.suite, suite_source=row.suite_source,
                scale=row.scale, status=row.status,
                started_at=as_utc(row.started_at) or _now(),
                finished_at=as_utc(row.finished_at), hostname=row.hostname,
                target=row.target, kernel=row.kernel, arch=row.arch,
                sysinfo=_loads(row.sysinfo), preflight=_loads(row.preflight),
                tool_versions=_loads(row.tool_versions),
                command_line=_loads(row.command_line),
                simulated=bool(row.simulated), tags=_loads(row.tags) or {},
                source=_loads(row.source) or {}, uid=row.uid, board=row.board,
                reason=row.reason, emulated=bool(row.emulated))
            if parts == {}:
                return run  # the run's own row only
            chosen = select(t.scenarios).where(t.scenarios.c.run_id == run_id)
            if parts is not None:
                chosen = chosen.where(t.scenarios.c.id.in_(list(parts)))
            for sc in conn.execute(chosen.order_by(t.scenarios.c.position,
                                                   t.scenarios.c.id)).all():
                scenario = ScenarioDetail(
                    id=sc.id, name=sc.name, loads=_loads(sc.loads),
                    load_cpus=sc.load_cpus, measure_cpus=sc.measure_cpus,
                    intensity=_loads(sc.intensity))
                wanted = (select(t.measurements)
                          .where(t.measurements.c.scenario_id == sc.id)
                          .order_by(t.measurements.c.position, t.measurements.c.id))
                if parts is not None:
                    first, end = parts[sc.id]
                    wanted = wanted.offset(first).limit(max(0, end - first))
                for m in conn.execute(wanted).all():
                    scenario.measurements.append(self._measurement(conn, m))
                run.scenarios.append(scenario)
            return run

    def _measurement(self, conn: Connection, m: Any) -> MeasurementDetail:
        """Assemble one measurement with its series, windows and spikes."""
        from rtbench.rtprobe.wire.records import SpikeRecord, WindowRecord

        detail = MeasurementDetail(
            id=m.id, name=m.name, test=m.test, params=_loads(m.params),
            command=_loads(m.command), status=m.status,
            exit_code=m.exit_code, reason=m.reason,
            thresholds_ns=_loads(m.thresholds_ns),
            simulated=bool(m.simulated), probe_version=m.probe_version,
            t0_unix_ns=m.t0_unix_ns, measured_ns=m.measured_ns,
            elapsed_ns=m.elapsed_ns, verdicts=_loads(m.verdicts),
            data=_loads(m.data), start=_loads(m.start))
        from rtbench.store.datacolumns import fill

        fill(conn, {m.id: detail.data})  # its long arrays, stored apart
        hists: dict[int, list[tuple[int, int]]] = {}
        for b in conn.execute(
                select(t.hist_buckets.c.series_index, t.hist_buckets.c.bucket,
                       t.hist_buckets.c.count)
                .where(t.hist_buckets.c.measurement_id == m.id)
                .order_by(t.hist_buckets.c.series_index,
                          t.hist_buckets.c.bucket)):
            hists.setdefault(b.series_index, []).append(
                (int(b.bucket), int(b._mapping["count"])))
        for s in conn.execute(select(t.series)
                              .where(t.series.c.measurement_id == m.id)
                              .order_by(t.series.c.series_index)):
            detail.series.append(SeriesDetail(
                index=s.series_index, label=s.label, cpu=s.cpu,
                count=int(s._mapping["count"]), min_ns=s.min_ns, max_ns=s.max_ns,
                sum_ns=int(s.sum_ns), overruns=int(s.overruns),
                early=int(s.early),
                exceed=[(int(a), int(b)) for a, b in _loads(s.exceed)],
                worst=[(int(a), int(b)) for a, b in _loads(s.worst)],
                warmup=_loads(s.warmup), hist=hists.get(s.series_index, []),
                spikes_dropped=int(s.spikes_dropped),
                raw_dropped=int(s.raw_dropped), error=s.error))
        for w in conn.execute(select(t.windows)
                              .where(t.windows.c.measurement_id == m.id)
                              .order_by(t.windows.c.series_index,
                                        t.windows.c.window_index)):
            detail.windows.append(WindowRecord(
                series=w.series_index, index=w.window_index,
                warmup=bool(w.warmup), start_ns=w.start_ns, end_ns=w.end_ns,
                count=int(w._mapping["count"]), min_ns=w.min_ns, max_ns=w.max_ns,
                sum_ns=w.sum_ns, overruns=w.overruns,
                exceed=list(_loads(w.exceed)), hist_json=w.hist,
                early=w.early))
        for sp in conn.execute(select(t.spikes)
                               .where(t.spikes.c.measurement_id == m.id)
                               .order_by(t.spikes.c.id)):
            detail.spikes.append(SpikeRecord(
                series=sp.series_index, t_ns=sp.t_ns,
                latency_ns=sp.latency_ns, threshold_ns=sp.threshold_ns))
        detail.traces = [_loads(r.record) for r in conn.execute(
            select(t.trace_spikes.c.record)
            .where(t.trace_spikes.c.measurement_id == m.id)
            .order_by(t.trace_spikes.c.id))]
        info = conn.execute(select(t.trace_info.c.info)
                            .where(t.trace_info.c.measurement_id == m.id)).scalar()
        detail.trace_info = _loads(info) if info is not None else None
        return mark_beyond_hist(detail)

    def cell_rows(self, *, board: str | None = None, suite: str | None = None,
                  kernel: str | None = None, since: datetime | None = None,
                  until: datetime | None = None, simulated: bool | None = False,
                  rt_only: bool = False, limit: int | None = None,
                  newest_runs: int | None = None) -> list[CellRow]:
        """The per-run cell summaries (run_cells) matching, oldest run first.

        simulated: False (default) real runs only, True simulated only, None both;
        rt_only: leave out runs known to have measured under a non-real-time policy;
        newest_runs: only the cells of the newest this many matching runs.
        """
        flt = CellFilter(board=board, suite=suite, kernel=kernel, since=since,
                         until=until, simulated=simulated, rt_only=rt_only,
                         newest_runs=newest_runs)
        with self._tx("read the run summaries") as conn:
            return read_cells(conn, flt, limit)
