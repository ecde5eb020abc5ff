"""How a suite run ends (docs/commands.md "Verdicts of a run"): a stored run never exits
2, whatever stopped it; a cell without the evidence to decide it is inconclusive, never
a pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from explain_helpers import exp_windows, synthetic_measurement, synthetic_run
from fake_target import FakeTarget, Script
from synth_probe import synth_lines

from rtbench import EXIT_ENV, EXIT_FAIL, EXIT_INCONCLUSIVE
from rtbench.analysis.fleet import fleet_exit_code
from rtbench.analysis.scenario_check import (
    idle_busy,
    idle_unchecked,
    measuring_cpus,
    scenario_flags,
    start_cpus,
)
from rtbench.analysis.verdict import (
    INCONCLUSIVE,
    MIN_DECIDING_SAMPLES,
    cell_state,
    judged_status,
    run_verdict,
    verdict_of,
)
from rtbench.run.events import Event, RunFinished
from rtbench.run.outcome import RunError, stored_run_error
from rtbench.run.runner import Runner
from rtbench.store import Store
from rtbench.suites.model import SuiteError
from rtbench.suites.parse import parse_suite
from rtbench.targets.base import TargetUsageError
from tests.conftest import RunCli

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
[[tests]]
name = "first"
test = "cyclic"
[[tests]]
name = "second"
test = "cyclic"
"""


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    """An empty database."""
    return Store.open(f"sqlite:///{tmp_path / 'r.db'}")


def _run(target: FakeTarget, store: Store) -> list[Event]:
    """Run the two-test suite on target; the events it emitted."""
    events: list[Event] = []
    Runner(target, on_event=events.append).run(parse_suite(SUITE, "fake.toml"), store,
                                               ["rtbench", "run", "fake.toml"])
    return events


def test_a_test_rtprobe_refuses_on_the_board_is_an_environment_error(store: Store) -> None:
    # the suite's values passed before the run; rtprobe's exit 2 now is the board's
    refusal = "rtprobe: --threads: 2 measuring threads but the machine has 1 CPU"

    lines, _ = synth_lines(series=1, windows=2)
    calls: list[int] = []

    def probe(args: list[str]) -> Script:
        calls.append(1)
        if len(calls) == 1:
            return Script(lines)
        return Script([], then="die", exit_code=2, stderr=refusal)

    events = _run(FakeTarget(probe), store)
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.exit_code) == ("error", EXIT_ENV)
    second = store.get_run(1).scenarios[0].measurements[1]
    assert second.status == "error"
    assert second.reason == ("rtprobe refused it on target fake: --threads: 2 measuring "
                             "threads but the machine has 1 CPU")


def test_a_usage_error_raised_mid_run_ends_the_stored_run_with_exit_3(store: Store) -> None:
    lines, _ = synth_lines(series=1, windows=2)
    calls: list[int] = []

    def probe(args: list[str]) -> Script:
        calls.append(1)
        if len(calls) == 2:
            raise TargetUsageError("serial:///dev/x: the line went to another board")
        return Script(lines)

    with pytest.raises(RunError) as raised:
        _run(FakeTarget(probe), store)
    assert raised.value.code == EXIT_ENV
    assert str(raised.value) == ("serial:///dev/x: the line went to another board; run 1 "
                                 "is stored with status error")
    assert store.get_run(1).status == "error"


@pytest.mark.parametrize("exc", [
    SuiteError("s.toml", "tests[0].params.interval", "refused"),
    TargetUsageError("serial:///dev/x: bad baud"),
    RunError("scenario 'x' has a host-side load", 2),
    FileNotFoundError(2, "No such file or directory", "/x/y"),
])
def test_an_error_after_the_run_was_stored_exits_3(exc: Exception) -> None:
    converted = stored_run_error(exc, 7)
    assert converted is not None and converted.code == EXIT_ENV
    assert str(converted).endswith("; run 7 is stored with status error")


def test_other_errors_keep_their_own_code() -> None:
    assert stored_run_error(RunError("no rt", EXIT_ENV), 7) is None
    assert stored_run_error(KeyboardInterrupt(), 7) is None


# a cyclic test shorter than its interval after a warm-up: rtprobe ends ok without one
# sample
NO_SAMPLES = """
[suite]
name = "empty"
[defaults]
duration = "200us"
warmup = "100us"
settle = "0s"
thresholds = ["1ms"]
[[scenarios]]
name = "idle"
[[tests]]
name = "cyclic-1ms"
test = "cyclic"
params = { interval = "1ms" }
"""


@pytest.mark.parametrize(("args", "expected"), [
    (("ok", 0, True, True), "inconclusive"),
    (("ok", 0, True, False), "inconclusive"),  # nothing measured, threshold or not
    (("ok", 4, True, True), "inconclusive"),  # too few for a threshold to pass
    (("ok", 4, True, False), "ok"),  # measured, nothing to pass
    (("ok", MIN_DECIDING_SAMPLES, True, True), "ok"),
    (("ok", 0, False, True), "ok"),  # a test of figures (ipc bandwidth, ctx)
    (("fail", 1, True, True), "fail"),  # one sample over the threshold fails
    (("error", 0, True, True), "error"),
])
def test_a_cell_without_evidence_is_inconclusive(args: tuple, expected: str) -> None:
    status, why = judged_status(*args)
    assert status == expected
    assert (why is not None) == (expected != args[0])


def test_inconclusive_is_never_a_pass_and_exits_5() -> None:
    assert run_verdict(["ok", INCONCLUSIVE]) == (INCONCLUSIVE, EXIT_INCONCLUSIVE)
    assert run_verdict(["fail", INCONCLUSIVE]) == ("fail", EXIT_FAIL)
    assert run_verdict([INCONCLUSIVE], not_as_defined=True) == (INCONCLUSIVE,
                                                                 EXIT_INCONCLUSIVE)
    assert run_verdict(["error", INCONCLUSIVE]) == ("error", EXIT_ENV)
    assert fleet_exit_code([0, 5]) == 5 and fleet_exit_code([5, 6]) == 6
    assert fleet_exit_code([5, 1]) == 1


def test_a_stored_ok_cell_without_samples_is_read_as_inconclusive() -> None:
    # a run stored before rtbench judged the evidence: its verdict is no pass
    m = synthetic_measurement(exp_windows(1, windows=2))
    m.thresholds_ns = [50_000_000]
    for series in m.series:
        series.count = 0
    run = synthetic_run([m])
    assert cell_state(m) == (INCONCLUSIVE, "no samples: nothing was measured, so "
                                           "nothing can pass")
    verdict = verdict_of(run)
    assert verdict.status == INCONCLUSIVE and "PASS" not in verdict.headline
    assert verdict.headline.startswith("INCONCLUSIVE: 1 of 1 measurement had too few "
                                       "samples to decide (why below); worst ")
    assert verdict.inconclusive == ["idle / cyclic-1ms: no samples: nothing was "
                                    "measured, so nothing can pass"]
    assert "inconclusive idle / cyclic-1ms: no samples: nothing was measured, so nothing " \
        "can pass" in verdict.notes
    run.status = m.status = "fail"
    assert "INCONCLUSIVE" not in verdict_of(run).headline  # a fail is evidence


def test_the_others_are_said_after_the_cells_the_board_could_not_make() -> None:
    # a cell rtprobe refused on the board (stored inconclusive, no series) beside a pass
    done = synthetic_measurement(exp_windows(1, windows=2))
    done.thresholds_ns = [50_000_000]
    unmade = synthetic_measurement(exp_windows(2, windows=2), name="pi")
    unmade.status, unmade.series, unmade.windows = INCONCLUSIVE, [], []
    unmade.reason = "needs 2 CPUs, the board has 1"
    run = synthetic_run([done, unmade])
    run.status = INCONCLUSIVE
    verdict = verdict_of(run)
    assert verdict.status == INCONCLUSIVE
    assert verdict.headline.startswith(
        "INCONCLUSIVE: 1 of 2 measurements could not be made on this board (why below); "
        "the others: PASS: 1 measurement within every threshold; worst ")
    assert "inconclusive idle / pi: needs 2 CPUs, the board has 1" in verdict.notes
    done.series[0].count = 3  # and one with too few samples: both said
    run.status = "ok"
    assert verdict_of(run).headline.startswith(
        "INCONCLUSIVE: 2 of 2 measurements could not be made on this board or had too "
        "few samples to decide (why below)")


def test_a_run_without_samples_is_stored_inconclusive_and_exits_5(
        run_cli: RunCli, tmp_path: Path) -> None:
    suite = tmp_path / "empty.toml"
    suite.write_text(NO_SAMPLES)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    report = tmp_path / "r.html"
    done = run_cli("run", str(suite), "--db", db, "--simulate", "1:const,lat=5us",
                   "--report", str(report), timeout=120)
    out = " ".join(done.stdout.split())
    assert done.returncode == EXIT_INCONCLUSIVE, out + done.stderr
    assert "verdict: INCONCLUSIVE: 1 of 1 measurement had too few samples to decide" in out
    assert "PASS" not in out and "run 1: inconclusive" in out
    assert "idle / cyclic-1ms: no samples: nothing was measured" in out
    with Store.open(db) as store:
        run = store.get_run(1)
    m = run.scenarios[0].measurements[0]
    assert (run.status, m.status) == (INCONCLUSIVE, INCONCLUSIVE)
    assert m.reason == "no samples: nothing was measured, so nothing can pass"
    page = report.read_text()
    assert "Verdict: INCONCLUSIVE" in page and ">inconclusive</td>" in page
    listed = " ".join(run_cli("ls", "--db", db).stdout.split())
    assert "run 1: inconclusive" in listed or " inconclusive " in listed, listed
    shown = " ".join(run_cli("show", "1", "--db", db).stdout.split())
    assert "INCONCLUSIVE" in shown and "(no samples)" in shown, shown


def test_a_one_cpu_idle_scenario_claims_no_other_cpu() -> None:
    # a one-CPU TCG board: "CPUs that did not measure were 87 % busy" named CPUs that
    # do not exist; the figure is the measuring CPU's own, the tests' work included
    one_cpu = {"cpu_busy_pct_per_cpu": {"cpu0": 87.0}, "measuring_cpus": [0]}
    assert idle_busy(one_cpu, None) is None
    assert scenario_flags([], one_cpu, None) == []
    note = idle_unchecked([], one_cpu, None)
    assert note == ("whether the idle scenario was idle cannot be told from CPU time: "
                    "every CPU measured (CPU 0), and it was 87 % busy over the scenario, "
                    "the tests' own work included")
    assert "did not measure" not in note
    # four CPUs, one measuring: the other three are what the sentence is about
    four = {"cpu_busy_pct_per_cpu": {f"cpu{n}": 90.0 for n in range(4)},
            "measuring_cpus": [0]}
    assert idle_busy(four, None) == (
        "no load was defined, but the CPUs that did not measure (CPUs 1, 2, 3) were "
        "90 % busy (above 20 %): something else ran")
    assert idle_unchecked([], four, None) is None
    # which CPUs measured is not known (a test on any CPU): no claim, a note
    unknown = {"cpu_busy_pct_per_cpu": {"cpu0": 90.0, "cpu1": 50.0}, "measuring_cpus": None}
    assert idle_busy(unknown, None) is None
    assert "the tests may have used every CPU (CPUs 0, 1)" in str(
        idle_unchecked([], unknown, None))
    assert idle_unchecked([{"kind": "cpu"}], one_cpu, None) is None  # a loaded scenario


def test_the_measuring_cpus_come_from_the_start_records() -> None:
    cyclic = {"test": "cyclic", "series": [{"cpu": 0}, {"cpu": 1}],
              "common": {"cpus": "0-3"}}
    ctx = {"test": "ctx", "series": [], "common": {"cpus": "2"}}
    assert start_cpus(cyclic) == {0, 1} and start_cpus(ctx) == {2}
    # ipc measures on CPU 0, its sender may run on any CPU it was given
    ipc = {"test": "ipc", "series": [{"cpu": 0}], "common": {"cpus": "0-1"}}
    assert start_cpus(ipc) == {0, 1}
    assert start_cpus({"series": [], "common": {"cpus": None}}) is None
    assert measuring_cpus([cyclic, ctx]) == [0, 1, 2]
    assert measuring_cpus([cyclic, {"series": []}]) is None and measuring_cpus([]) is None
    # a run stored before the runner kept them: read from its measurements
    m = synthetic_measurement(exp_windows(1, windows=2))
    m.start = {"test": "cyclic", "series": [{"cpu": 0}]}
    run = synthetic_run([m])
    run.scenarios[0].intensity = {"cpu_busy_pct_per_cpu": {"cpu0": 87.0}}
    verdict = verdict_of(run)
    assert verdict.not_as_defined == []
    assert any(n.startswith("idle: whether the idle scenario was idle cannot be told")
               for n in verdict.notes)
