"""Uploads to an SQLite database one at a time, retried while another process holds it.

SQLite takes one writer at a time; 400 concurrent uploads each waiting on the database's
lock ran past its busy timeout and 9 were answered 503 "database is locked".  The server
queues its own writes (a lock per store: one transaction at a time, in arrival order as
threads get it) and retries a write that another process (an `rtbench run` on the same
file) keeps locked, for up to WRITE_PATIENCE_S seconds, before it answers 503.
PostgreSQL takes concurrent writers and is not queued.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from rtbench.store import Store, StoreUnavailable

T = TypeVar("T")

# how long one upload may wait for a database another process keeps locked
WRITE_PATIENCE_S = 120.0
_BACKOFF_S = (0.05, 0.1, 0.2, 0.5, 1.0)


class WriteQueue:
    """Runs the server's database writes one at a time on SQLite, with retries."""

    def __init__(self, store: Store, patience_s: float = WRITE_PATIENCE_S) -> None:
        self._serial = store.engine.dialect.name == "sqlite"
        self._lock = threading.Lock()
        self.patience_s = patience_s

    def run(self, write: Callable[[], T]) -> T:
        """write() in the queue; StoreUnavailable once the database stayed locked."""
        if not self._serial:
            return write()
        deadline = time.monotonic() + self.patience_s
        attempt = 0
        while True:
            with self._lock:
                try:
                    return write()
                except StoreUnavailable as exc:
                    if "locked" not in str(exc) or time.monotonic() >= deadline:
                        raise
            time.sleep(_BACKOFF_S[min(attempt, len(_BACKOFF_S) - 1)])
            attempt += 1
