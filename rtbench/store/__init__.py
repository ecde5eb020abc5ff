"""The results database: runs, scenarios, measurements, histograms, windows.

SQLAlchemy 2 Core over SQLite (default, WAL mode) or any URL SQLAlchemy
accepts; the schema is created and upgraded by Alembic (store/migrations).
"""

from __future__ import annotations

from sqlalchemy.exc import SQLAlchemyError

from rtbench import __version__
from rtbench.bundle import MeasurementDetail, RunDetail, RunSummary, ScenarioDetail, SeriesDetail
from rtbench.store.engine import (
    _at_head,
    _first_line,
    _make_engine,
    _migrate,
    _newest_writer,
    _reading_url,
    db_url_of,
    default_db_url,
)
from rtbench.store.errors import (
    BundleInvalid,
    DatabaseMissing,
    RunNotFound,
    StoreError,
    StoreUnavailable,
)
from rtbench.store.read import StoreReads
from rtbench.store.write import OUTAGE_STATUSES, RUN_STATUSES, StoreWrites

__all__ = [
    "OUTAGE_STATUSES", "RUN_STATUSES", "BundleInvalid", "DatabaseMissing",
    "MeasurementDetail", "RunDetail", "RunNotFound", "RunSummary", "ScenarioDetail",
    "SeriesDetail", "Store", "StoreError", "StoreUnavailable", "db_url_of", "default_db_url",
]


class Store(StoreWrites, StoreReads):
    """A handle on the results database: opened here, written through StoreWrites
    (store/write.py), read through StoreReads (store/read.py)."""

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

    def close(self) -> None:
        """Release every connection."""
        self._engine.dispose()

    def __enter__(self) -> Store:
        """Use as a context manager that closes on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the store."""
        self.close()


