"""Store's writes: runs created and finished, bundles, scenarios and measurements added
(through store/rows.py's one insert path), tags, abandoned runs marked."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from rtbench.bundle import MeasurementDetail, RunDetail, board_of, sysinfo_emulated
from rtbench.store import schema as t
from rtbench.store.base import StoreBase
from rtbench.store.cellgroups import keys_of_runs, refresh_groups
from rtbench.store.cells import RunFacts, insert_cells
from rtbench.store.errors import BundleInvalid, StoreError, StoreUnavailable
from rtbench.store.rows import _HOST_QUERY, _dumps, _insert_measurement, _loads, _new_id, _now
from rtbench.store.utc import as_utc

if TYPE_CHECKING:
    from rtbench.rtprobe.wire.records import ProbeOutput

# running: being measured; lost: the target went away mid-run (finished windows kept);
# abandoned: the process that owned a running run is gone (found at a later start).
RUN_STATUSES = ("running", "ok", "fail", "interrupted", "error", "lost", "abandoned",
                "partial", "unreachable", "inconclusive")
# what a fleet board that left no measurement is stored as (runs.reason says why)
OUTAGE_STATUSES = ("unreachable", "error", "interrupted")


class StoreWrites(StoreBase):
    """The writes of Store."""

    def _host_id(self, conn: Connection, hostname: str,
                 sysinfo: dict[str, Any]) -> int:
        """Find or create the hosts row for this machine."""
        uname = sysinfo.get("uname") or {}
        arch = str(uname.get("machine") or "")
        model = str(sysinfo.get("cpu_model") or "")
        key = {"hostname": hostname, "arch": arch, "cpu_model": model}
        found = conn.execute(_HOST_QUERY, key).scalar()
        if found is not None:
            return int(found)
        # insert-or-select: a parallel first run of the same host may insert the
        # row between our SELECT and INSERT; ON CONFLICT DO NOTHING then waits for
        # it (PostgreSQL) and the second SELECT sees it
        values = dict(hostname=hostname, arch=arch, cpu_model=model, first_seen=_now())
        upsert = (pg_insert if conn.dialect.name == "postgresql" else sqlite_insert)
        if conn.dialect.name in ("postgresql", "sqlite"):
            conn.execute(upsert(t.hosts).values(**values).on_conflict_do_nothing())
        else:  # pragma: no cover - other dialects: plain insert
            conn.execute(insert(t.hosts).values(**values))
        return int(conn.execute(_HOST_QUERY, key).scalar_one())

    def create_run(self, *, suite: str, suite_source: str, scale: float,
                   hostname: str, target: str, sysinfo: dict[str, Any],
                   preflight: list[dict[str, Any]],
                   tool_versions: dict[str, Any], command_line: list[str],
                   simulated: bool, tags: dict[str, str] | None = None,
                   source: dict[str, Any] | None = None, board: str | None = None) -> int:
        """Record a new run (status 'running') and return its id; board: the board's
        name (None: the target's host, see bundle.board_of)."""
        uname = sysinfo.get("uname") or {}
        with self._tx("create the run") as conn:
            host_id = self._host_id(conn, hostname, sysinfo)
            res = conn.execute(insert(t.runs).values(
                host_id=host_id, suite=suite, suite_source=suite_source,
                scale=float(scale), status="running", started_at=_now(),
                finished_at=None, target=target,
                kernel=str(uname.get("release") or ""),
                simulated=bool(simulated), emulated=sysinfo_emulated(sysinfo),
                tool_versions=_dumps(tool_versions),
                sysinfo=_dumps(sysinfo), preflight=_dumps(preflight),
                command_line=_dumps(list(command_line)),
                uid=uuid.uuid4().hex, tags=_dumps(dict(tags or {})),
                source=_dumps(dict(source or {"tool": "rtbench"})),
                board=(board or board_of(target, hostname))[:255]))
            return _new_id(res)

    def add_outage(self, *, suite: str, suite_source: str, scale: float, hostname: str,
                   target: str, command_line: list[str], simulated: bool,
                   tags: dict[str, str], status: str, reason: str, board: str) -> int:
        """Record, in one transaction, a finished run that measured nothing (a fleet
        board unreachable or failed before its run began) with the reason; its id."""
        if status not in OUTAGE_STATUSES:
            raise StoreError(f"an outage's status {status!r} is not one of "
                             f"{', '.join(OUTAGE_STATUSES)}")
        now = _now()
        with self._tx(f"record {status} board {hostname!r}") as conn:
            host_id = self._host_id(conn, hostname, {})
            res = conn.execute(insert(t.runs).values(
                host_id=host_id, suite=suite, suite_source=suite_source,
                scale=float(scale), status=status, started_at=now, finished_at=now,
                target=target, kernel="", simulated=bool(simulated),
                tool_versions=_dumps({}), sysinfo=_dumps({}), preflight=_dumps([]),
                command_line=_dumps(list(command_line)), uid=uuid.uuid4().hex,
                tags=_dumps(dict(tags)), source=_dumps({"tool": "rtbench"}),
                reason=reason[:2000], board=board[:255]))
            return _new_id(res)

    def add_bundle(self, run: RunDetail) -> tuple[int, bool]:
        """Store a whole run (import, upload) in one transaction.

        Returns (run id, created).  A run whose uid is already stored is not
        stored again: the existing id comes back with created False.  Ids inside
        the bundle are ignored; the bundle is not changed.
        """
        from rtbench.store.checks import BundleRejected, check_bundle

        try:
            check_bundle(run, RUN_STATUSES)
        except BundleRejected as exc:
            raise BundleInvalid(str(exc)) from None
        uid = run.uid or uuid.uuid4().hex
        try:
            return self._add_bundle(run, uid)
        except (StoreUnavailable, BundleInvalid):
            raise
        except StoreError:
            # the same uid stored by a parallel writer meanwhile: that run is this run
            found = self.run_id_by_uid(uid)
            if found is None:
                raise
            return found, False

    def add_bundles(self, runs: list[RunDetail]) -> list[int]:
        """Store many new runs (a generator, a bulk load) in one transaction; their ids.

        Each run is checked as add_bundle() checks it, before anything is written; a
        uid already stored fails the whole batch (nothing is written).
        """
        from rtbench.store.checks import BundleRejected, check_bundle

        for run in runs:
            try:
                check_bundle(run, RUN_STATUSES)
            except BundleRejected as exc:
                raise BundleInvalid(str(exc)) from None
        with self._tx(f"store {len(runs)} runs") as conn:
            ids = [self._insert_bundle(conn, run, run.uid or uuid.uuid4().hex)
                   for run in runs]
            refresh_groups(conn, keys_of_runs(conn, ids))
            return ids

    def _add_bundle(self, run: RunDetail, uid: str) -> tuple[int, bool]:
        """add_bundle() with the uid chosen, in one transaction."""
        from rtbench.rtprobe.wire.records import no_gc

        with self._tx(f"store run {run.suite!r}") as conn, no_gc():
            found = conn.execute(select(t.runs.c.id).where(
                t.runs.c.uid == uid)).scalar()
            if found is not None:
                return int(found), False
            run_id = self._insert_bundle(conn, run, uid)
            refresh_groups(conn, keys_of_runs(conn, [run_id]))
            return run_id, True

    def _insert_bundle(self, conn: Connection, run: RunDetail, uid: str) -> int:
        """Insert one whole run (its hosts row found or made) in conn's transaction."""
        uname = run.sysinfo.get("uname") if isinstance(run.sysinfo, dict) else None
        sysinfo = dict(run.sysinfo)
        if not isinstance(uname, dict) or "machine" not in uname:
            # the hosts row is keyed by the arch the bundle states
            sysinfo["uname"] = {**(uname or {}), "machine": run.arch}
        host_id = self._host_id(conn, run.hostname, sysinfo)
        board = (run.board or board_of(run.target, run.hostname))[:255]
        # parameters of a cached statement, not .values(): see _insert_measurement
        res = conn.execute(insert(t.runs), dict(
            host_id=host_id, suite=run.suite, suite_source=run.suite_source,
            scale=float(run.scale), status=run.status,
            started_at=run.started_at, finished_at=run.finished_at,
            target=run.target, kernel=run.kernel,
            simulated=bool(run.simulated),
            emulated=bool(run.emulated) or sysinfo_emulated(run.sysinfo),
            tool_versions=_dumps(run.tool_versions),
            sysinfo=_dumps(run.sysinfo), preflight=_dumps(run.preflight),
            command_line=_dumps(list(run.command_line)), uid=uid,
            tags=_dumps(dict(run.tags)), source=_dumps(dict(run.source)),
            board=board, reason=run.reason))
        run_id = _new_id(res)
        facts = RunFacts(run_id=run_id, board=board, suite=run.suite,
                         kernel=run.kernel, started_at=run.started_at,
                         simulated=bool(run.simulated))
        for position, sc in enumerate(run.scenarios):
            sres = conn.execute(insert(t.scenarios), dict(
                run_id=run_id, position=position, name=sc.name,
                loads=_dumps(sc.loads), load_cpus=sc.load_cpus,
                measure_cpus=sc.measure_cpus,
                intensity=None if sc.intensity is None
                else _dumps(sc.intensity)))
            scenario_id = _new_id(sres)
            for mpos, m in enumerate(sc.measurements):
                mid = _insert_measurement(conn, scenario_id, mpos, m)
                insert_cells(conn, facts, sc.name, mid, m)
        return run_id

    def run_id_by_uid(self, uid: str) -> int | None:
        """The id of the stored run with this uid, or None."""
        with self._tx("look up a run") as conn:
            found = conn.execute(select(t.runs.c.id).where(
                t.runs.c.uid == uid)).scalar()
            return None if found is None else int(found)

    def set_tags(self, run_id: int, tags: dict[str, str],
                 remove: tuple[str, ...] = ()) -> dict[str, str]:
        """Add (or overwrite) tags of run_id, drop the keys in remove; return all tags."""
        with self._tx(f"tag run {run_id}") as conn:
            row = conn.execute(select(t.runs.c.tags).where(
                t.runs.c.id == run_id)).first()
            if row is None:
                raise StoreError(f"run {run_id} is not in {self.url}; "
                                 "'rtbench ls' lists the stored runs")
            merged = {str(k): str(v) for k, v in (_loads(row.tags) or {}).items()}
            merged.update(tags)
            for key in remove:
                merged.pop(key, None)
            conn.execute(update(t.runs).where(t.runs.c.id == run_id)
                         .values(tags=_dumps(merged)))
            return merged

    def add_scenario(self, run_id: int, *, name: str,
                     loads: list[dict[str, Any]], load_cpus: str | None,
                     measure_cpus: str | None) -> int:
        """Record a scenario of run_id and return its id."""
        with self._tx(f"add scenario {name!r}") as conn:
            if conn.execute(select(t.runs.c.id).where(
                    t.runs.c.id == run_id)).scalar() is None:
                raise StoreError(f"run {run_id} does not exist in "
                                 f"{self.url}")
            position = conn.execute(
                select(func.count()).select_from(t.scenarios)
                .where(t.scenarios.c.run_id == run_id)).scalar_one()
            res = conn.execute(insert(t.scenarios).values(
                run_id=run_id, position=int(position), name=name,
                loads=_dumps(loads), load_cpus=load_cpus,
                measure_cpus=measure_cpus, intensity=None))
            return _new_id(res)

    def set_scenario_intensity(self, scenario_id: int,
                               intensity: dict[str, Any]) -> None:
        """Store the achieved load intensity of a scenario."""
        with self._tx("store the scenario intensity") as conn:
            conn.execute(update(t.scenarios)
                         .where(t.scenarios.c.id == scenario_id)
                         .values(intensity=_dumps(intensity)))

    def add_measurement(self, scenario_id: int, *, name: str, test: str,
                        params: dict[str, Any], command: list[str],
                        output: ProbeOutput, status: str,
                        thresholds_ns: list[int], reason: str | None = None) -> int:
        """Store what one rtprobe run printed (see add_measurement_detail).

        reason, when given, replaces the result's own (why the host judged it an error).
        """
        from rtbench.store.ingest import measurement_detail

        detail = measurement_detail(
            output, name=name, test=test, params=params, command=command,
            status=status, thresholds_ns=thresholds_ns)
        if reason is not None:
            detail.reason = reason
        return self.add_measurement_detail(scenario_id, detail)

    def add_measurement_detail(self, scenario_id: int,
                               detail: MeasurementDetail) -> int:
        """Store one measurement and everything it produced, atomically, after the
        scenario's others; return its id."""
        from rtbench.rtprobe.wire.records import no_gc

        with self._tx(f"store measurement {detail.name!r}") as conn, no_gc():
            position = conn.execute(
                select(func.count()).select_from(t.measurements)
                .where(t.measurements.c.scenario_id == scenario_id)
            ).scalar_one()
            mid = _insert_measurement(conn, scenario_id, int(position), detail)
            run = conn.execute(
                select(t.runs.c.id, t.runs.c.board, t.runs.c.suite, t.runs.c.kernel,
                       t.runs.c.started_at, t.runs.c.simulated,
                       t.scenarios.c.name.label("scenario"))
                .join(t.scenarios, t.scenarios.c.run_id == t.runs.c.id)
                .where(t.scenarios.c.id == scenario_id)).first()
            if run is not None:
                facts = RunFacts(run_id=int(run.id), board=run.board, suite=run.suite,
                                 kernel=run.kernel,
                                 started_at=as_utc(run.started_at) or _now(),
                                 simulated=bool(run.simulated))
                insert_cells(conn, facts, run.scenario, mid, detail)
                refresh_groups(conn, [(facts.board, facts.kernel, facts.suite,
                                       facts.simulated)])
            return mid

    def finish_run(self, run_id: int, status: str, reason: str | None = None) -> None:
        """Close a run with its final status (and, when given, why it ended so: a lost
        target's words)."""
        if status not in RUN_STATUSES:
            raise StoreError(f"run status {status!r} is not one of "
                             f"{', '.join(RUN_STATUSES)}")
        values: dict[str, object] = {"status": status, "finished_at": _now()}
        if reason is not None:
            values["reason"] = reason
        with self._tx(f"finish run {run_id}") as conn:
            conn.execute(update(t.runs).where(t.runs.c.id == run_id).values(**values))

    def mark_abandoned(self, owner_dead: Callable[[object], bool]) -> list[int]:
        """Mark `running` runs whose owner process is gone as `abandoned`; their ids.

        A run's owner is tool_versions["owner"] (pid, start time, boot id, host
        name); owner_dead(owner) decides.  Runs without an owner are left alone.
        Their finished measurements stay as they are.
        """
        with self._tx("look for abandoned runs") as conn:
            rows = conn.execute(select(t.runs.c.id, t.runs.c.tool_versions).where(
                t.runs.c.status == "running")).all()
        dead = []
        for row in rows:
            try:
                owner = (_loads(row.tool_versions) or {}).get("owner")
            except (ValueError, AttributeError):
                continue
            if owner is not None and owner_dead(owner):
                dead.append(int(row.id))
        if dead:
            with self._tx("mark abandoned runs") as conn:
                conn.execute(update(t.runs).where(t.runs.c.id.in_(dead),
                                                  t.runs.c.status == "running")
                             .values(status="abandoned", finished_at=_now()))
        return dead
