"""compare: bootstrap intervals that cover the truth, verdicts, environment differences,
the regression gate, and its bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from explain_helpers import (
    cli,
    exp_windows,
    simulated_runs,
    synthetic_measurement,
    synthetic_run,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from rtbench.analysis import bootstrap
from rtbench.analysis.compare import compare, view_of_run
from rtbench.store import Store


def matrix_of(windows: list[np.ndarray]) -> bootstrap.WindowMatrix:
    """A bootstrap matrix of windows of raw latencies."""
    from rtbench.rtprobe.wire import loglin7 as hist

    return bootstrap.window_matrix(
        ((k, *hist.from_values(w)) for k, w in enumerate(windows)),
        min_ns=int(min(w.min() for w in windows)), max_ns=int(max(w.max() for w in windows)))


def test_quantile_interval_covers_the_true_quantile_90_to_99_percent() -> None:
    # exponential(5 us) + 2 us: the true p99 is 2 us + 5 us * ln(100)
    truth = 2000 + 5000 * np.log(100)
    seeds = range(200)
    covered = 0
    for seed in seeds:
        iv = bootstrap.quantile_interval(matrix_of(exp_windows(seed, windows=30, per_window=500)),
                                         0.99, reps=400, seed=seed)
        assert iv.lo is not None and iv.hi is not None
        # the histogram reports bucket lower bounds: allow its stated error (1/128)
        covered += iv.lo <= truth <= iv.hi * (1 + 1 / 128)
    assert 0.90 <= covered / len(seeds) <= 0.99, covered


def test_difference_interval_covers_the_true_shift_90_to_99_percent() -> None:
    shift = 1500.0
    covered = 0
    seeds = range(150)
    for seed in seeds:
        a = matrix_of(exp_windows(seed, windows=30, per_window=100))
        b = matrix_of(exp_windows(10_000 + seed, windows=30, per_window=100, shift_ns=shift))
        iv = bootstrap.difference_interval(a, b, 0.5, reps=400, seed=seed)
        assert iv.lo is not None and iv.hi is not None
        # bucket widths here (32 ns) are small against the interval (~250 ns)
        covered += iv.lo <= shift <= iv.hi
    assert 0.90 <= covered / len(seeds) <= 0.99, covered


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([0.5, 0.99, 0.999]))
def test_identical_inputs_give_no_verdict(seed: int, q: float) -> None:
    m = matrix_of(exp_windows(seed % 1000, windows=12, per_window=1000))
    iv = bootstrap.difference_interval(m, m, q, reps=200, seed=seed)
    assert iv.point == 0
    assert iv.lo is not None and iv.hi is not None and iv.lo <= 0 <= iv.hi
    assert bootstrap.verdict(iv) == "no detectable difference"


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 20))
def test_interval_brackets_the_point_for_any_windows(seed: int, windows: int) -> None:
    m = matrix_of(exp_windows(seed % 997, windows=windows, per_window=200))
    iv = bootstrap.quantile_interval(m, 0.5, reps=100, seed=seed)
    if windows < bootstrap.MIN_WINDOWS:
        assert iv.lo is None and "windows" in iv.note
    else:
        assert iv.lo is not None and iv.hi is not None and iv.lo <= iv.hi


def test_too_few_samples_give_no_figure() -> None:
    m = matrix_of(exp_windows(1, windows=12, per_window=50))  # 600 samples < 10 000
    assert bootstrap.point_quantile(m, 0.999) is None
    assert bootstrap.quantile_interval(m, 0.999).note == "not enough samples"


def test_environment_differences_are_listed_and_vary_marks_them() -> None:
    a = synthetic_run([synthetic_measurement(exp_windows(1))], kernel="6.1.0",
                      sysinfo={"governors": {"0": "performance"}})
    b = synthetic_run([synthetic_measurement(exp_windows(2), probe_version="0.2.0")],
                      kernel="6.1.0-rt5",
                      sysinfo={"governors": {"0": "powersave"}, "preempt_rt": True,
                               "cmdline": "quiet nohz_full=2-3"})
    a.id, b.id = 1, 2
    comp = compare([view_of_run(a), view_of_run(b)], vary=("kernel",))
    facts = {d.fact: d for d in comp.env}
    assert {"kernel", "governor", "probe version", "nohz_full", "preemption model"} <= set(facts)
    assert facts["kernel"].intended and not facts["governor"].intended
    assert facts["governor"].values == ["performance", "powersave"]
    assert not comp.like_for_like
    same = compare([view_of_run(a), view_of_run(a)])
    assert same.env == [] and same.like_for_like


def test_load_intensity_off_by_more_than_20_percent_is_listed() -> None:
    a = synthetic_run([synthetic_measurement(exp_windows(1))], scenario="cpu")
    b = synthetic_run([synthetic_measurement(exp_windows(2))], scenario="cpu")
    for run, achieved in ((a, 1000.0), (b, 700.0)):
        sc = run.scenarios[0]
        sc.loads = [{"kind": "sched", "rate": 1000}]
        sc.intensity = {"cpu_busy_pct": 50.0, "loads": [{"kind": "sched", "target": 1000,
                                                         "achieved": achieved,
                                                         "unit": "messages/s"}]}
    comp = compare([view_of_run(a), view_of_run(b)])
    assert [d.fact for d in comp.env] == ["cpu: load sched achieved messages/s"]


@pytest.fixture(scope="module")
def sim_db(tmp_path_factory: pytest.TempPathFactory, probe_path: Path) -> str:
    """Runs 1-2: the default distribution, two seeds; 3: shifted by 1 us; 4-5: const 5 and
    10 us; 6: the default distribution again (a copy of 1's seed)."""
    return simulated_runs(tmp_path_factory.mktemp("cmp"), probe_path, [
        "1", "2", "3:expo,min=3us,mean=3us", "4:const,lat=5us", "5:const,lat=10us", "1"])


def verdicts(data: dict, run: int = 1) -> dict[str, str]:  # type: ignore[type-arg]
    """metric -> verdict of the first cell of the JSON comparison."""
    return {d["metric"]: d["verdict"] for d in data["cells"][0]["differences"][run]}


def test_same_distribution_no_difference_shift_detected(sim_db: str) -> None:
    same = cli("compare", "1", "2", "--json", "--db", sim_db)
    assert same.exit_code == 0, same.output
    data = json.loads(same.output)
    assert data["runs"][0]["label"] == "run 1" and data["like_for_like"]
    got = verdicts(data)
    assert got["p50"] == got["p99"] == got["p99.9"] == "no detectable difference"
    assert got["max"] == "no interval"
    shifted = json.loads(cli("compare", "1", "3", "--json", "--db", sim_db).output)
    assert verdicts(shifted)["p50"] == verdicts(shifted)["p99"] == "worse"
    back = json.loads(cli("compare", "3", "1", "--json", "--db", sim_db).output)
    assert verdicts(back)["p50"] == "better"


def test_terminal_table_and_html(sim_db: str, tmp_path: Path) -> None:
    out = tmp_path / "cmp.html"
    done = cli("compare", "latest~5", "latest~3", "-o", str(out), "--db", sim_db)
    assert done.exit_code == 0, done.output
    for needle in ("run 3 against run 1", "95 % interval", "worse", "max has no interval",
                   "overruns", "exceedances"):
        assert needle in done.output
    html = out.read_text()
    assert "run 3 against run 1" in html and "<svg" in html and "Cycle-time advisor" in html
    assert "http://" not in html.replace("http://www.w3.org", "")


def test_max_regression_gate(sim_db: str) -> None:
    worse = cli("compare", "--baseline", "4", "5", "--max-regression", "10%", "--db", sim_db)
    assert worse.exit_code == 1, worse.output
    assert "REGRESSION run 5" in worse.output
    fine = cli("compare", "--baseline", "5", "4", "--max-regression", "10%", "--db", sim_db)
    assert fine.exit_code == 0, fine.output
    same = cli("compare", "--baseline", "1", "6", "--max-regression", "1%", "--metric", "p99.9",
               "--json", "--db", sim_db)
    # the same distribution cannot be told from one 1 % worse: inconclusive (exit 5)
    assert same.exit_code == 5 and json.loads(same.output)["gate"]["regressions"] == []
    loose = cli("compare", "--baseline", "1", "6", "--max-regression", "50%", "--metric",
                "p50,p99", "--db", sim_db)
    assert loose.exit_code == 0 and "gate: no regression" in loose.output, loose.output
    small = cli("compare", "--baseline", "1", "3", "--max-regression", "200%", "--db", sim_db)
    assert small.exit_code == 0, small.output


def test_strict_refuses_mismatched_environments(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with Store.open(url) as store:
        store.add_bundle(synthetic_run([synthetic_measurement(exp_windows(1))], kernel="6.1"))
        store.add_bundle(synthetic_run([synthetic_measurement(exp_windows(2))],
                                       kernel="6.1-rt", sysinfo={"clocksource": "hpet"}))
    loose = cli("compare", "1", "2", "--db", url)
    assert loose.exit_code == 0 and "NOT LIKE FOR LIKE" in loose.output
    strict = cli("compare", "1", "2", "--strict", "--vary", "kernel", "--db", url)
    assert strict.exit_code == 2 and "clocksource" in strict.output
    assert "kernel" not in strict.output.split("differ in")[1].split(";")[0]
    ok = cli("compare", "1", "2", "--strict", "--vary", "kernel", "--vary", "clocksource",
             "--db", url)
    assert ok.exit_code == 0, ok.output


def test_compare_with_a_reference_run(sim_db: str) -> None:
    done = cli("compare", "latest", "ref:loongson2f", "--json", "--db", sim_db)
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    ref = data["runs"][1]
    assert ref["published"] and ref["note"] == "published, not measured here"
    assert ref["source"] == "reference/loongson2f_cyclictest.csv"
    cell = data["cells"][0]
    assert cell["runs"][1]["figures_ns"]["p99"] is None  # not in the paper: n/a
    assert cell["runs"][1]["figures_ns"]["max"] == 27000.0
    assert {u["cell"] for u in data["unmatched"]} >= {"ping / cyclic", "find / cyclic"}
    text = cli("compare", "latest", "ref:loongson2f", "--db", sim_db).output
    assert "PUBLISHED, NOT MEASURED HERE" in text and "n/a" in text


@pytest.mark.parametrize("args", [
    ("compare", "1"), ("compare", "1", "99"), ("compare", "1", "host=nowhere"),
    ("compare", "1", "ref:nope"), ("compare", "1", "2", "--max-regression", "ten"),
    ("compare", "ref:loongson2f", "ref:imx31"), ("compare", "1", "ref:imx31"),
    ("compare", "1", "2", "-o", "/nonexistent-dir/x.html"),
    ("compare", "1", "2", "-o", "x.txt"),
])
def test_bad_input_exits_2(sim_db: str, args: tuple[str, ...]) -> None:
    done = cli(*args, "--db", sim_db)
    assert done.exit_code == 2, done.output
    assert len(done.output.strip().splitlines()) == 1 and "Traceback" not in done.output


@given(st.lists(st.tuples(st.integers(0, 5),
                          st.lists(st.tuples(st.integers(0, 40), st.integers(1, 10**6)),
                                   max_size=8)), max_size=12))
@settings(max_examples=60, deadline=None)
def test_window_matrix_adds_each_windows_buckets(
        parts: list[tuple[int, list[tuple[int, int]]]]) -> None:
    # several threads' windows of one index, and repeated buckets, add up in one row
    windows = [(index, np.asarray([b for b, _ in pairs], dtype=np.int64),
                np.asarray([c for _, c in pairs], dtype=np.int64)) for index, pairs in parts]
    m = bootstrap.window_matrix(windows)
    rows = sorted({index for index, _ in parts})
    expected = np.zeros((len(rows), m.buckets.size))
    for index, pairs in parts:
        for bucket, count in pairs:
            expected[rows.index(index), list(m.buckets).index(bucket)] += count
    assert m.counts.shape == expected.shape and np.array_equal(m.counts, expected)
    assert list(m.buckets) == sorted({b for _, pairs in parts for b, _ in pairs})
