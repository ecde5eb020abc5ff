"""What a fleet shows: one live line per board while it runs, then the summary table and
the HTML fleet report.  FleetProgress is the fleet's OnBoardEvent callback; the boards'
threads call it, so its state sits behind a lock.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
from rich.console import Console
from rich.live import Live
from rich.text import Text

from rtbench.analysis.fleet import BoardSummary
from rtbench.kinds import KindRegistry, packaged
from rtbench.report.format import fmt_template_value, fmt_us
from rtbench.report.layout import Column, FittedTable
from rtbench.report.live import measurement_line, suite_kinds
from rtbench.report.text import for_rich, for_terminal
from rtbench.run.events import (
    BoardDone,
    BoardPhase,
    FleetEvent,
    MeasurementDone,
    Notice,
    ProbeWarning,
    RunStarted,
    StepStarted,
)
from rtbench.util.atomicfile import write_atomic

STATUS_STYLE = {"ok": "green", "fail": "red", "break": "red", "lost": "bold red",
                "unreachable": "bold red", "error": "bold red", "interrupted": "yellow"}


@dataclass
class _BoardLine:
    """What the live line of one board shows."""

    name: str
    phase: str = "waiting"
    step: str = ""
    run_id: int | None = None
    done: int = 0
    total: int = 0
    worst_ns: int | None = None
    ended: BoardDone | None = None
    kinds: KindRegistry = field(default_factory=packaged)


class FleetProgress:
    """Live progress of a fleet: a table of one line per board on a terminal; log lines
    (board name first) everywhere."""

    def __init__(self, console: Console, boards: list[str]) -> None:
        self.console = console
        self.lines = {name: _BoardLine(name) for name in boards}
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self.live: Live | None = None

    def __enter__(self) -> FleetProgress:
        """Start the live table (on a terminal only)."""
        if self.console.is_terminal:
            self.live = Live(console=self.console, get_renderable=self.render,
                             refresh_per_second=4, transient=True)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        """Remove the live table."""
        if self.live is not None:
            self.live.__exit__(None, None, None)
            self.live = None

    def __call__(self, board: str, event: FleetEvent) -> None:
        """Take one event of one board."""
        with self._lock:
            line = self.lines[board]
            said = self._update(line, event)
        if said is not None:
            self.console.print(f"[bold]{for_rich(board)}[/bold] {said}", highlight=False)

    def _update(self, line: _BoardLine, event: FleetEvent) -> str | None:
        """Fold event into line; return a log line (rich markup) when there is one."""
        if isinstance(event, BoardPhase):
            line.phase = event.phase
            return None if self.live is not None else for_rich(event.phase)
        if isinstance(event, RunStarted):
            line.run_id = event.run_id
            line.kinds = suite_kinds(event)
            line.total = len(event.suite.scenarios) * len(event.suite.tests)
            return None if self.live is not None else f"run {event.run_id} started"
        if isinstance(event, StepStarted):
            line.step = event.label
            return None
        if isinstance(event, MeasurementDone):
            line.done += 1
            result = event.output.result
            if result is not None:
                maxima = [int(s["max_ns"]) for s in result.series
                          if s.get("max_ns") is not None]
                if maxima:
                    line.worst_ns = max([*maxima, line.worst_ns or 0])
            text = measurement_line(event, line.kinds)
            return text + "".join(f"\n  [yellow]{for_rich(m)}[/yellow]"
                                  for m in event.messages)
        if isinstance(event, (Notice, ProbeWarning)):
            text = event.message if isinstance(event, Notice) else event.text
            return f"[yellow]{for_rich(text)}[/yellow]"
        if isinstance(event, BoardDone):
            line.ended = event
            line.phase = event.status
            style = STATUS_STYLE.get(event.status, "yellow")
            run = f"run {event.run_id}: " if event.run_id is not None else ""
            why = f" ({for_rich(event.message)})" if event.message else ""
            return f"{run}[{style}]{for_rich(event.status)}[/{style}]{why}"
        return None

    def render(self) -> FittedTable:
        """The live table: one line per board."""
        with self._lock:
            lines = list(self.lines.values())
        elapsed = int(time.monotonic() - self.started)
        rows: list[list[str | Text]] = []
        for line in lines:
            style = STATUS_STYLE.get(line.phase, "") if line.ended else "cyan"
            rows.append([
                line.name, Text(for_terminal(line.phase), style=style),
                "-" if line.run_id is None else str(line.run_id),
                f"{line.done}/{line.total}" if line.total else "-",
                fmt_us(line.worst_ns), line.step if not line.ended else ""])
        columns = [Column("board", "left", wrap=True), Column("state", "left"), Column("run"),
                   Column("done"), Column("max µs"), Column("now", "left", wrap=True)]
        return FittedTable(columns, rows, title=f"fleet: {len(lines)} boards, "
                                                f"{elapsed // 60}:{elapsed % 60:02d}")


def summary_table(fleet_id: str, suite: str, boards: list[BoardSummary]) -> FittedTable:
    """The fleet summary: per board and scenario, status, worst p99.9 and max (us)."""
    rows: list[list[str | Text]] = []
    for b in boards:
        status = Text(for_terminal(b.status), style=STATUS_STYLE.get(b.status, ""))
        run = "-" if b.run_id is None else str(b.run_id)
        if not b.scenarios:
            rows.append([for_terminal(b.board), status, run, "-", "-", "-", "-"])
            continue
        for i, sc in enumerate(b.scenarios):
            first = i == 0
            rows.append([for_terminal(b.board) if first else "", status if first else "",
                         run if first else "", for_terminal(sc.scenario),
                         Text(for_terminal(sc.status),
                              style=STATUS_STYLE.get(sc.status, "")),
                         fmt_us(sc.p999_ns), fmt_us(sc.max_ns)])
    columns = [Column("board", "left", True), Column("board status", "left"),
               Column("run"), Column("scenario", "left", True), Column("status", "left"),
               Column("worst p99.9"), Column("max")]
    simulated = " · SIMULATED" if any(b.simulated for b in boards) else ""
    return FittedTable(columns, rows,
                       title=f"fleet {fleet_id} · {suite}{simulated}",
                       caption="µs; worst over every thread of every test of the scenario; "
                               "p99.9 needs 10,000 samples in a thread")


def problems(boards: list[BoardSummary]) -> list[str]:
    """One line (plain text, for the terminal) per board that did not end ok."""
    return [for_terminal(f"{b.board}: {b.status}" + (f": {b.message}" if b.message else ""))
            for b in boards if b.status != "ok"]


def render_html(fleet_id: str, suite: str, started: str, boards: list[BoardSummary],
                exit_code: int) -> str:
    """The HTML fleet report (every text escaped by Jinja2)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, finalize=fmt_template_value)
    env.filters["us"] = fmt_us
    scenarios: list[str] = []
    for b in boards:
        for sc in b.scenarios:
            if sc.scenario not in scenarios:
                scenarios.append(sc.scenario)
    cells = {(b.board, sc.scenario): sc for b in boards for sc in b.scenarios}
    return env.get_template("fleet.html.j2").render(
        fleet_id=fleet_id, suite=suite, started=started, boards=boards,
        scenarios=scenarios, cells=cells, exit_code=exit_code,
        simulated=any(b.simulated for b in boards))


def write_html(path: Path, fleet_id: str, suite: str, started: str,
               boards: list[BoardSummary], exit_code: int) -> None:
    """Write the HTML fleet report to path whole or not at all."""
    write_atomic(path, render_html(fleet_id, suite, started, boards, exit_code)
                 .encode("utf-8"))
