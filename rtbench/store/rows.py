"""The rows of a measurement written: JSON column text, the one insert path of a
measurement with its series, histograms, windows, spikes and traces, bulk inserts."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from itertools import islice
from typing import Any

from sqlalchemy import Connection, Table, bindparam, insert, select
from sqlalchemy.exc import DBAPIError, OperationalError

from rtbench.bundle import MeasurementDetail
from rtbench.store import schema as t
from rtbench.store.errors import StoreError


def _dumps(value: Any) -> str:
    """Compact, deterministic JSON text for a JSON column."""
    # imported here: histpairs brings numpy, which `ls` and `show` never need
    from rtbench.wire import histpairs

    return histpairs.dumps(value, separators=(",", ":"), sort_keys=True,
                           allow_nan=False)


def _int_list(values: list[int]) -> str:
    """_dumps() of a list of ints, without the json module's overhead."""
    return "[" + ",".join(map(str, values)) + "]"


def _loads(text: str | None) -> Any:
    """Decode a JSON column (None stays None)."""
    return None if text is None else json.loads(text)


def _now() -> datetime:
    """The current time in UTC."""
    return datetime.now(timezone.utc)


def _insert_measurement(conn: Connection, scenario_id: int, position: int,
                        m: MeasurementDetail) -> int:
    """Insert one measurement with its series, histograms, windows and spikes; its id.

    The one insert path: the runner (add_measurement_detail) and add_bundle use it.
    """
    from rtbench.store.datacolumns import split, write_columns

    # long arrays of numbers are stored apart, a piece at a time (not one value as
    # large as an imported file, copied by Python and SQLite: issue 36)
    data, columns = split(m.data)
    # the values as parameters of one statement, not .values(): SQLAlchemy then compiles
    # the INSERT once (cached) instead of coercing every value of every measurement anew,
    # which made an import of 27,000 lmbench measurements take minutes
    res = conn.execute(insert(t.measurements), dict(
        scenario_id=scenario_id, position=position, name=m.name,
        test=m.test, params=_dumps(m.params), command=_dumps(m.command),
        status=m.status, exit_code=m.exit_code, reason=m.reason,
        thresholds_ns=_dumps([int(x) for x in m.thresholds_ns]),
        simulated=bool(m.simulated), probe_version=m.probe_version,
        t0_unix_ns=m.t0_unix_ns, measured_ns=m.measured_ns,
        elapsed_ns=m.elapsed_ns, verdicts=_dumps(m.verdicts),
        data=_dumps(data), start=_dumps(m.start), created_at=_now()))
    mid = _new_id(res)
    del data
    if columns:
        write_columns(conn, mid, columns)
    if m.series:
        conn.execute(insert(t.series), [
            {"measurement_id": mid, "series_index": s.index,
             "label": s.label, "cpu": s.cpu, "count": s.count,
             "min_ns": s.min_ns, "max_ns": s.max_ns, "sum_ns": s.sum_ns,
             "overruns": s.overruns, "early": s.early,
             "exceed": _dumps([list(p) for p in s.exceed]),
             "worst": _dumps([list(p) for p in s.worst]),
             "warmup": _dumps(s.warmup),
             "spikes_dropped": s.spikes_dropped,
             "raw_dropped": s.raw_dropped, "error": s.error}
            for s in m.series])
        buckets = [{"measurement_id": mid, "series_index": s.index,
                    "bucket": b, "count": c}
                   for s in m.series for b, c in s.hist if c]
        if buckets:
            conn.execute(insert(t.hist_buckets), buckets)
    if m.windows:
        _insert_many(conn, t.windows, _WINDOW_COLUMNS, [
            (mid, w.series, w.index, w.warmup, w.start_ns, w.end_ns,
             w.count, w.min_ns, w.max_ns, w.sum_ns, w.overruns, w.early,
             _int_list(w.exceed), w.hist_json)
            for w in m.windows])
    if m.spikes:
        conn.execute(insert(t.spikes), [
            {"measurement_id": mid, "series_index": s.series,
             "t_ns": s.t_ns, "latency_ns": s.latency_ns,
             "threshold_ns": s.threshold_ns}
            for s in m.spikes])
    records = iter(m.traces)
    # a batch of records at a time: an import's thousands of trace records are not
    # all held as JSON text at once (issue 36)
    while batch := [{"measurement_id": mid, "series_index": _int_or_none(r.get("series")),
                     "t_ns": _int_or_none(r.get("t_ns")),
                     "latency_ns": _int_or_none(r.get("latency_ns")), "record": _dumps(r)}
                    for r in islice(records, _TRACE_BATCH)]:
        conn.execute(insert(t.trace_spikes), batch)
    if m.trace_info is not None:
        conn.execute(insert(t.trace_info), {"measurement_id": mid,
                                            "info": _dumps(m.trace_info)})
    return mid


# trace records inserted by one statement
_TRACE_BATCH = 512


def _int_or_none(value: Any) -> int | None:
    """value when it is a 64-bit integer (the link columns of a trace record), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63:
        return value
    return None


_WINDOW_COLUMNS = ("measurement_id", "series_index", "window_index", "warmup",
                   "start_ns", "end_ns", "count", "min_ns", "max_ns",
                   "sum_ns", "overruns", "early", "exceed", "hist")


def _insert_many(conn: Connection, table: Table, columns: tuple[str, ...],
                 rows: list[tuple[Any, ...]]) -> None:
    """INSERT rows (plain tuples, in columns order) with one executemany.

    conn.execute(insert(table), dicts) builds and converts a parameter
    dict per row, half the cost of storing the 10^4 windows of a long run;
    here the statement is compiled for the connection's dialect (so it
    stays portable) and the driver gets the tuples as they are, or dicts
    when its paramstyle is a named one.  Every value must already be of a
    type the driver takes (int, str, bool, None).
    """
    if conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg":
        _copy_rows(conn, table, columns, rows)
        return
    compiled = insert(table).compile(dialect=conn.dialect,
                                     column_keys=list(columns))
    params: list[Any]
    if compiled.positional:
        order = [columns.index(name) for name in compiled.positiontup or ()]
        params = rows if order == list(range(len(columns))) else [
            tuple(row[i] for i in order) for row in rows]
    else:
        params = [dict(zip(columns, row, strict=True)) for row in rows]
    conn.exec_driver_sql(compiled.string, params)


def _copy_rows(conn: Connection, table: Table, columns: tuple[str, ...],
               rows: list[tuple[Any, ...]]) -> None:
    """_insert_many() on PostgreSQL: one COPY in the connection's transaction.

    COPY sends the rows as one stream instead of a statement per row (the
    windows of a one-hour run: 4x faster than executemany).  A database error
    comes back as SQLAlchemy's, so the transaction maps it as for any statement.
    """
    import psycopg

    raw = conn.connection.dbapi_connection
    names = ", ".join(f'"{name}"' for name in columns)
    statement = f'COPY "{table.name}" ({names}) FROM STDIN'
    try:
        with raw.cursor() as cursor, cursor.copy(statement) as copy:  # type: ignore[union-attr]
            for row in rows:
                copy.write_row(row)
    except psycopg.OperationalError as exc:
        raise OperationalError(statement, None, exc) from None
    except psycopg.Error as exc:
        raise DBAPIError(statement, None, exc) from None


# built once: a query made per run costs more in SQLAlchemy than the lookup itself
_HOST_QUERY = select(t.hosts.c.id).where(
    t.hosts.c.hostname == bindparam("hostname"), t.hosts.c.arch == bindparam("arch"),
    t.hosts.c.cpu_model == bindparam("cpu_model"))


def _new_id(res: Any) -> int:
    """The primary key of the row an INSERT created."""
    key = res.inserted_primary_key
    if key is None:  # pragma: no cover - every table has an integer key
        raise StoreError("the database did not return the new row's id")
    return int(key[0])
