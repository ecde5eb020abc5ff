"""`rtbench serve --keep-days N`: runs older than N days are pruned at start and hourly.

A daemon thread calls rtbench.store.removal.prune through the server's write queue
(runs tagged keep or baseline, and running ones, stay); each pass is one transaction
and is logged.  A pass that fails (database down) is logged and retried next hour.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from rtbench.server.writequeue import WriteQueue
from rtbench.store import Store, StoreError
from rtbench.store.removal import cutoff_of, prune

PRUNE_EVERY_S = 3600.0
log = logging.getLogger("rtbench.server")


class Retention:
    """Prunes runs older than keep_days now and every interval_s until stopped."""

    def __init__(self, store: Store, queue: WriteQueue, keep_days: int,
                 interval_s: float = PRUNE_EVERY_S) -> None:
        self.store = store
        self.queue = queue
        self.keep = timedelta(days=keep_days)
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rtbench-retention",
                                        daemon=True)

    def prune_once(self) -> int:
        """One pass: delete the expired runs; how many went (-1 when it failed)."""
        try:
            gone = self.queue.run(lambda: prune(self.store, cutoff_of(self.keep)))
        except StoreError as exc:
            log.warning("retention: pruning failed, next try in %.0f s: %s",
                        self.interval_s, exc)
            return -1
        if gone:
            log.warning("retention: deleted %d run(s) started before %s", len(gone),
                        cutoff_of(self.keep).isoformat(timespec="seconds"))
        return len(gone)

    def _loop(self) -> None:
        """Prune, then wait interval_s, until stop() is called."""
        while not self._stop.is_set():
            self.prune_once()
            self._stop.wait(self.interval_s)

    def start(self) -> None:
        """Start the pruning thread."""
        self._thread.start()

    def stop(self) -> None:
        """Ask the thread to end and wait for a pass under way."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
