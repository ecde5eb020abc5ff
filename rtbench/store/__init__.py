"""The results database: runs, scenarios, measurements, histograms, windows.

SQLAlchemy 2 Core over SQLite (default, WAL mode) or any URL SQLAlchemy
accepts; the schema is created and upgraded by Alembic (store/migrations).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Connection,
    Engine,
    Table,
    bindparam,
    create_engine,
    event,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    InterfaceError,
    OperationalError,
    SQLAlchemyError,
)

from rtbench import EXIT_USAGE, __version__, data_dir
from rtbench.bundle import (
    MeasurementDetail,
    RunDetail,
    RunSummary,
    ScenarioDetail,
    SeriesDetail,
    board_of,
    mark_beyond_hist,
    sysinfo_emulated,
)
from rtbench.store import schema as t
from rtbench.store.cellgroups import keys_of_runs, refresh_groups
from rtbench.store.cells import CellFilter, CellRow, RunFacts, insert_cells, read_cells
from rtbench.store.utc import as_utc

if TYPE_CHECKING:
    from rtbench.rtprobe.wire.records import ProbeOutput

__all__ = [
    "BundleInvalid", "MeasurementDetail", "RunDetail", "RunNotFound", "RunSummary",
    "ScenarioDetail", "SeriesDetail", "Store", "StoreError", "StoreUnavailable", "db_url_of",
    "default_db_url",
]

# running: being measured; lost: the target went away mid-run (finished windows kept);
# abandoned: the process that owned a running run is gone (found at a later start).
RUN_STATUSES = ("running", "ok", "fail", "interrupted", "error", "lost", "abandoned",
                "partial", "unreachable", "inconclusive")
# what a fleet board that left no measurement is stored as (runs.reason says why)
OUTAGE_STATUSES = ("unreachable", "error", "interrupted")


# How long a write waits for another process's lock before SQLite gives up.
BUSY_TIMEOUT_MS = 10000



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


class StoreError(Exception):
    """A database problem, worded as one line for the user."""


class RunNotFound(StoreError):
    """The run asked for is not in the database."""


class BundleInvalid(StoreError):
    """A run bundle that does not fit the database (refused before any write)."""


class StoreUnavailable(StoreError):
    """The database cannot be reached (server down, connection lost, locked)."""

# PostgreSQL advisory-lock key that serialises schema creation and upgrades
# (any fixed 64-bit number; "rtbench" in ASCII).
_PG_MIGRATE_LOCK = 0x7274_6265_6E63_68


def default_db_url() -> str:
    """RTBENCH_DB, else sqlite:///$XDG_DATA_HOME/rtbench/results.db."""
    env = os.environ.get("RTBENCH_DB")
    if env:
        return env
    return f"sqlite:///{data_dir() / 'results.db'}"


# A file name with one of these suffixes is an SQLite database even without a "/".
SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def db_url_of(text: str) -> str:
    """A database URL from what a user gave: a URL as is, a file path as SQLite.

    A path is text without "://" that names a directory ("/" in it, or ~), ends in
    .db/.sqlite/.sqlite3, or is an existing file: `--db /tmp/x.db` and `--db results.db`
    mean SQLite files (relative to the working directory).  Anything else is passed on
    as a URL, so a mistyped URL is reported as one.
    """
    if "://" in text or text.startswith("sqlite:"):
        return text
    path = Path(text).expanduser()
    if "/" in text or text.startswith("~") or text.endswith(SQLITE_SUFFIXES) or path.is_file():
        return f"sqlite:///{path.resolve()}"
    return text


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


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    """Per-connection SQLite settings: WAL, foreign keys, busy wait."""
    cur = dbapi_conn.cursor()
    # first, so that every later statement (the journal mode too) waits this long for a
    # lock another process holds, and no longer
    cur.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")
    # a read-only (or locked) database keeps its journal mode and stays readable
    with contextlib.suppress(sqlite3.DatabaseError):
        cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _make_engine(url: str) -> Engine:
    """An engine for url; SQLite gets its directory created and WAL mode."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(f"database URL {url!r} is not valid; use e.g. "
                         "sqlite:////path/results.db, a file path such as "
                         "./results.db, or postgresql+psycopg://user@host/db") from None
    if parsed.get_backend_name() == "sqlite":
        db = parsed.database
        if db and db != ":memory:" and not db.startswith("file:"):
            try:
                Path(db).expanduser().parent.mkdir(parents=True,
                                                   exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the directory of database "
                                 f"{db}: {exc.strerror}; use --db or "
                                 "RTBENCH_DB to choose another") from None
    try:
        # a server database may restart under a long-running `rtbench serve`:
        # test each pooled connection before use so the next request recovers
        engine = create_engine(url, future=True,
                               pool_pre_ping=parsed.get_backend_name() != "sqlite")
    except (ArgumentError, ImportError) as exc:
        raise StoreError(f"cannot use database {url!r}: {exc}; install its "
                         "driver or choose another with --db") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _alembic_config(engine: Engine) -> Any:
    """The Alembic configuration of the store's migrations."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location",
                        str(Path(__file__).parent / "migrations"))
    cfg.set_main_option("sqlalchemy.url",
                        engine.url.render_as_string(hide_password=False)
                        .replace("%", "%%"))
    return cfg


def head_revision() -> str | None:
    """The newest migration's revision, read from the files in migrations/versions
    (the one no other revision names as its down_revision).

    Read without Alembic, so that opening an up-to-date database costs no Alembic
    import; None when the files do not name exactly one head (Alembic then decides).
    """
    revisions: dict[str, set[str]] = {}
    for path in (Path(__file__).parent / "migrations" / "versions").glob("*.py"):
        found = dict(_REVISION_LINE.findall(path.read_text(encoding="utf-8")))
        if "revision" in found:
            down = found.get("down_revision") or "None"
            # one revision, None, or a merge revision's tuple of them
            revisions[found["revision"].strip("\"'")] = {
                name.strip(" \"'") for name in down.strip("()").split(",")
                if name.strip(" \"'") not in ("", "None")}
    heads = set(revisions) - set().union(*revisions.values())
    return heads.pop() if len(heads) == 1 else None


_REVISION_LINE = re.compile(r"^(revision|down_revision)\s*(?::[^=]*)?=\s*(.+?)\s*$", re.M)


def _at_head(engine: Engine) -> bool:
    """True when the database's schema is already at the newest revision."""
    head = head_revision()
    if head is None:
        return False
    try:
        with engine.connect() as conn:
            current = conn.execute(text("SELECT version_num FROM alembic_version")
                                   ).scalar()
    except (OperationalError, DBAPIError):
        return False  # no alembic_version table yet
    return current == head


@contextlib.contextmanager
def _sqlite_migrate_lock(engine: Engine) -> Iterator[None]:
    """Hold an exclusive file lock (<db>.lock) while the schema is created.

    SQLite runs DDL outside pysqlite's implicit transactions, so two processes
    creating a new database at once would both try CREATE TABLE; the lock makes
    the second wait and then find the schema in place.
    """
    db = engine.url.database
    if not db or db == ":memory:" or db.startswith("file:"):
        yield
        return
    try:
        fd = os.open(f"{Path(db).expanduser()}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                     0o644)
    except OSError:
        yield  # read-only directory: nobody else can create the schema there either
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest Alembic revision, safely under concurrency.

    Parallel first uses of a new database (six `rtbench run` at once, several
    server workers) serialise on a lock: an advisory lock on PostgreSQL (held
    by the migration's own transaction), a file lock next to a SQLite file.
    """
    if _at_head(engine):
        return
    from alembic import command

    cfg = _alembic_config(engine)
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                         {"key": _PG_MIGRATE_LOCK})
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
        return
    with _sqlite_migrate_lock(engine), engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


class Store:
    """A handle on the results database."""

    def __init__(self, engine: Engine, url: str) -> None:
        """Wrap an engine; use Store.open()."""
        self._engine = engine
        self._url = url

    @classmethod
    def open(cls, url: str | None = None, *, migrate: bool = True,
             reading: bool = False, existing: bool = False) -> Store:
        """Open (and by default create/upgrade) the database at url; reading: for a
        command that only reads (nothing created, a read-only database opened as such);
        existing: for a command that changes stored runs (nothing created)."""
        url = db_url_of(url or default_db_url())
        engine_url = url
        if existing and not reading:
            from rtbench.store.readonly import NoDatabase, check_exists

            try:
                check_exists(url)
            except NoDatabase as exc:
                raise DatabaseMissing(str(exc)) from None
        if reading:
            engine_url, migrate = _reading_url(url, migrate)
        engine = _make_engine(engine_url)
        if reading and engine_url != url and not _at_head(engine):
            engine.dispose()
            raise StoreError(f"database {url} is read-only and its schema is not the one "
                             f"rtbench {__version__} reads; open it with the rtbench that "
                             "wrote it, or copy it somewhere writable")
        if migrate:
            try:
                _migrate(engine)
            except SQLAlchemyError as exc:
                engine.dispose()
                raise StoreError(f"cannot open database {url}: "
                                 f"{_first_line(exc)}") from None
            except Exception as exc:
                # Alembic is imported only when a migration runs: its error class too
                from alembic.util.exc import CommandError

                if not isinstance(exc, CommandError):
                    raise
                written_by = _newest_writer(engine)
                engine.dispose()
                raise StoreError(
                    f"database {url} has a newer schema than rtbench {__version__} "
                    f"knows ({_first_line(exc)}); it was written by rtbench "
                    f"{written_by or 'of a newer version'}: upgrade rtbench to at least "
                    "that version, or use another --db") from None
        return cls(engine, url)

    @property
    def url(self) -> str:
        """The database URL (password hidden)."""
        return make_url(self._url).render_as_string(hide_password=True)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for analysis queries and tests)."""
        return self._engine

    @contextmanager
    def _tx(self, what: str) -> Iterator[Connection]:
        """One transaction; database errors become StoreError naming what."""
        try:
            with self._engine.begin() as conn:
                yield conn
        except (OperationalError, InterfaceError) as exc:
            raise StoreUnavailable(f"database {self.url}: cannot {what}: "
                                   f"{_first_line(exc)}") from None
        except SQLAlchemyError as exc:
            raise StoreError(f"database {self.url}: cannot {what}: "
                             f"{_first_line(exc)}") from None
        except (ValueError, TypeError, OverflowError) as exc:
            # a row SQLAlchemy cannot convert (a date that is not one): damaged data
            raise StoreError(f"database {self.url}: cannot {what}: a stored value cannot "
                             f"be read ({_first_line(exc)}); the database is damaged, "
                             "restore it from a backup") from None

    def transaction(self, what: str) -> contextlib.AbstractContextManager[Connection]:
        """One transaction for the store's query modules (errors as in _tx)."""
        return self._tx(what)

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

    def close(self) -> None:
        """Release every connection."""
        self._engine.dispose()

    def __enter__(self) -> Store:
        """Use as a context manager that closes on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the store."""
        self.close()


class DatabaseMissing(StoreError):
    """A command that only reads named a database that does not exist."""

    code = EXIT_USAGE


def _reading_url(url: str, migrate: bool) -> tuple[str, bool]:
    """The URL a reading command opens url with, and whether it may upgrade the schema."""
    from rtbench.store.readonly import NoDatabase, UnreadableLog, reading_url

    try:
        engine_url, may_migrate = reading_url(url)
    except NoDatabase as exc:
        raise DatabaseMissing(str(exc)) from None
    except UnreadableLog as exc:
        raise StoreError(str(exc)) from None
    return engine_url, migrate and may_migrate


def _migrate(engine: Engine) -> None:
    """Run the Alembic upgrade (module-level name kept for Store.open)."""
    migrate(engine)


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


def _newest_writer(engine: Engine) -> str | None:
    """The rtbench version that stored the newest run, if it can be read."""
    try:
        with engine.connect() as conn:
            text = conn.exec_driver_sql(
                "SELECT tool_versions FROM runs ORDER BY id DESC LIMIT 1").scalar()
        version = json.loads(text).get("rtbench") if text else None
    except (SQLAlchemyError, ValueError, AttributeError):
        return None
    return str(version) if version else None


def _first_line(exc: BaseException) -> str:
    """The first line of an exception's text (driver messages are long)."""
    text = str(getattr(exc, "orig", None) or exc)
    return text.splitlines()[0] if text else type(exc).__name__
