"""Deleting runs: by id, by filter, and by age (retention), each in one transaction.

A run's rows in every table below it go with it (the tables that reference runs.id
are emptied of it explicitly; theirs cascade).  Retention never deletes a run that
is still running, nor one tagged `keep` or `baseline` (any value).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from sqlalchemy import ColumnElement, Connection, and_, delete, not_, select, true

from rtbench.bundle import RunSummary
from rtbench.store import RunNotFound, Store
from rtbench.store import schema as t
from rtbench.store.cellgroups import keys_of_runs, refresh_groups
from rtbench.store.queries import RunFilter
from rtbench.store.queries import _conditions as run_conditions
from rtbench.store.queries import _tag_condition as tag_condition
from rtbench.store.utc import as_utc

EXEMPT_TAGS = ("keep", "baseline")
_CHUNK = 500  # ids per DELETE statement (bound parameters stay few)


def _summaries(conn: Connection, where: ColumnElement[bool]) -> list[RunSummary]:
    """Runs matching where, oldest first, without their figures."""
    joined = t.runs.join(t.hosts, t.hosts.c.id == t.runs.c.host_id)
    rows = conn.execute(
        select(t.runs.c.id, t.runs.c.started_at, t.hosts.c.hostname, t.runs.c.kernel,
               t.runs.c.suite, t.runs.c.status, t.runs.c.simulated, t.runs.c.tags,
               t.runs.c.target)
        .select_from(joined).where(where).order_by(t.runs.c.id)).all()
    return [RunSummary(id=int(r.id), started_at=as_utc(r.started_at), hostname=r.hostname,
                       kernel=r.kernel, suite=r.suite, status=r.status, worst_max_ns=None,
                       simulated=bool(r.simulated),
                       tags=json.loads(r.tags) if r.tags else {}, target=r.target)
            for r in rows]


def _delete_ids(conn: Connection, run_ids: list[int]) -> None:
    """Delete the runs run_ids and every row that references them."""
    children = [(table, fk.parent) for table in t.metadata.sorted_tables
                for fk in table.foreign_keys if fk.column is t.runs.c.id]
    for start in range(0, len(run_ids), _CHUNK):
        chunk = run_ids[start:start + _CHUNK]
        groups = keys_of_runs(conn, chunk)
        for table, column in children:
            conn.execute(delete(table).where(column.in_(chunk)))
        conn.execute(delete(t.runs).where(t.runs.c.id.in_(chunk)))
        refresh_groups(conn, groups)


def delete_runs(store: Store, run_ids: list[int]) -> list[int]:
    """Delete the runs run_ids in one transaction; RunNotFound (nothing deleted) when one
    is not stored."""
    wanted = sorted(set(run_ids))
    with store.transaction(f"delete {len(wanted)} run(s)") as conn:
        found: set[int] = set()
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start:start + _CHUNK]
            found.update(int(i) for i in conn.execute(
                select(t.runs.c.id).where(t.runs.c.id.in_(chunk))).scalars())
        missing = [i for i in wanted if i not in found]
        if missing:
            raise RunNotFound(f"run {missing[0]} is not in {store.url}; nothing was deleted")
        _delete_ids(conn, wanted)
    return wanted


def matching_runs(store: Store, flt: RunFilter) -> list[RunSummary]:
    """The runs a filter selects, oldest first (what a bulk delete would remove)."""
    with store.transaction("list the runs to delete") as conn:
        return _summaries(conn, and_(true(), *run_conditions(flt)))


def delete_matching(store: Store, flt: RunFilter) -> list[RunSummary]:
    """Delete the runs a filter selects, in one transaction; the runs deleted."""
    with store.transaction("delete the selected runs") as conn:
        gone = _summaries(conn, and_(true(), *run_conditions(flt)))
        _delete_ids(conn, [r.id for r in gone])
    return gone


def _expired(cutoff: datetime) -> ColumnElement[bool]:
    """Runs started before cutoff, finished, and not tagged keep or baseline."""
    return and_(t.runs.c.started_at < cutoff, t.runs.c.status != "running",
                *(not_(tag_condition(tag)) for tag in EXEMPT_TAGS))


def cutoff_of(older_than: timedelta, now: datetime | None = None) -> datetime:
    """The start time before which runs are older than older_than."""
    return (now or datetime.now(timezone.utc)) - older_than


def expired_runs(store: Store, cutoff: datetime) -> list[RunSummary]:
    """The runs retention would delete at cutoff, oldest first."""
    with store.transaction("list the runs past retention") as conn:
        return _summaries(conn, _expired(cutoff))


def prune(store: Store, cutoff: datetime) -> list[RunSummary]:
    """Delete, in one transaction, every run retention removes at cutoff; those runs."""
    with store.transaction("prune old runs") as conn:
        gone = _summaries(conn, _expired(cutoff))
        _delete_ids(conn, [r.id for r in gone])
    return gone
