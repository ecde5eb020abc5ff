"""One selector grammar on every command that takes runs (docs/compare.md)."""

from __future__ import annotations

import json

import pytest
from explain_helpers import cli, exp_windows, synthetic_measurement, synthetic_run

from rtbench.store import Store


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Three synthetic runs (kernel 6.1.ID): 1 and 2 on host box, 3 on host other."""
    url = f"sqlite:///{tmp_path_factory.mktemp('sel') / 'r.db'}"
    with Store.open(url) as store:
        for seed, host in ((1, "box"), (2, "box"), (3, "other")):
            store.add_bundle(synthetic_run([synthetic_measurement(exp_windows(seed))],
                                           hostname=host, kernel=f"6.1.{seed}"))
    return url


@pytest.mark.parametrize("name,run_id", [("latest", 3), ("latest~2", 1), ("host=other", 3),
                                         ("2", 2)])
def test_export_takes_every_run_name(db: str, name: str, run_id: int) -> None:
    # issue 24: export refused `latest` and selectors
    done = cli("export", name, "--format", "json", "--db", db)
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["kernel"] == f"6.1.{run_id}"


def test_export_refuses_a_selector_of_several_runs(db: str) -> None:
    done = cli("export", "host=box", "--format", "json", "--db", db)
    assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1, done.output


def test_compare_adds_every_run_a_selector_matches(db: str) -> None:
    # issue 24: `compare suite=X` refused a selector that matched several runs
    done = cli("compare", "host=box", "--json", "--db", db)
    assert done.exit_code == 0, done.output
    assert [r["label"] for r in json.loads(done.output)["runs"]] == ["run 1", "run 2"]
    one = cli("compare", "host=other", "--db", db)
    assert one.exit_code == 2 and "names one run" in one.output


@pytest.mark.parametrize("args", [("show", "host=other"), ("tag", "latest~1", "k=v"),
                                  ("advise", "host=other")])
def test_other_commands_take_selectors(db: str, args: tuple[str, ...]) -> None:
    done = cli(*args, "--db", db)
    assert done.exit_code == 0, done.output
