"""The catalogue suite: every rtprobe test run by rtbench, stored and reported.

The real run needs root (SCHED_FIFO, mlockall) and takes about 20 s at --scale 0.3; it
asserts what was stored and shown, never latency values.  The simulated run checks the
parameter pass-through of the tests without a latency series without root.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from rtbench.bundle import MeasurementDetail, RunDetail
from rtbench.store import Store
from tests.conftest import RunCli
from tests.parts import needs_part

SCALE = "0.3"
# Every test kind the catalogue must contain, and how its measurement holds its results.
SERIES_TESTS = {"cyclic", "periodic", "clock", "wakeup", "noise", "event", "pi"}
DATA_TESTS = {"ctx", "hackbench"}


def db_url(tmp_path: Path) -> str:
    """A fresh SQLite database under tmp_path."""
    return f"sqlite:///{tmp_path / 'results.db'}"


def only_run(url: str) -> RunDetail:
    """The single run stored in the database at url."""
    with Store.open(url) as store:
        (summary,) = store.list_runs()
        return store.get_run(summary.id)


def check_results(m: MeasurementDetail) -> None:
    """A measurement holds its results: samples in every series, or its data cells."""
    assert m.status in ("ok", "fail"), (m.name, m.status, m.reason)
    bandwidth = m.test == "ipc" and "--bandwidth" in m.command
    if m.test in DATA_TESTS or bandwidth:
        assert not m.series, m.name
        if m.test == "ctx":
            cells = m.data["cells"]
            assert {(c["size_kib"], c["processes"]) for c in cells} == {
                (0, 2), (0, 4), (16, 2), (16, 4)}
            assert [o["size_kib"] for o in m.data["overheads"]] == [0, 16]
        elif m.test == "hackbench":
            assert m.data["elapsed_ns"] > 0 and m.data["messages"] > 0
        else:
            (entry,) = m.data["bandwidth"]
            assert entry["mb_per_s"] > 0 and len(entry["repetitions"]) == 3
    else:
        assert m.series, m.name
        assert all(s.count > 0 for s in m.series), m.name
        assert m.windows, m.name


@needs_part("root", os.geteuid() != 0, "real RT tests need root")
def test_catalogue_runs_every_test_and_stores_it(run_cli: RunCli, tmp_path: Path) -> None:
    url = db_url(tmp_path)
    report = tmp_path / "catalogue.html"
    done = run_cli("run", "catalogue", "--scale", SCALE, "--db", url, "--report", str(report),
                   timeout=120)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    run = only_run(url)
    assert run.suite == "catalogue" and run.status in ("ok", "fail")
    assert [s.name for s in run.scenarios] == ["idle", "sched-net"]
    for scenario in run.scenarios:
        kinds = {m.test for m in scenario.measurements}
        assert kinds == SERIES_TESTS | DATA_TESTS | {"ipc"}
        assert len(scenario.measurements) == 11
        for m in scenario.measurements:
            check_results(m)
        intensity = scenario.intensity
        assert intensity is not None and intensity["samples"] >= 2
        assert intensity["placement"]["rule"] in ("shared", "split")
    loads = run.scenarios[1].intensity["loads"]  # type: ignore[index]
    assert [(ld["kind"], ld["target"]) for ld in loads] == [("sched", 10000), ("net", 5000)]
    assert all(ld["achieved"] > 0 and ld["unit"] for ld in loads)
    by_name = {m.name: m for m in run.scenarios[0].measurements}
    assert "--source" in by_name["event-self"].command
    assert by_name["wakeup"].command[-2:] == ["--mechanism", "condvar,sem"]
    assert {s.label for s in by_name["wakeup"].series} == {"condvar", "sem"}
    assert "--duration" not in by_name["ctx"].command
    assert by_name["ctx"].command[-8:-6] == ["--processes", "2,4"]

    # The summary printed by run shows the intensity and the data-only tests' figures.
    words = " ".join(done.stdout.split())
    assert re.search(r"sched [\d.]+k?/10\.0k messages/s · net [\d.]+k?/5\.0k packets/s",
                     words), words[-3000:]
    assert re.search(r"(all CPUs [\d,-]+ shared|loads [\d,-]+ \| tests [\d,-]+ \(split\))",
                     words)
    assert "ctx: per switch" in words and "pipe bandwidth" in words
    html = report.read_text()
    for needle in ("Scenarios: placement and achieved load", "2 procs", "16</td>",
                   "pipe bandwidth", "hackbench: time", "<svg"):
        assert needle in html, needle
    show = run_cli("show", str(run.id), "--db", url)
    assert show.returncode == 0
    for needle in ("Scenarios: placement", "size KiB", "4 procs", "result data",
                   "read_cost_ns", "stolen"):
        assert needle in show.stdout, needle


def test_simulated_params_pass_through(run_cli: RunCli, tmp_path: Path) -> None:
    suite = tmp_path / "data-tests.toml"
    suite.write_text("""
[suite]
name = "data-tests"
[defaults]
duration = "1s"
warmup = "0s"
thresholds = ["1ms"]
[[tests]]
name = "ctx"
test = "ctx"
params = { processes = [2, 4], sizes = [0, 16], repetitions = 3 }
[[tests]]
name = "ipc-bandwidth"
test = "ipc"
params = { bandwidth = true, total = "1M", repetitions = 3 }
[[tests]]
name = "pi-off"
test = "pi"
params = { no_pi = true, iterations = 10 }
[[tests]]
name = "event"
test = "event"
params = { source = "self", rate = 500 }
""")
    url = db_url(tmp_path)
    done = run_cli("run", str(suite), "--db", url, "--no-report",
                   "--simulate", "5:uniform,min=20us,max=40us")
    assert done.returncode == 0, done.stdout + done.stderr
    run = only_run(url)
    assert run.simulated
    ctx, bandwidth, pi, event = run.scenarios[0].measurements
    for m in (ctx, bandwidth):
        check_results(m)
    assert ctx.command[1:] == ["ctx", "--processes", "2,4", "--sizes", "0,16",
                               "--repetitions", "3", "--simulate", "5:uniform,min=20us,max=40us"]
    assert ctx.thresholds_ns == [] and ctx.measured_ns == 0
    assert bandwidth.command[1:5] == ["ipc", "--bandwidth", "--total", "1M"]
    assert "--no-pi" in pi.command and pi.data["pi"] is False
    assert pi.series[0].count == 10
    assert event.series[0].count == 500 and event.data["missed"] == 0
    show = run_cli("show", str(run.id), "--db", url)
    assert show.returncode == 0 and "2 procs" in show.stdout and "pipe bandwidth" in show.stdout


def test_given_placement_is_used_and_recorded(run_cli: RunCli, tmp_path: Path) -> None:
    suite = tmp_path / "placed.toml"
    suite.write_text("""
[suite]
name = "placed"
[defaults]
duration = "1s"
warmup = "0s"
settle = "0.5s"
[[scenarios]]
name = "hog"
load_cpus = "0"
measure_cpus = "1"
loads = [{ command = "while :; do :; done", instances = 1 }]
[[tests]]
test = "cyclic"
""")
    url = db_url(tmp_path)
    done = run_cli("run", str(suite), "--db", url, "--no-report", "--simulate", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    (scenario,) = only_run(url).scenarios
    assert (scenario.load_cpus, scenario.measure_cpus) == ("0", "1")
    assert scenario.intensity is not None
    assert scenario.intensity["placement"] == {"rule": "given", "cpus": "0-1",
                                               "load_cpus": "0", "measure_cpus": "1"}
    assert scenario.intensity["loads"][0]["cpus"] == "0"
    (m,) = scenario.measurements
    assert m.command[m.command.index("--cpus") + 1] == "1"
    assert "loads 0 | tests 1 (given)" in " ".join(done.stdout.split())

    wrong = tmp_path / "wrong.toml"
    wrong.write_text(suite.read_text().replace('measure_cpus = "1"', 'measure_cpus = "64"'))
    refused = run_cli("run", str(wrong), "--db", url, "--no-report", "--simulate", "1")
    assert refused.returncode == 2
    assert "scenarios[0].measure_cpus: CPU 64 is not available" in refused.stderr
