"""Live lines for the slow steps of opening a board (probe build, waiting for a shell,
a push over serial, reserving a place): nothing stays silent for more than two seconds.

A step is shown once it has lasted SHOW_AFTER_S (a quick one never is, so a quick step
that fails leaves its one-line error alone).  On a terminal it is then one line
rewritten in place (at most every UPDATE_PERIOD_S) that stays with its outcome;
elsewhere (a log, CI) it is one line, written once.  Board text shown here is stripped
of control characters.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

UPDATE_PERIOD_S = 0.5
# A step is shown once it has lasted this long (a quick one never is, so a quick step
# that fails leaves its error as the only line).
SHOW_AFTER_S = 1.5


def _printable(text: str) -> str:
    """text without control characters (board output must not drive the terminal)."""
    return "".join(ch for ch in text if ch.isprintable())


class Progress:
    """Step lines for one board: start(), update() while it lasts, done()."""

    def __init__(self, prefix: str, stream: TextIO | None = None,
                 interactive: bool | None = None) -> None:
        self.prefix = _printable(prefix)
        self.stream = stream if stream is not None else sys.stderr
        if interactive is None:
            isatty = getattr(self.stream, "isatty", None)
            interactive = bool(isatty and isatty())
        self.interactive = interactive
        self._step: str | None = None
        self._began = 0.0
        self._shown = False
        self._shown_at = 0.0
        self._width = 0

    def start(self, step: str) -> None:
        """A step begins (shown once it lasts SHOW_AFTER_S: call update() meanwhile)."""
        self._step = _printable(step)
        self._began = time.monotonic()
        self._shown = False

    def update(self, detail: str) -> None:
        """How the step is going: the step's line appears once it lasted SHOW_AFTER_S;
        a terminal then shows the detail too, a log only the step, once."""
        if self._step is None or time.monotonic() - self._began < SHOW_AFTER_S:
            return
        if not self._shown:
            self._shown = True
            if not self.interactive:
                self._show(f"{self._step} ...", final=True)
                return
        elif not self.interactive \
                or time.monotonic() - self._shown_at < UPDATE_PERIOD_S:
            return
        self._show(f"{self._step}: {_printable(detail)}")

    def done(self, result: str) -> None:
        """The step ended: on a terminal its line, if shown, stays with the result."""
        if self._step is None:
            return
        if self._shown and self.interactive:
            self._show(f"{self._step}: {_printable(result)}", final=True)
        self._step = None

    @contextmanager
    def ticking(self, step: str) -> Iterator[None]:
        """A step that gives no news of its own (a build): its line shows the seconds
        spent, updated from a thread until the block ends."""
        self.start(step)
        began = time.monotonic()
        finished = threading.Event()

        def tick() -> None:
            while not finished.wait(UPDATE_PERIOD_S):
                self.update(f"{time.monotonic() - began:.0f} s")

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        outcome = "failed"
        try:
            yield
            outcome = f"done in {time.monotonic() - began:.0f} s"
        finally:
            finished.set()
            ticker.join()
            self.done(outcome)

    def _show(self, text: str, final: bool = False) -> None:
        """Write one line (rewritten in place on a terminal until final)."""
        line = f"{self.prefix}: {text}"
        if self.interactive:
            pad = " " * max(0, self._width - len(line))
            self.stream.write("\r" + line + pad + ("\n" if final else ""))
            self._width = 0 if final else len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self._shown_at = time.monotonic()


class Forwarded(Progress):
    """Progress whose lines go to a function (a fleet's per-board live line): one per
    step, when it starts, as a log gets them."""

    def __init__(self, say: Callable[[str], None]) -> None:
        super().__init__("", stream=sys.stderr, interactive=False)
        self.say = say

    def _show(self, text: str, final: bool = False) -> None:
        """Hand the line on."""
        self.say(text)


class Silent(Progress):
    """Progress that shows nothing (tests, callers with their own display)."""

    def __init__(self) -> None:
        super().__init__("", stream=sys.stderr, interactive=False)

    def _show(self, text: str, final: bool = False) -> None:
        """Nothing."""
