"""Simulated data never drives a decision silently: advise and compare say so first, and
comparing a measured run with a simulated one needs --allow-simulated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from explain_helpers import cli, exp_windows, simulated_runs, synthetic_measurement, synthetic_run

from rtbench.store import Store


@pytest.fixture(scope="module")
def sim_db(tmp_path_factory: pytest.TempPathFactory, probe_path: Path) -> str:
    """Run 1 simulated (40 s), run 2 a measured one (a synthetic bundle not marked
    simulated), run 3 simulated again."""
    url = simulated_runs(tmp_path_factory.mktemp("simdec"), probe_path, ["1"])
    real = synthetic_run([synthetic_measurement(
        exp_windows(2), params={"interval_ns": 1_000_000, "mode": "abs"})])
    real.simulated = False
    for m in real.scenarios[0].measurements:
        m.simulated = False
    with Store.open(url) as store:
        store.add_bundle(real)
    simulated_runs(Path(url.removeprefix("sqlite:///")).parent, probe_path, ["3"])
    return url


def test_advise_on_a_simulated_run_says_so_first(sim_db: str) -> None:
    # issue 24: it ended "cycle 1ms is safe by every rule that could be applied"
    done = cli("advise", "1", "--cycle", "1ms", "--db", sim_db)
    assert done.output.splitlines()[0].startswith("SIMULATED: run 1"), done.output
    tail = " ".join(done.output.split("is safe by the observed worst case")[-1].split())
    assert "SIMULATED data: this says nothing about a real machine" in tail
    assert "every rule" not in done.output


def test_compare_of_a_measured_and_a_simulated_run_is_refused(sim_db: str) -> None:
    # issue 24: only an environment line showed that one side was simulated
    done = cli("compare", "2", "1", "--db", sim_db)
    assert done.exit_code == 2, done.output
    line = done.output.strip()
    assert "\n" not in line and "--allow-simulated" in line and "run 1" in line
    allowed = cli("compare", "2", "1", "--allow-simulated", "--db", sim_db)
    assert allowed.exit_code == 0, allowed.output
    assert allowed.output.startswith("SIMULATED: run 1 are simulated")


def test_compare_of_simulated_runs_says_so_in_the_headline(sim_db: str) -> None:
    done = cli("compare", "1", "3", "--db", sim_db)
    assert done.exit_code == 0 and done.output.startswith("SIMULATED: every run is simulated")
    data = json.loads(cli("compare", "1", "3", "--json", "--db", sim_db).output)
    assert data["simulated_runs"] == ["run 1", "run 3"]
