"""The stop flag of a run: set by SIGINT, SIGTERM or SIGHUP, read by the run's loops."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopFlag:
    """Set by SIGINT, SIGTERM or SIGHUP (a closed terminal) while a run is in progress."""

    def __init__(self) -> None:
        self.signal_name: str | None = None

    def __bool__(self) -> bool:
        return self.signal_name is not None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """Signal handler: remember the first signal."""
        if self.signal_name is None:
            self.signal_name = signal.Signals(signum).name

    @contextmanager
    def installed(self) -> Iterator[StopFlag]:
        """Install the handlers for STOP_SIGNALS, restoring the old ones after."""
        old = {s: signal.signal(s, self.handle) for s in STOP_SIGNALS}
        try:
            yield self
        finally:
            for signum, handler in old.items():
                signal.signal(signum, handler)
