"""What the runner tells whoever watches a run: small typed progress events.

The runner is headless: it calls one callback (`OnEvent`) with these, and a display
(rtbench.report.live for the terminal; a server or a test just as well) decides what to
show.  Events carry data, never formatting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rtbench.rtprobe.wire.records import ProbeOutput, StartRecord, WindowRecord
from rtbench.suites.model import Suite


@dataclass(frozen=True)
class RunStarted:
    """The run is stored (status running) and its first scenario is about to start."""

    run_id: int
    suite: Suite


@dataclass(frozen=True)
class StepStarted:
    """A step starts: a measurement ("scenario / test") or a scenario's settle time."""

    label: str
    expected_s: float
    measurement: bool


@dataclass(frozen=True)
class ProbeStarted:
    """rtprobe's start record arrived: the series it measures are known."""

    record: StartRecord


@dataclass(frozen=True)
class WindowDone:
    """rtprobe finished one window of one series."""

    window: WindowRecord


@dataclass(frozen=True)
class Tick:
    """Nothing new, time passed (a display may refresh its ETA)."""


@dataclass(frozen=True)
class SettleDone:
    """A scenario's settle time is over."""

    label: str


@dataclass(frozen=True)
class MeasurementDone:
    """A measurement ended and is stored; messages say what went wrong, if anything."""

    scenario: str
    name: str
    test: str
    status: str
    output: ProbeOutput
    messages: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ProbeWarning:
    """rtprobe printed a warning of its own (a stderr line with "warning:"), first time."""

    text: str


@dataclass(frozen=True)
class RunFinished:
    """The run is closed with its status and exit code."""

    run_id: int
    status: str
    exit_code: int


@dataclass(frozen=True)
class Notice:
    """Something the user must know that is not a measurement (a load that died)."""

    message: str


@dataclass(frozen=True)
class BoardPhase:
    """A board of a fleet moved on before or around its run: "reserved", "connecting",
    "checking" (the suite against its rtprobe), "running"."""

    phase: str


@dataclass(frozen=True)
class BoardDone:
    """A board of a fleet is finished.  run_id is None when nothing was stored (the board
    could not be reached or checked); message says why it did not end ok."""

    board: str
    run_id: int | None
    status: str  # a run status (ok fail interrupted error lost), or "unreachable"
    exit_code: int
    message: str | None = None


Event = (RunStarted | StepStarted | ProbeStarted | WindowDone | Tick | SettleDone
         | MeasurementDone | ProbeWarning | RunFinished | Notice)
OnEvent = Callable[[Event], None]
# what a fleet display hears: the board's name, then its runner's event or its own
FleetEvent = Event | BoardPhase | BoardDone
OnBoardEvent = Callable[[str, FleetEvent], None]


def ignore(event: Event) -> None:
    """An OnEvent that shows nothing (headless runs, tests)."""
