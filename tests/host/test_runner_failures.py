"""The runner's failure paths, driven by the fake target (no process runs for real)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from fake_target import FakeProcess, FakeTarget, Script
from synth_probe import synth_lines

from rtbench import EXIT_ENV, EXIT_INTERRUPTED, EXIT_OK
from rtbench.run.events import (
    Event,
    MeasurementDone,
    ProbeStarted,
    RunFinished,
    RunStarted,
    StepStarted,
    WindowDone,
)
from rtbench.run.runner import Runner
from rtbench.store import Store
from rtbench.suites.model import Suite
from rtbench.suites.parse import parse_suite
from rtbench.targets import TargetLost

SUITE = """
[suite]
name = "fake"
[defaults]
duration = "100ms"
warmup = "0s"
settle = "0s"
thresholds = ["50us"]
[[scenarios]]
name = "idle"
{loads}
[[tests]]
name = "first"
test = "cyclic"
[[tests]]
name = "second"
test = "cyclic"
"""


def suite(loads: str = "") -> Suite:
    """The two-test suite, with loads if given."""
    return parse_suite(SUITE.format(loads=loads), "fake.toml")


def lines(with_result: bool = True) -> list[str]:
    """A cyclic run: start, 1 warm-up + 3 windows of 2 series, spikes, maybe a result."""
    out, _ = synth_lines(series=2, windows=3, with_result=with_result)
    return out


def windows_of(text: list[str]) -> int:
    """How many window records the lines hold."""
    return sum(1 for line in text if json.loads(line).get("type") == "window")


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    """An empty database."""
    return Store.open(f"sqlite:///{tmp_path / 'r.db'}")


def run(target: FakeTarget, store: Store, the_suite: Suite | None = None,
        **options: float) -> tuple[Runner, list[Event], float]:
    """Run a suite on target; the runner, the events it emitted and the seconds it took."""
    events: list[Event] = []
    runner = Runner(target, on_event=events.append, **options)
    started = time.monotonic()
    runner.run(the_suite or suite(), store, ["rtbench", "run", "fake.toml"])
    return runner, events, time.monotonic() - started


def measurements(store: Store) -> list[tuple[str, str, int]]:
    """(name, status, stored windows) of every measurement of run 1."""
    detail = store.get_run(1)
    return [(m.name, m.status, len(m.windows))
            for sc in detail.scenarios for m in sc.measurements]


def test_a_clean_run_emits_events_and_stores_everything(store: Store) -> None:
    target = FakeTarget(lambda args: Script(lines()))
    runner, events, _ = run(target, store)
    kinds = [type(e) for e in events]
    assert kinds[0] is RunStarted and kinds[-1] is RunFinished
    assert kinds.count(StepStarted) == kinds.count(MeasurementDone) == 2
    assert kinds.count(ProbeStarted) == 2
    assert kinds.count(WindowDone) == 2 * windows_of(lines())
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.exit_code) == ("ok", EXIT_OK)
    assert measurements(store) == [("first", "ok", windows_of(lines())),
                                   ("second", "ok", windows_of(lines()))]
    detail = store.get_run(1)
    assert detail.target == "fake" and detail.tool_versions["rtprobe"] == "0.1.0-fake"
    assert all(p.stopped or p.eof for _, p in target.started)


def test_a_probe_still_writing_out_its_queue_is_not_taken_for_hung(store: Store) -> None:
    # past its expected length (100 ms) rtprobe may still write out the records it queued
    # for a slow link: lines 0.1 s apart, 1.4 s in all, against a 0.3 s grace
    text = lines()
    target = FakeTarget(lambda args: Script(text, line_interval_s=1.4 / len(text)))
    _, events, _ = run(target, store, hang_grace_s=0.3)
    done = [e for e in events if isinstance(e, MeasurementDone)]
    assert [d.status for d in done] == ["ok", "ok"]
    assert not any("past its expected length" in m for d in done for m in d.messages)


def test_a_hung_probe_is_killed_after_its_grace(store: Store) -> None:
    target = FakeTarget(lambda args: Script(lines(with_result=False), then="hang"))
    runner, events, took = run(target, store, hang_grace_s=0.3)
    assert took < 5.0
    assert all(p.stopped for _, p in target.started)
    done = [e for e in events if isinstance(e, MeasurementDone)]
    assert [d.status for d in done] == ["error", "error"]
    assert any("past its expected length; killed" in m for m in done[0].messages)
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.exit_code) == ("error", EXIT_ENV)
    # the finished windows of the hung run are kept
    assert measurements(store)[0] == ("first", "error", windows_of(lines(with_result=False)))


def test_sigint_grace_then_kill(store: Store) -> None:
    target = FakeTarget(lambda args: Script(lines(with_result=False), then="hang",
                                            ignore_sigint=True))
    events: list[Event] = []
    runner = Runner(target, on_event=events.append, interrupt_grace_s=0.3,
                    hang_grace_s=60.0)

    def on_event(event: Event) -> None:
        events.append(event)
        if isinstance(event, WindowDone):
            runner.stop.handle(signal.SIGINT, None)

    runner.on_event = on_event
    started = time.monotonic()
    outcome = runner.run(suite(), store, ["rtbench"])
    assert time.monotonic() - started < 5.0
    assert (outcome.status, outcome.exit_code) == ("interrupted", EXIT_INTERRUPTED)
    args, proc = target.started[0]
    assert proc.interrupted and proc.stopped
    assert len(target.started) == 1  # the second test never started
    assert any("did not stop after SIGINT; killed" in m for m in outcome.messages)
    assert measurements(store) == [("first", "interrupted", windows_of(lines(False)))]
    assert store.list_runs()[0].status == "interrupted"


def test_sigint_lets_the_probe_write_its_result(store: Store) -> None:
    result = [line for line in lines() if json.loads(line)["type"] == "result"][0]
    interrupted = json.dumps({**json.loads(result), "status": "interrupted"})
    target = FakeTarget(lambda args: Script(lines(with_result=False), then="hang",
                                            on_interrupt=[interrupted]))
    runner = Runner(target, interrupt_grace_s=30.0)

    def on_event(event: Event) -> None:
        if isinstance(event, WindowDone):
            runner.stop.handle(signal.SIGINT, None)

    runner.on_event = on_event
    started = time.monotonic()
    outcome = runner.run(suite(), store, ["rtbench"])
    assert time.monotonic() - started < 5.0
    assert (outcome.status, outcome.exit_code) == ("interrupted", EXIT_INTERRUPTED)
    assert not any("killed" in m for m in outcome.messages)
    assert measurements(store)[0][:2] == ("first", "interrupted")


def test_a_cut_short_last_line_is_reported_and_the_rest_kept(store: Store) -> None:
    text = lines(with_result=False)
    target = FakeTarget(lambda args: Script(text, then="cut"))
    _, events, _ = run(target, store)
    done = [e for e in events if isinstance(e, MeasurementDone)]
    assert any("last line was cut short" in m for m in done[0].messages)
    # the cut line (a spike or window) is not stored; every complete window is
    complete = windows_of(text[:-1])
    assert measurements(store)[0] == ("first", "error", complete)


def test_a_load_dying_mid_scenario_ends_the_scenario(store: Store) -> None:
    def script(args: list[str]) -> Script:
        if args[0] == "load":
            return Script([], then="die", exit_code=1, stderr="rtprobe load: cannot fork\n")
        return Script(lines(), line_interval_s=0.05)

    target = FakeTarget(script)
    runner, events, _ = run(target, store, suite('loads = [{ kind = "cpu", rate = 100 }]'))
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.exit_code) == ("error", EXIT_ENV)
    assert any("load cpu exited (1): rtprobe load: cannot fork" in m for m in runner.messages)
    # the first test ran (the load died during it); the second never started
    assert [m[0] for m in measurements(store)] == ["first"]
    load = store.get_run(1).scenarios[0].intensity
    assert load is not None and load["loads"][0]["kind"] == "cpu"


def test_a_lost_connection_keeps_the_finished_windows(store: Store) -> None:
    text = lines(with_result=False)[:5]  # start + 4 windows
    target = FakeTarget(lambda args: Script(text, then="lose"))
    runner, events, _ = run(target, store)
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.exit_code) == ("lost", EXIT_ENV)
    assert measurements(store) == [("first", "lost", 4), ("second", "not started", 0)]
    assert store.list_runs()[0].status == "lost"
    assert any("connection to target fake lost" in m for m in runner.messages)
    # issue 24: the measurements that never started were not named
    assert any(m.startswith("never started (the connection to the target was lost "
                            "first): ") and m.endswith("/ second") for m in runner.messages)


def test_a_lost_run_stores_the_measurements_that_never_started(store: Store) -> None:
    from rtbench.analysis.verdict import verdict_of
    from rtbench.bundle import NOT_STARTED

    text = lines(with_result=False)[:5]  # start + 4 windows, then the link breaks
    target = FakeTarget(lambda args: Script(text, then="lose"))
    two_scenarios = suite('[[scenarios]]\nname = "later"')
    run(target, store, two_scenarios)
    detail = store.get_run(1)
    rows = [(sc.name, m.name, m.status, sum(s.count for s in m.series), m.reason)
            for sc in detail.scenarios for m in sc.measurements]
    reason = "never started: the connection to target fake was lost before it could start"
    assert [r[:3] for r in rows] == [("idle", "first", "lost"),
                                     ("idle", "second", NOT_STARTED),
                                     ("later", "first", NOT_STARTED),
                                     ("later", "second", NOT_STARTED)]
    assert rows[0][3] > 0  # cut short, with its samples kept
    assert all(r[3] == 0 and r[4] == reason for r in rows[1:])
    headline = verdict_of(detail).headline
    assert "idle / first cut short (" in headline
    assert ("never started: idle / second, later / first, later / second"
            in headline)


class SilentAtSecondStart(FakeTarget):
    """A board whose console goes silent while its second rtprobe is being started."""

    WORDS = ("fake: the board stopped answering its console while starting rtprobe "
             "(nothing for 30 s); it may have hung or rebooted")

    def start_probe(self, args: list[str], cpus: str | None = None) -> FakeProcess:
        """The first start replays the script; the second is lost in the target's words."""
        if self.started:
            raise TargetLost(self.WORDS)
        return super().start_probe(args, cpus)


def test_a_board_lost_while_starting_a_test_says_why_and_keeps_the_test(
        store: Store) -> None:
    """Issue 34: a zoo board went silent while its next test was being started: the run
    ended lost, the words were nowhere (not printed, not stored), and the test that was
    starting was neither stored nor named among those that never started."""
    from rtbench.analysis.verdict import verdict_of
    from rtbench.bundle import NOT_STARTED

    target = SilentAtSecondStart(lambda args: Script(lines()))
    run(target, store)
    assert [m[:2] for m in measurements(store)] == [("first", "ok"), ("second", NOT_STARTED)]
    detail = store.get_run(1)
    words = SilentAtSecondStart.WORDS.removeprefix("fake: ")
    assert (detail.status, detail.reason) == ("lost", words)
    headline = verdict_of(detail).headline
    assert headline.startswith(f"LOST: the connection to the target broke: {words}; "
                               "1 measurement finished; never started: idle / second"), \
        headline


def test_a_lost_run_keeps_the_targets_words(store: Store) -> None:
    """The words of the TargetLost that cut a measurement short are the run's reason."""
    target = FakeTarget(lambda args: Script(lines(with_result=False)[:5], then="lose"))
    run(target, store)
    detail = store.get_run(1)
    assert (detail.status, detail.reason) == ("lost", "fake connection closed")


def test_the_live_view_prints_one_line_per_measurement(store: Store) -> None:
    import io

    from rich.console import Console

    from rtbench.report.live import LiveProgress

    console = Console(file=io.StringIO(), width=120)
    target = FakeTarget(lambda args: Script(lines(with_result=False), then="hang"))
    with LiveProgress(console) as live:
        Runner(target, on_event=live, hang_grace_s=0.2).run(suite(), store, ["rtbench"])
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert text.count("error  idle / ") == 2
    # issue 24: a measurement without a result said "0 samples"; its windows hold 3000
    assert "idle / first: 3,000 samples" in text and "windows" in text
    assert text.count("past its expected length; killed") == 2
    assert live.done == 2 and live.total == 2


def test_show_json_and_report_name_the_measurements_that_never_started(
        tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rtbench.cli import main

    url = f"sqlite:///{tmp_path / 'lost.db'}"
    with Store.open(url) as store:
        target = FakeTarget(lambda args: Script(lines(with_result=False)[:5], then="lose"))
        run(target, store)
    cli = CliRunner()
    shown = cli.invoke(main, ["show", "1", "--db", url], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "never started: idle / second" in shown.output
    assert "reason: never started: the connection to target fake was lost" in shown.output
    as_json = cli.invoke(main, ["show", "1", "--json", "--db", url])
    stored = [(m["name"], m["status"], len(m["series"]))
              for sc in json.loads(as_json.output)["scenarios"] for m in sc["measurements"]]
    assert stored == [("first", "lost", 2), ("second", "not started", 0)]
    html = tmp_path / "r.html"
    report = cli.invoke(main, ["report", "1", "-o", str(html), "--db", url])
    assert report.exit_code == 0, report.output
    assert "never started: idle / second" in html.read_text()


PI_ONE_CPU = ("rtprobe: pi: not applicable here: needs 2 CPUs, the board has 1 (the hogs "
              "would take the only one for --hog-time); add --force to run anyway\n")
NO_CC = ("rtprobe: load build: not applicable here: no C compiler (cc, gcc, clang) on PATH, "
         "and the build load needs one on the board: install one, or name it with --cc\n")


def test_a_test_the_board_cannot_run_is_an_inconclusive_cell(store: Store) -> None:
    """rtprobe's "not applicable here" (exit 3: too few CPUs) is a cell that says why,
    not an error: the run goes on, ends inconclusive with exit 5, and its verdict
    says so."""
    from rtbench import EXIT_INCONCLUSIVE
    from rtbench.analysis.verdict import verdict_of

    calls: list[int] = []

    def script(args: list[str]) -> Script:
        calls.append(1)
        if len(calls) == 1:
            return Script([], then="die", exit_code=3, stderr=PI_ONE_CPU)
        return Script(lines())

    runner, events, _ = run(FakeTarget(script), store)
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.exit_code) == ("inconclusive", EXIT_INCONCLUSIVE)
    assert measurements(store) == [("first", "inconclusive", 0),
                                   ("second", "ok", windows_of(lines()))]
    cell = store.get_run(1).scenarios[0].measurements[0]
    assert cell.reason == ("needs 2 CPUs, the board has 1 (the hogs would take the only "
                           "one for --hog-time); add --force to run anyway")
    verdict = verdict_of(store.get_run(1))
    assert verdict.status == "inconclusive" and verdict.headline.startswith("INCONCLUSIVE")
    assert verdict.inconclusive == [f"idle / first: {cell.reason}"]


def test_a_scenario_whose_load_the_board_cannot_run_is_inconclusive(store: Store) -> None:
    """A build load without a compiler on the board: every test of its scenario is
    stored as inconclusive with the load's one line; the next scenario runs."""
    from rtbench import EXIT_INCONCLUSIVE

    def script(args: list[str]) -> Script:
        if args[0] == "load":
            return Script([], then="die", exit_code=3, stderr=NO_CC)
        return Script(lines(), line_interval_s=0.05)

    loads = ('loads = [{ kind = "build", rate = 1, options = { dir = "/var/tmp" } }]\n'
             '[[scenarios]]\nname = "after"')
    runner, events, _ = run(FakeTarget(script), store, suite(loads))
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.exit_code) == ("inconclusive", EXIT_INCONCLUSIVE)
    why = ("load build cannot run on this board: no C compiler (cc, gcc, clang) on PATH, "
           "and the build load needs one on the board: install one, or name it with --cc")
    detail = store.get_run(1)
    assert [(sc.name, m.name, m.status) for sc in detail.scenarios
            for m in sc.measurements] == [
        ("idle", "first", "inconclusive"), ("idle", "second", "inconclusive"),
        ("after", "first", "ok"), ("after", "second", "ok")]
    assert {m.reason for m in detail.scenarios[0].measurements} == {why}
    assert any(m.startswith(f"idle: {why}") for m in runner.messages)
    from rtbench.analysis.verdict import verdict_of

    verdict = verdict_of(detail)
    assert verdict.status == "inconclusive"
    assert verdict.inconclusive == [f"idle / first: {why}", f"idle / second: {why}"]
