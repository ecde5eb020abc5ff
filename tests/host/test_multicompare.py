"""Compare of any number of runs: the summary table (runs as columns), each run's step
decided by the regression gate, in text, JSON, the HTML report and the server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from explain_helpers import cli, exp_windows, synthetic_measurement, synthetic_run
from fastapi.testclient import TestClient

from rtbench.analysis.compare import compare, view_of_run
from rtbench.analysis.gate import INCONCLUSIVE, NO_REGRESSION, REGRESSION
from rtbench.analysis.multicompare import summarize
from rtbench.bundle import RunDetail
from rtbench.report import compare_html
from rtbench.server.app import create_app
from rtbench.store import Store

SPIKE_NS = 180_000


def run_of(seed: int, spike: bool = False, cells: int = 1) -> RunDetail:
    """A synthetic run of 30 windows (a 180 us sample in every second when spike: one
    sample never decides a max)."""
    windows = exp_windows(seed, 30, 1000)
    if spike:
        for w in range(0, 30, 2):
            windows[w] = windows[w].copy()
            windows[w][0] = SPIKE_NS
    ms = [synthetic_measurement(windows)]
    if cells > 1:
        ms.append(synthetic_measurement(exp_windows(seed + 100, 30, 1000), name="cyclic-250us",
                                        params={"interval_ns": 250_000}))
    return synthetic_run(ms)


def views_of(runs: list[RunDetail]) -> list:  # type: ignore[type-arg]
    """RunViews of runs, numbered 1, 2, ..."""
    for n, r in enumerate(runs, start=1):
        r.id = n
    return [view_of_run(r) for r in runs]


def test_the_jump_is_marked_on_the_run_where_it_happens() -> None:
    runs = [run_of(1), run_of(2), run_of(3, spike=True), run_of(4, spike=True)]
    summary = summarize(compare(views_of(runs), reps=200), "previous", ("max",), 0.10,
                        reps=200)
    (row,) = summary.rows
    steps = row.steps["max"]
    assert steps[0] is None  # the first run has no step
    assert steps[2] is not None and steps[2].outcome == REGRESSION
    assert steps[1] is not None and steps[1].outcome != REGRESSION
    assert steps[3] is not None and steps[3].outcome != REGRESSION  # 180 -> 180: no jump
    assert row.values["max"][2] == SPIKE_NS and len(row.values["max"]) == 4
    assert [c.run for c in summary.jumps()] == ["run 3"]


def test_against_first_marks_every_run_after_the_jump() -> None:
    runs = [run_of(1), run_of(2), run_of(3, spike=True), run_of(4, spike=True)]
    summary = summarize(compare(views_of(runs), reps=200), "first", ("max",), 0.10, reps=200)
    assert summary.reference == [None, 0, 0, 0]
    assert [c.run for c in summary.jumps()] == ["run 3", "run 4"]


def test_a_missing_cell_is_inconclusive_never_a_pass() -> None:
    runs = [run_of(1, cells=2), run_of(2), run_of(3, cells=2)]
    summary = summarize(compare(views_of(runs), reps=200), "previous", ("p50", "max"), 0.10,
                        reps=200)
    row = next(r for r in summary.rows if "250" in r.key.label())
    for metric in ("p50", "max"):
        lacking, back = row.steps[metric][1], row.steps[metric][2]
        assert lacking is not None and lacking.outcome == INCONCLUSIVE
        assert "different cells" in lacking.reason
        assert back is not None and back.outcome == INCONCLUSIVE
        assert row.values[metric][1] is None
    assert all(c.outcome != NO_REGRESSION or c.reason for c in summary.inconclusive())


@pytest.fixture(scope="module")
def nine_runs(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database of 9 runs; run 6 and later have a 180 us sample."""
    url = f"sqlite:///{tmp_path_factory.mktemp('multi') / 'r.db'}"
    with Store.open(url) as store:
        for n in range(1, 10):
            run = run_of(n, spike=n >= 6)
            run.started_at = run.started_at.replace(hour=n)
            store.add_bundle(run)
    return url


def test_cli_compares_nine_runs_in_one_summary_table(nine_runs: str) -> None:
    done = cli("compare", *map(str, range(1, 10)), "--max-regression", "10%", "--metric",
               "max", "--db", nine_runs)
    assert done.exit_code == 1, done.output  # the gate against run 1 finds the regression
    assert "summary" in done.output and "run 9" in done.output
    assert "REGRESSION run 6 idle / cyclic" in done.output
    assert "run 7 against run 1" not in done.output  # pairwise tables only with --pairs
    pairs = cli("compare", *map(str, range(1, 10)), "--pairs", "--db", nine_runs)
    assert "run 7 against run 1" in pairs.output


def test_cli_json_carries_the_summary(nine_runs: str) -> None:
    done = cli("compare", *map(str, range(1, 10)), "--max-regression", "10%", "--metric",
               "max", "--against", "first", "--json", "--db", nine_runs)
    data = json.loads(done.output)["summary"]
    assert data["against"] == "first" and len(data["runs"]) == 9
    steps = data["cells"][0]["metrics"]["max"]["steps"]
    assert steps[0] is None and [s["outcome"] == REGRESSION for s in steps[1:]] == \
        [False] * 4 + [True] * 4
    assert [j["run"] for j in data["jumps"]] == [f"run {n}" for n in range(6, 10)]


def test_html_report_has_the_summary_table(nine_runs: str, tmp_path: Path) -> None:
    with Store.open(nine_runs) as store:
        runs = [store.get_run(n) for n in range(1, 10)]
    html = compare_html.render(compare([view_of_run(r) for r in runs], reps=100))
    table = html.split('<table id="summary">')[1].split("</table>")[0]
    assert table.count("<th>run ") == 9 and table.count("jump") == 1


def test_server_compares_more_than_eight_runs(nine_runs: str) -> None:
    query = "&".join(f"run={n}" for n in range(1, 10))
    with Store.open(nine_runs) as store, TestClient(create_app(store=store)) as client:
        api = client.get(f"/api/v1/compare?{query}")
        assert api.status_code == 200
        summary = api.json()["summary"]
        assert len(summary["runs"]) == 9 and summary["against"] == "previous"
        assert [j["run"] for j in summary["jumps"] if j["metric"] == "max"] == ["run 6"]
        page = client.get(f"/compare?{query}&against=first")
        assert page.status_code == 200 and 'id="summary"' in page.text
        assert client.get(f"/api/v1/compare?{query}&against=sideways").status_code == 422
