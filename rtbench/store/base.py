"""What every part of Store stands on: the engine, its URL, one transaction with the
database's errors worded for the user."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError

from rtbench.store.engine import _first_line
from rtbench.store.errors import StoreError, StoreUnavailable


class StoreBase:
    """A handle on the results database: its engine and transactions."""

    def __init__(self, engine: Engine, url: str) -> None:
        """Wrap an engine; use Store.open()."""
        self._engine = engine
        self._url = url

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
