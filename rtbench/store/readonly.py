"""How a reading command opens an SQLite database: never creating it, also when read-only.

`ls`, `show`, `report`, `export` and the other commands that only read must not create a
database (or its directory) where none is, and must be able to read one they cannot write:
on a read-only file system or in another user's directory a WAL database cannot get its
`-shm` file, so it is opened read-only — through the `-shm` file when a writer keeps one,
else as immutable when no write-ahead log holds changes.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from rtbench import EXIT_USAGE


class NoDatabase(Exception):
    """A reading command named a database that does not exist (exit 2)."""

    code = EXIT_USAGE


class UnreadableLog(Exception):
    """A read-only WAL database whose log holds changes this process cannot read."""


def _writable(path: Path) -> bool:
    """Whether path and its directory can be written (also: not a read-only file system)."""
    directory = path.parent
    if not (os.access(path, os.W_OK) and os.access(directory, os.W_OK | os.X_OK)):
        return False
    try:
        return not os.statvfs(directory).f_flag & os.ST_RDONLY
    except OSError:
        return False


def sqlite_path(url: str) -> Path | None:
    """The file of an SQLite URL (None for another database, memory or a file: URI)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    db = parsed.database
    if parsed.get_backend_name() != "sqlite" or not db or db == ":memory:" \
            or db.startswith("file:"):
        return None
    return Path(db).expanduser().absolute()


def check_exists(url: str) -> None:
    """NoDatabase when url is an SQLite file that does not exist (a command that changes
    stored runs must not create an empty database to find nothing in)."""
    path = sqlite_path(url)
    if path is not None and not path.exists():
        raise NoDatabase(f"database {url} does not exist, so nothing is stored there yet "
                         "(`rtbench run` creates it); check --db or RTBENCH_DB")


def reading_url(url: str) -> tuple[str, bool]:
    """The URL to read url's database with, and whether its schema may be upgraded.

    NoDatabase when an SQLite file does not exist; UnreadableLog when it can be opened
    only by ignoring changes in its write-ahead log.  Other databases are as given.
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        return url, True  # Store.open words the bad URL
    db = parsed.database
    if parsed.get_backend_name() != "sqlite" or not db or db == ":memory:" \
            or db.startswith("file:"):
        return url, True
    path = Path(db).expanduser().absolute()
    if not path.exists():
        raise NoDatabase(f"database {url} does not exist, so nothing is stored there yet "
                         "(`rtbench run` creates it); check --db or RTBENCH_DB")
    if _writable(path):
        return url, True
    quoted = quote(str(path))
    if Path(f"{path}-shm").exists():
        return f"sqlite:///file:{quoted}?mode=ro&uri=true", False
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise UnreadableLog(f"database {url} cannot be written and its write-ahead log "
                            f"{wal} holds changes that need a writable directory to be "
                            "read; copy the database with its -wal file somewhere writable")
    return f"sqlite:///file:{quoted}?immutable=1&uri=true", False
