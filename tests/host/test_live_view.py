"""The live view of a run (rtbench.report.live): warm-up windows are labelled and kept out
of the running figures, and no empty frame is drawn before the run starts (issue 35)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from suite_helpers import parse

from rtbench.report.live import LiveProgress
from rtbench.rtprobe.wire.records import StartRecord, WindowRecord
from rtbench.run.events import RunStarted

SUITE = """
[suite]
name = "s"
[defaults]
duration = "2s"
warmup = "1s"
[[scenarios]]
name = "idle"
[[tests]]
name = "cyclic-1ms"
test = "cyclic"
"""


def _window(index: int, warmup: bool, max_ns: int) -> WindowRecord:
    """One window of series 0 with 1000 samples of which the largest is max_ns."""
    return WindowRecord(series=0, index=index, warmup=warmup, start_ns=0, end_ns=10**9,
                        count=1000, min_ns=1_000, max_ns=max_ns, sum_ns=5_000_000,
                        overruns=3 if warmup else 0, exceed=[], hist_json="[]")


def _text(live: LiveProgress) -> str:
    """The live display as plain text, 120 columns."""
    console = Console(record=True, width=120, file=io.StringIO())
    console.print(live.render())
    return console.export_text()


def test_warmup_windows_are_labelled_and_kept_out_of_the_running_figures() -> None:
    live = LiveProgress(Console(file=io.StringIO()))
    live(RunStarted(1, parse(SUITE)))
    live.begin("idle / cyclic-1ms", 3.0)
    live.on_start(StartRecord(raw={}, test="cyclic", simulated=True, params={}, common={},
                              series=[{"index": 0, "label": "cpu0"}], sysinfo={},
                              t0_unix_ns=0, version="0.1.0"))
    live.on_window(_window(0, True, 8_900_000))  # 8.9 ms in the warm-up
    live.on_window(_window(1, True, 20_000))
    text = _text(live)
    assert "warm-up 2" in text and "never the warm-up" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("cpu0"))
    assert "8,900.0" not in row and row.count(" - ") >= 3  # so far: nothing measured
    live.on_window(_window(2, False, 40_000))
    text = _text(live)
    row = next(line for line in text.splitlines() if line.strip().startswith("cpu0"))
    assert "warm-up" not in row and "8,900.0" not in row and "40.00" in row
    sp = live.series[0]
    assert (sp.windows, sp.warmup_windows, sp.max_ns, sp.overruns) == (1, 2, 40_000, 0)


def test_no_empty_first_frame() -> None:
    # issue 35: the first frame read ":    [0/0 done, ETA 0:00]"
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    with LiveProgress(console) as live:
        assert live.live is None and out.getvalue() == ""
        live(RunStarted(7, parse(SUITE)))
        assert live.live is not None
        first = _text(live).splitlines()[0]
    assert first.startswith("s: starting") and "[0/1 done, ETA 0:03]" in first
    assert live.live is None


def test_the_eta_follows_the_pace_of_the_finished_steps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a slow board: each 3 s step took 12 s (rtprobe and its start over the console),
    # so the steps still to come are expected to take four times their length too
    import rtbench.report.live as live_module

    clock = [100.0]
    monkeypatch.setattr(live_module.time, "monotonic", lambda: clock[0])
    suite = parse(SUITE.replace('name = "idle"', 'name = "idle"\n[[scenarios]]\n'
                                                 'name = "again"'))
    live = LiveProgress(Console(file=io.StringIO()))
    live(RunStarted(1, suite))
    assert live.pace() == 1.0
    live.begin("idle / cyclic-1ms", 3.0)
    clock[0] += 12.0
    live.end(None)
    assert live.pace() == 4.0
    live.begin("again / cyclic-1ms", 3.0)
    assert live.eta_s() == (live.remaining_s - 3.0) * 4.0 + 3.0
