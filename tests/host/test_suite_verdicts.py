"""How a suite run ends (docs/commands.md "Verdicts of a run"): a stored run never exits
2, whatever stopped it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_target import FakeTarget, Script
from synth_probe import synth_lines

from rtbench import EXIT_ENV
from rtbench.run.events import Event, RunFinished
from rtbench.run.runner import RunError, Runner, stored_run_error
from rtbench.store import Store
from rtbench.suites.model import SuiteError
from rtbench.suites.parse import parse_suite
from rtbench.targets.base import TargetUsageError

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
