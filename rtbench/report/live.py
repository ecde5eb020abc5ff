"""The terminal view of a run in progress: a live table on a terminal, one log line per
measurement everywhere.  It is an rtbench.run.events callback; the runner knows nothing of it.

    with LiveProgress(console) as live:
        Runner(target, store, on_event=live).run(suite, argv)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from rtbench.kinds import KindRegistry, packaged, registry_for
from rtbench.report.format import fmt_count, fmt_us
from rtbench.report.layout import Column, FittedTable
from rtbench.report.text import for_rich, for_terminal
from rtbench.rtprobe.wire.records import StartRecord, WindowRecord
from rtbench.run.events import (
    Event,
    MeasurementDone,
    Notice,
    ProbeStarted,
    ProbeWarning,
    RunStarted,
    SettleDone,
    StepStarted,
    Tick,
    WindowDone,
)


@dataclass
class _SeriesProgress:
    """Running per-series figures for the live display."""

    label: str
    windows: int = 0  # measured windows (warm-up ones are counted apart)
    warmup_windows: int = 0
    last: WindowRecord | None = None
    min_ns: int | None = None
    max_ns: int | None = None
    sum_ns: int = 0
    count: int = 0
    overruns: int = 0


# The live table: (header, abbreviation when the terminal is narrow).
LIVE_COLUMNS = (("windows", "win"), ("last min", "lmin"), ("last avg", "lavg"),
                ("last max", "lmax"), ("min", None), ("avg", None), ("max", None),
                ("overruns", "ovr"))


# What the live table's figures are.
LIVE_CAPTION = ("µs; last = the last window ('warm-up N' while warming up); min, avg, "
                "max, overruns: the measured windows so far, never the warm-up")


def suite_kinds(started: RunStarted) -> KindRegistry:
    """The kinds of a run's tests, as the probe's catalogue described them."""
    return registry_for({t.test: t.kind.host for t in started.suite.tests
                         if t.kind.host.name})


def measurement_line(done: MeasurementDone, kinds: KindRegistry | None = None) -> str:
    """One line (rich markup) describing a finished measurement; kinds: the run's
    (suite_kinds), for the headline of a test without a latency series."""
    result = done.output.result
    worst = None
    count = 0
    if result is not None:
        maxima = [int(s["max_ns"]) for s in result.series if s.get("max_ns") is not None]
        worst = max(maxima) if maxima else None
        count = sum(int(s.get("count", 0)) for s in result.series)
    else:
        # cut short (lost, killed): what its measured windows hold, as the store keeps it
        measured = [w for w in done.output.windows if not w.warmup and w.count]
        count = sum(w.count for w in measured)
        worst = max((w.max_ns for w in measured if w.max_ns is not None), default=None)
    colour = {"ok": "green", "fail": "red", "break": "red"}.get(done.status, "yellow")
    head = (f"[{colour}]{for_rich(done.status):>11}[/{colour}]  "
            f"{for_rich(done.scenario)} / {for_rich(done.name)}: ")
    if result is not None and not result.series:
        return head + for_rich((kinds or packaged()).headline(done.test, result.data)
                               or "no latency series")
    windows = len(done.output.windows)
    return (head + f"{count:,} sample{'' if count == 1 else 's'}, max {fmt_us(worst)} µs, "
            f"{windows} window{'' if windows == 1 else 's'}")


class LiveProgress:
    """Live progress: current step, per-series min/avg/max, suite ETA; log lines."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.kinds = packaged()
        self.suite_name = ""
        self.total = 0
        self.done = 0
        self.remaining_s = 0.0
        # the run's start, the expected length of its finished steps and the time they
        # took: the pace of the run so far (eta_s)
        self.started_at = time.monotonic()
        self.expected_done_s = 0.0
        self.taken_s = 0.0
        self.step = ""
        self.step_end = 0.0
        self.step_estimate = 0.0
        self.series: dict[int, _SeriesProgress] = {}
        self.live: Live | None = None
        self.entered = False

    def __enter__(self) -> LiveProgress:
        """Be ready to show the live display (on a terminal only); it appears with the
        run's first event, never as an empty frame."""
        self.entered = self.console.is_terminal
        return self

    def _show(self) -> None:
        """Start the live display once the run has something to show."""
        if self.entered and self.live is None and self.suite_name:
            self.live = Live(self.render(), console=self.console, auto_refresh=False,
                             transient=True)
            self.live.__enter__()

    def __exit__(self, *exc: object) -> None:
        """Remove the live display."""
        self.entered = False
        if self.live is not None:
            self.live.__exit__(None, None, None)
            self.live = None

    def __call__(self, event: Event) -> None:
        """Take one runner event."""
        if isinstance(event, RunStarted):
            self.kinds = suite_kinds(event)
            self.suite_name = event.suite.name
            self.total = len(event.suite.scenarios) * len(event.suite.tests)
            self.remaining_s = event.suite.estimated_seconds()
            self.started_at = time.monotonic()
        elif isinstance(event, StepStarted):
            self.begin(event.label, event.expected_s)
        elif isinstance(event, ProbeStarted):
            self.on_start(event.record)
        elif isinstance(event, WindowDone):
            self.on_window(event.window)
        elif isinstance(event, SettleDone):
            self.end(None)
        elif isinstance(event, ProbeWarning):
            self.console.print(Text(event.text, style="yellow"))
        elif isinstance(event, MeasurementDone):
            self.end(measurement_line(event, self.kinds))
            for message in event.messages:
                self.console.print(f"  [yellow]{for_rich(message)}[/yellow]", highlight=False)
            return
        elif isinstance(event, Notice):
            self.console.print(f"  [yellow]{for_rich(event.message)}[/yellow]",
                               highlight=False)
            return
        elif not isinstance(event, Tick):
            return
        self.refresh()

    def begin(self, step: str, expected_s: float) -> None:
        """A new measurement (or settle phase) starts."""
        self.step = step
        self.step_estimate = expected_s
        self.step_end = time.monotonic() + expected_s
        self.series = {}

    def end(self, line: str | None) -> None:
        """The current step ended; line (if any) is printed above the live display."""
        self.remaining_s = max(0.0, self.remaining_s - self.step_estimate)
        self.expected_done_s += self.step_estimate
        self.taken_s = time.monotonic() - self.started_at
        self.step_estimate = 0.0
        if line is not None:
            self.done += 1
            self.console.print(line, highlight=False)
        self.refresh()

    def on_start(self, record: StartRecord) -> None:
        """Learn the series labels."""
        for entry in record.series:
            index = int(entry.get("index", len(self.series)))
            self.series[index] = _SeriesProgress(str(entry.get("label", index)))

    def on_window(self, window: WindowRecord) -> None:
        """Fold a window into the per-series figures."""
        sp = self.series.setdefault(window.series, _SeriesProgress(str(window.series)))
        sp.last = window
        if window.warmup:  # shown as warm-up, never in the running figures
            sp.warmup_windows += 1
            return
        sp.windows += 1
        if window.count == 0:
            return
        sp.count += window.count
        sp.sum_ns += window.sum_ns
        sp.overruns += window.overruns
        if window.min_ns is not None:
            sp.min_ns = window.min_ns if sp.min_ns is None else min(sp.min_ns, window.min_ns)
        if window.max_ns is not None:
            sp.max_ns = window.max_ns if sp.max_ns is None else max(sp.max_ns, window.max_ns)

    def pace(self) -> float:
        """How much longer than expected the finished steps took (at least 1): a slow
        board's fixed costs (starting rtprobe and the loads over its console) that the
        steps' own lengths leave out, applied to the steps still to come."""
        if self.expected_done_s <= 0:
            return 1.0
        return max(1.0, self.taken_s / self.expected_done_s)

    def eta_s(self) -> float:
        """Seconds left in the suite (estimate): the current step's rest, then the steps
        still to come at the pace of the finished ones."""
        current = max(0.0, self.step_end - time.monotonic())
        return (self.remaining_s - self.step_estimate) * self.pace() + current

    def render(self) -> Group:
        """The live display: the step and the suite's ETA, then (once a measurement has
        series) per series its last window and its measured windows so far."""
        eta = max(0, int(self.eta_s()))
        head = Text(for_terminal(f"{self.suite_name}: {self.step or 'starting'}   ")
                    + f"[{self.done}/{self.total} done, ETA {eta // 60}:{eta % 60:02d}]")
        if not self.series:
            return Group(head)
        rows: list[list[str | Text]] = []
        for sp in self.series.values():
            last = sp.last
            last_avg = last.sum_ns / last.count if last and last.count else None
            windows = str(sp.windows)
            if last is not None and last.warmup:
                windows = f"warm-up {sp.warmup_windows}"
            rows.append([
                sp.label, windows,
                fmt_us(last.min_ns if last else None), fmt_us(last_avg),
                fmt_us(last.max_ns if last else None),
                fmt_us(sp.min_ns), fmt_us(sp.sum_ns / sp.count if sp.count else None),
                fmt_us(sp.max_ns), fmt_count(sp.overruns)])
        columns = [Column("series", "left", wrap=True)] + [
            Column(header, abbrev=abbrev) for header, abbrev in LIVE_COLUMNS]
        return Group(head, FittedTable(columns, rows, caption=LIVE_CAPTION))

    def refresh(self) -> None:
        """Redraw the live display (terminal only)."""
        self._show()
        if self.live is not None:
            self.live.update(self.render(), refresh=True)
