"""Read runs as the regression check needs them: each run's row, scenarios, measurements,
series (with their histograms) and windows, for many runs at once in a fixed number of
queries (one per table, whatever the count of runs or measurements), without the spikes
and traces a check never reads, nor a tool's own histogram (Store.get_run reads
everything, seven queries per measurement: on PostgreSQL each is a round trip)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import BindParameter, bindparam, select

# re-exported: regress/ holds a connection of the store's without importing sqlalchemy
from sqlalchemy import Connection as Connection

from rtbench.bundle import (
    MeasurementDetail,
    RunDetail,
    ScenarioDetail,
    SeriesDetail,
    mark_beyond_hist,
)
from rtbench.rtprobe.wire.records import WindowRecord, no_gc
from rtbench.store import schema as t
from rtbench.store.utc import as_utc

# the queries, built once with the ids bound (building one costs more than running it)
_IDS: BindParameter[int] = bindparam("ids", expanding=True)
_RUNS = (select(t.runs, t.hosts.c.hostname, t.hosts.c.arch)
         .join(t.hosts, t.hosts.c.id == t.runs.c.host_id).where(t.runs.c.id.in_(_IDS)))
_SCENARIOS = (select(t.scenarios).where(t.scenarios.c.run_id.in_(_IDS))
              .order_by(t.scenarios.c.run_id, t.scenarios.c.position, t.scenarios.c.id))
_MEASUREMENTS = (select(t.measurements).where(t.measurements.c.scenario_id.in_(_IDS))
                 .order_by(t.measurements.c.scenario_id, t.measurements.c.position,
                           t.measurements.c.id))
_BUCKETS = (select(t.hist_buckets.c.measurement_id, t.hist_buckets.c.series_index,
                   t.hist_buckets.c.bucket, t.hist_buckets.c["count"])
            .where(t.hist_buckets.c.measurement_id.in_(_IDS))
            .order_by(t.hist_buckets.c.measurement_id, t.hist_buckets.c.series_index,
                      t.hist_buckets.c.bucket))
_SERIES = (select(t.series).where(t.series.c.measurement_id.in_(_IDS))
           .order_by(t.series.c.measurement_id, t.series.c.series_index))
_W = t.windows
_WINDOWS = (select(_W.c.measurement_id, _W.c.series_index, _W.c.window_index, _W.c.warmup,
                   _W.c.start_ns, _W.c.end_ns, _W.c["count"], _W.c.min_ns, _W.c.max_ns,
                   _W.c.sum_ns, _W.c.overruns, _W.c.early, _W.c.exceed, _W.c.hist)
            .where(_W.c.measurement_id.in_(_IDS))
            .order_by(t.windows.c.measurement_id, t.windows.c.series_index,
                      t.windows.c.window_index))


def _loads(text: str | None) -> Any:
    """JSON text as stored (None stays None)."""
    return None if text is None else json.loads(text)


# a measurement's "tool_hist" as the store writes it (compact, keys sorted): a key (after
# "{" or ",") whose value holds only ints, nulls and brackets, and the compact form of a
# long histogram ({"counts":[...],"first":N,"step":N}, histpairs.Pairs.json_text)
_CUT = "rtbench-cut-tool-hist"
_TOOL_HIST = re.compile(r'(?<=[{,])"tool_hist":\[(?:[-0-9,\[\]nul]|'
                        r'\{"counts":\[[0-9,]*\],"first":-?[0-9]+,"step":[0-9]+\})*\]')


def _data(text: str) -> Any:
    """A measurement's data JSON without its "tool_hist" (the tool's own histogram, a
    list per row: a check never reads it, and a long one would cost many times its
    text); decoded whole when the key is not where the store writes it."""
    found = (_TOOL_HIST.search(text) if '"tool_hist":[' in text and _CUT not in text
             else None)
    if found is not None:
        try:
            data = json.loads(f'{text[:found.start()]}"tool_hist":"{_CUT}"'
                              f'{text[found.end():]}')
        except ValueError:  # not the whole value: read it as it is
            data = None
        # the value cut was the top level's (not a nested object's)
        if isinstance(data, dict) and data.get("tool_hist") == _CUT:
            del data["tool_hist"]
            return data
    out = json.loads(text)
    if isinstance(out, dict):
        out.pop("tool_hist", None)
    return out


def read_evidence(conn: Connection, run_ids: Sequence[int]) -> dict[int, RunDetail]:
    """The runs run_ids (those that exist) with their scenarios, measurements, series,
    histograms and windows; spikes and traces are left empty, and so is each
    measurement's data["tool_hist"].  Six queries in all."""
    ids = sorted(set(run_ids))
    if not ids:
        return {}
    with no_gc():
        runs = _runs(conn, ids)
        scenarios: dict[int, ScenarioDetail] = {}
        for sc in conn.execute(_SCENARIOS, {"ids": ids}).all():
            scenario = ScenarioDetail(
                id=sc.id, name=sc.name, loads=_loads(sc.loads), load_cpus=sc.load_cpus,
                measure_cpus=sc.measure_cpus, intensity=_loads(sc.intensity))
            scenarios[sc.id] = scenario
            if sc.run_id in runs:
                runs[sc.run_id].scenarios.append(scenario)
        measurements = _measurements(conn, scenarios)
        if measurements:
            _fill_series(conn, measurements)
            _fill_windows(conn, measurements)
        for m in measurements.values():
            mark_beyond_hist(m)
    return runs


def _runs(conn: Connection, ids: list[int]) -> dict[int, RunDetail]:
    """The runs' own rows (no scenarios yet)."""
    out: dict[int, RunDetail] = {}
    for row in conn.execute(_RUNS, {"ids": ids}).all():
        out[row.id] = RunDetail(
            id=row.id, suite=row.suite, suite_source=row.suite_source, scale=row.scale,
            status=row.status,
            started_at=as_utc(row.started_at) or datetime.now(timezone.utc),
            finished_at=as_utc(row.finished_at), hostname=row.hostname,
            target=row.target, kernel=row.kernel, arch=row.arch,
            sysinfo=_loads(row.sysinfo), preflight=_loads(row.preflight),
            tool_versions=_loads(row.tool_versions),
            command_line=_loads(row.command_line), simulated=bool(row.simulated),
            tags=_loads(row.tags) or {}, source=_loads(row.source) or {}, uid=row.uid,
            board=row.board, reason=row.reason, emulated=bool(row.emulated))
    return out


def _measurements(conn: Connection, scenarios: dict[int, ScenarioDetail]
                  ) -> dict[int, MeasurementDetail]:
    """The scenarios' measurements, appended to them in order; by measurement id."""
    out: dict[int, MeasurementDetail] = {}
    if not scenarios:
        return out
    for m in conn.execute(_MEASUREMENTS, {"ids": list(scenarios)}).all():
        detail = MeasurementDetail(
            id=m.id, name=m.name, test=m.test, params=_loads(m.params),
            command=_loads(m.command), status=m.status, exit_code=m.exit_code,
            reason=m.reason, thresholds_ns=_loads(m.thresholds_ns),
            simulated=bool(m.simulated), probe_version=m.probe_version,
            t0_unix_ns=m.t0_unix_ns, measured_ns=m.measured_ns,
            elapsed_ns=m.elapsed_ns, verdicts=_loads(m.verdicts), data=_data(m.data),
            start=_loads(m.start))
        scenarios[m.scenario_id].measurements.append(detail)
        out[m.id] = detail
    from rtbench.store.datacolumns import fill

    # their long arrays stored apart, but for "tool_hist" (left out, as above)
    fill(conn, {mid: detail.data for mid, detail in out.items()},
         skip=frozenset({"tool_hist"}))
    return out


def _fill_series(conn: Connection, measurements: dict[int, MeasurementDetail]) -> None:
    """Each measurement's series with its histogram (two queries for all)."""
    ids = list(measurements)
    hists: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for mid, index, bucket, count in conn.execute(_BUCKETS, {"ids": ids}).all():
        hists.setdefault((mid, index), []).append((int(bucket), int(count)))
    for s in conn.execute(_SERIES, {"ids": ids}).all():
        measurements[s.measurement_id].series.append(SeriesDetail(
            index=s.series_index, label=s.label, cpu=s.cpu,
            count=int(s._mapping["count"]), min_ns=s.min_ns, max_ns=s.max_ns,
            sum_ns=int(s.sum_ns), overruns=int(s.overruns), early=int(s.early),
            exceed=[(int(a), int(b)) for a, b in _loads(s.exceed)],
            worst=[(int(a), int(b)) for a, b in _loads(s.worst)],
            warmup=_loads(s.warmup), hist=hists.get((s.measurement_id, s.series_index), []),
            spikes_dropped=int(s.spikes_dropped), raw_dropped=int(s.raw_dropped),
            error=s.error))


def _fill_windows(conn: Connection, measurements: dict[int, MeasurementDetail]) -> None:
    """Each measurement's windows, in series and window order (one query for all; each
    row unpacked as the tuple it is: a check reads tens of windows per run)."""
    for (mid, series, index, warmup, start_ns, end_ns, count, min_ns, max_ns, sum_ns,
         overruns, early, exceed, hist) in conn.execute(
            _WINDOWS, {"ids": list(measurements)}):
        measurements[mid].windows.append(WindowRecord(
            series=series, index=index, warmup=bool(warmup), start_ns=start_ns,
            end_ns=end_ns, count=int(count), min_ns=min_ns, max_ns=max_ns, sum_ns=sum_ns,
            overruns=overruns, exceed=[] if exceed == "[]" else list(json.loads(exceed)),
            hist_json=hist, early=early))
