"""Opening a database: the URL a user gave, the engine (SQLite's pragmas), the schema
brought to the newest migration under a lock."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError, SQLAlchemyError

from rtbench import data_dir
from rtbench.store.errors import DatabaseMissing, StoreError

# How long a write waits for another process's lock before SQLite gives up.
BUSY_TIMEOUT_MS = 10000


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
