"""The five published studies as built-in suites, their layouts and the footprint."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rtbench.analysis.layouts import LayoutError, build_layout, layout_names
from rtbench.reference import reference_runs
from rtbench.store import Store
from tests.cli_inprocess import run_in_process
from tests.conftest import REPO, RunCli

STUDIES = ["loongson2f", "s3c24a0", "arm-preemptrt", "celleb", "lrtai"]

# (study, a table title fragment, row labels that must appear, column labels)
LAYOUT_SHAPES = {
    "loongson2f": ("every interval pooled", ["idle", "ping", "display (x)", "find",
                                             "ping+display+find (ping+x+find)",
                                             "display+decode (x+mplayer)"],
                   ["max µs", "avg µs", "stddev µs", "published: loongson2f max µs"]),
    "s3c24a0": ("lat_ctx", ["overhead"], ["size KiB", "processes",
                                         "published: s3c24a0-uclinux µs",
                                         "published: s3c24a0-linux26 µs",
                                         "published: s3c24a0-linux24 µs"]),
    "arm-preemptrt": ("worst-case", ["worst IRQ/event latency µs", "worst UIO-style wake-up µs",
                                     "cyclic 1 ms max µs", "missed events"],
                      ["published: at91sam9263", "published: imx31"]),
    "celleb": ("IBM style", ["cyclictest", "gtod_latency", "sched_latency", "async_handler"],
               ["min µs", "avg µs", "max µs", "stddev µs", "PASS/FAIL"]),
    "lrtai": ("100 µs period", ["oneshot", "periodic (itimer)", "periodic (timerfd)"],
              ["published: lrtai worst µs", "published: linux-rtai worst µs"]),
}


def light_loongson2f(folder: Path) -> str:
    """The shipped loongson2f suite with lighter loads (2 finds instead of 50, 64 MiB
    memory buffers instead of 4 x this VM's large LLC): the same suite, scenarios and
    tests, which is what the layouts read; the loads' cost alone would take minutes
    from every other test running beside this fixture."""
    text = (REPO / "suites" / "loongson2f.toml").read_text()
    light = text.replace("instances = 50", "instances = 2")
    light = re.sub(r'(kind = "mem", rate = \d+)', r'\1, options = { buffer = "64M" }', light)
    assert light.count("instances = 2") == 3 and light.count('buffer = "64M"') == 6
    path = folder / "loongson2f.toml"
    path.write_text(light)
    return str(path)


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory, probe_path: Path) -> str:
    """Every study suite run once, simulated, at a small scale, into one database."""
    import os

    tmp = tmp_path_factory.mktemp("studies")
    url = f"sqlite:///{tmp / 'studies.db'}"
    env = dict(os.environ, RTBENCH_PROBE=str(probe_path), XDG_DATA_HOME=str(tmp))
    for study in STUDIES:
        scale = "0.002" if study == "loongson2f" else "0.02"
        suite = light_loongson2f(tmp) if study == "loongson2f" else study
        done = run_in_process(["run", suite, "--scale", scale, "--simulate", "5", "--db", url,
                               "--no-report"], env, REPO, timeout=300)
        assert done.returncode in (0, 1), f"{study}: {done.stderr[-2000:]}"
    return url


def test_every_study_has_a_suite_and_a_layout(run_cli: RunCli) -> None:
    assert layout_names() == STUDIES
    for study in STUDIES:
        done = run_cli("suites", study)
        assert done.returncode == 0, done.stderr


def test_layouts_have_the_studies_rows_and_columns(study_db: str) -> None:
    with Store.open(study_db) as store:
        runs = {r.suite: store.get_run(r.id) for r in store.list_runs()}
    for study, (title, rows, columns) in LAYOUT_SHAPES.items():
        layout = build_layout(study, [runs[study]], reference_runs())
        table = layout.tables[0]
        assert title in table.title
        labels = " | ".join(str(r[0]) + " " + str(r[1]) for r in table.rows)
        for row in rows:
            assert row in labels, (study, row)
        for column in columns:
            assert any(column in c for c in table.columns), (study, column)
        assert any("published, not measured here" in s for s in layout.sources)
        # our column holds measured numbers
        assert any(isinstance(c, float) for r in table.rows for c in r[1:]), study


def test_two_runs_fill_two_column_groups(study_db: str) -> None:
    with Store.open(study_db) as store:
        run = next(store.get_run(r.id) for r in store.list_runs() if r.suite == "celleb")
    layout = build_layout("celleb", [run, run], reference_runs())
    systems = {r[1] for r in layout.tables[0].rows}
    assert sum(1 for s in systems if str(s).startswith(f"run {run.id} ")) == 2  # idle, build
    assert any(str(s).startswith("published: celleb-rt") for s in systems)
    gtod = layout.tables[1]
    assert gtod.columns[0] == "gap µs" and len(gtod.rows) == 21


def test_report_layout_prints_the_loongson_table(study_db: str, run_cli: RunCli,
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # the run's per-measurement histograms (some 0.3 CPU-s each, about 10 in all) are
    # not this test's subject (tests/host/test_report.py draws them): the page is
    # written without them, as a part of a huge run is (render_html's figures=False)
    monkeypatch.setattr("rtbench.report.html.histogram_svgs",
                        lambda items: [None] * len(items))
    out = tmp_path / "l.html"
    done = run_cli("report", "1", "--layout", "loongson2f", "--db", study_db, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "published: loongson2f" in done.stdout and "display+decode" in done.stdout
    text = out.read_text()
    assert 'id="layout-loongson2f"' in text and "published, not measured here" in text


def test_a_layout_of_a_run_without_its_tests_is_refused(study_db: str, run_cli: RunCli,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "x.html"
    done = run_cli("report", "2", "--layout", "loongson2f", "--db", study_db, "-o", str(out))
    assert done.returncode == 2
    line = done.stderr.strip()
    assert "none of its tests" in line and "cyclic" in line and "\n" not in line
    assert not out.exists()


def test_a_layout_of_another_suites_run_is_refused(study_db: str, run_cli: RunCli,
                                                   tmp_path: Path) -> None:
    # issue 24: a run of another suite with a cyclic cell exited 0 and filled one row
    out = tmp_path / "x.html"
    with Store.open(study_db) as store:
        celleb = next(r.id for r in store.list_runs() if r.suite == "celleb")
    done = run_cli("report", str(celleb), "--layout", "loongson2f", "--db", study_db,
                   "-o", str(out))
    assert done.returncode == 2 and not out.exists()
    line = done.stderr.strip()
    assert "suite 'celleb'" in line and "rtbench run loongson2f" in line and "\n" not in line
    with Store.open(study_db) as store, pytest.raises(LayoutError, match="no such layout"):
        build_layout("nope", [store.get_run(1)], reference_runs())


def test_footprint_is_stored_with_every_measurement(study_db: str, probe_path: Path,
                                                    run_cli: RunCli) -> None:
    with Store.open(study_db) as store:
        run = store.get_run(5)  # lrtai
    size = probe_path.stat().st_size
    for sc in run.scenarios:
        for m in sc.measurements:
            footprint = m.data["footprint"]
            assert footprint["binary_bytes"] == size
            assert footprint["peak_rss_kib"] > 0
        for load in (sc.intensity or {}).get("loads", []):
            if load.get("kind"):
                assert load["peak_rss_kib"] > 0
    shown = run_cli("show", "5", "--db", study_db, "--json")
    assert shown.returncode == 0
    assert "binary_bytes" in json.dumps(json.loads(shown.stdout))
