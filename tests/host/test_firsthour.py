"""What a new user hit in the first hour (issue 15): each defect and the test that catches it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from synth_probe import synth_lines

from rtbench.analysis.verdict import throttling_gaps, verdict_of
from rtbench.bundle import MeasurementDetail, RunDetail, ScenarioDetail, SeriesDetail
from rtbench.commands._run_support import expected_text
from rtbench.interop.runjson import loads as runjson_loads
from rtbench.preflight import run_preflight
from rtbench.report.html import render_html
from rtbench.report.plot import histogram_svg
from rtbench.report.suitetext import inline_table, load_text
from rtbench.report.terminal import series_table, summary_table
from rtbench.report.verdict import verdict_lines
from rtbench.rtprobe.wire.records import ProbeOutput
from rtbench.run.checks import check_policy
from rtbench.run.events import Event, ProbeWarning
from rtbench.run.outcome import RunError
from rtbench.run.runner import Runner
from rtbench.store import Store, db_url_of
from rtbench.suites.model import Scenario
from rtbench.suites.parse import builtin_suites, load_suite
from tests.conftest import REPO, RunCli
from tests.host.suite_helpers import parse
from tests.parts import require_part

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MS = 1_000_000


# ---- helpers -------------------------------------------------------------------------

def series(max_ns: int, exceed: list[tuple[int, int]],
           worst: list[tuple[int, int]] | None = None, index: int = 0) -> SeriesDetail:
    """A latency series with the given maximum, exceedances and worst samples."""
    return SeriesDetail(index=index, label=f"cpu{index}", cpu=index, count=1000,
                        min_ns=1000, max_ns=max_ns, sum_ns=5_000_000, overruns=0, early=0,
                        exceed=exceed, worst=worst or [(0, max_ns)], warmup={},
                        hist=[(100, 1000)])


def measurement(name: str, test: str, status: str, s: list[SeriesDetail],
                params: dict[str, Any] | None = None,
                policy: str = "fifo") -> MeasurementDetail:
    """A stored measurement with the given series."""
    return MeasurementDetail(
        id=0, name=name, test=test, params=params or {}, command=["rtprobe", test],
        status=status, exit_code=1 if status == "fail" else 0, reason=None,
        thresholds_ns=[100_000, MS], simulated=False, probe_version="0.1.0",
        t0_unix_ns=None, measured_ns=10**10, elapsed_ns=None, verdicts=[], data={},
        start={"common": {"policy": policy}}, series=s)


def a_run(status: str, measurements: list[MeasurementDetail], *,
          preflight: list[dict[str, Any]] | None = None,
          sysinfo: dict[str, Any] | None = None) -> RunDetail:
    """A run of one scenario holding measurements."""
    return RunDetail(
        id=7, suite="quick", suite_source="", scale=1.0, status=status,
        started_at=datetime(2026, 1, 1, tzinfo=timezone.utc), finished_at=None,
        hostname="box", target="local", kernel="6.1", arch="x86_64",
        sysinfo=sysinfo or {}, preflight=preflight or [], tool_versions={},
        command_line=["rtbench", "run"], simulated=False,
        scenarios=[ScenarioDetail(id=0, name="idle", loads=[], load_cpus=None,
                                  measure_cpus=None, intensity=None,
                                  measurements=measurements)])


STOCK_KERNEL = {"preempt_rt": False, "preempt_model": "voluntary", "rt_runtime_us": 950000,
                "rt_period_us": 1000000, "virtualization": "kvm"}


def make(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run make in the repository."""
    return subprocess.run(["make", "--no-print-directory", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, **env})


# ---- item 3: make test in a fresh clone, prerequisites checked first --------------------

@pytest.mark.parametrize(("test_all", "extra"), [("", "test"), ("1", "dev")])
def test_make_test_sets_up_its_venv_before_pytest(tmp_path: Path, test_all: str,
                                                  extra: str) -> None:
    """A plain make test installs the test extra; with RTBENCH_TEST_ALL=1 (CI), whose
    tests need the fuzzer and Zig, the dev extra."""
    venv = tmp_path / "venv"
    done = make("-n", "test", f"VENV={venv}", RTBENCH_TEST_ALL=test_all)
    assert done.returncode == 0, done.stderr
    plan = done.stdout
    assert f"-m venv --system-site-packages {venv}" in plan
    install = plan.index("pip install")
    assert f"-e '.[{extra}]'" in plan[install:install + 200]
    assert install < plan.index(f"{venv}/bin/python -m pytest")


def test_make_test_uses_the_dev_venv_make_dev_made(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / ".dev").touch()
    done = make("-n", "test", f"VENV={venv}", RTBENCH_TEST_ALL="")
    assert done.returncode == 0, done.stderr
    assert "-e '.[test]'" not in done.stdout


def test_make_checks_for_a_compiler_before_pip(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    done = make("run", f"VENV={venv}", "CC=/nonexistent/cc")
    assert done.returncode != 0
    # make's own "make[N]: *** ... Error 1" line follows ours
    ours = [line for line in done.stderr.splitlines()
            if not re.match(r"make(\[\d+\])?: \*\*\*", line)]
    assert len(ours) == 1 and "no C compiler '/nonexistent/cc'" in ours[0]
    assert "build-essential" in ours[0]
    assert not venv.exists() and "pip" not in done.stdout


def test_make_checks_the_python_version(tmp_path: Path) -> None:
    old = tmp_path / "python3.8"
    old.write_text("#!/bin/sh\n[ \"$1\" = -c ] && case \"$2\" in *platform*) "
                   "echo 3.8.10; exit 0;; esac\nexit 1\n")
    old.chmod(0o755)
    done = make("prereqs", f"PYTHON={old}", f"VENV={tmp_path / 'v'}")
    assert done.returncode != 0
    assert "is Python 3.8.10; rtbench needs 3.10 or newer" in done.stderr


# ---- item 4: RT permission checked once; --policy other --------------------------------

@pytest.fixture()
def nobody_probe(probe_path: Path) -> Iterator[Path]:
    """An rtprobe that runs as the user nobody (no RT permission), for rtbench as root.

    The binary is copied to a directory anyone may enter (the checkout or pytest's
    temporary directory may be private to root), and removed after.
    """
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        require_part("root", "needs root and setpriv to act as an unprivileged user")
    shared = Path(tempfile.mkdtemp(prefix="rtbench-nobody-", dir="/tmp"))
    try:
        shared.chmod(0o755)
        probe = shared / "rtprobe"
        shutil.copy2(probe_path, probe)
        probe.chmod(0o755)
        wrapper = shared / "rtprobe-nobody"
        wrapper.write_text("#!/bin/sh\nexec setpriv --reuid=nobody --regid=nogroup "
                           f"--clear-groups {probe} \"$@\"\n")
        wrapper.chmod(0o755)
        if subprocess.run([str(wrapper), "--version"], capture_output=True,
                          check=False).returncode != 0:
            # not a part: where the checkout lies (a home nobody cannot enter)
            pytest.skip("the user nobody cannot run a copy of rtprobe here")
        yield wrapper
    finally:
        shutil.rmtree(shared, ignore_errors=True)


TINY = """[suite]
name = "tiny"
[defaults]
duration = "500ms"
warmup = "0s"
thresholds = ["100us", "1ms"]
[[tests]]
name = "cyclic-1ms"
test = "cyclic"
params = { interval = "1ms", priority = 90 }
"""


def test_no_rt_permission_stops_before_anything(run_cli: RunCli, tmp_path: Path,
                                                nobody_probe: Path) -> None:
    probe = nobody_probe
    url = f"sqlite:///{tmp_path / 'r.db'}"
    done = run_cli("run", "quick", "--db", url, "--probe", str(probe))
    assert done.returncode == 3, done.stdout + done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    for remedy in ("run as root", "CAP_SYS_NICE", "ulimit -r", "--policy other"):
        assert remedy in line
    assert done.stdout == ""  # no load started, no progress, no summary
    assert not (tmp_path / "r.db").exists()


def test_policy_other_runs_every_test_as_sched_other(run_cli: RunCli, tmp_path: Path,
                                                     nobody_probe: Path) -> None:
    probe = nobody_probe
    suite = tmp_path / "tiny.toml"
    suite.write_text(TINY)
    url = f"sqlite:///{tmp_path / 'r.db'}"
    done = run_cli("run", str(suite), "--db", url, "--probe", str(probe), "--policy",
                   "other", "--no-report")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "1 scenario x 1 test," in done.stdout  # not "1 tests"
    assert "not real-time" in done.stdout and "verdict:" in done.stdout
    with Store.open(url) as store:
        run = store.get_run(store.list_runs()[0].id)
    m = run.scenarios[0].measurements[0]
    assert m.start["common"]["policy"] == "other"
    assert m.command[-2:] == ["--policy", "other"] and "--priority" not in m.command
    assert "SCHED_OTHER" in render(summary_table(run))


def test_policy_other_refuses_tests_that_need_rt() -> None:
    suite = parse("[suite]\nname='x'\n[[tests]]\ntest='pi'\nparams={iterations=5}\n")
    with pytest.raises(RunError) as err:
        check_policy(suite, "other")
    assert err.value.code == 2 and "pi" in str(err.value)
    check_policy(suite, None)


def test_policy_other_args() -> None:
    suite = parse("[suite]\nname='x'\n[[tests]]\ntest='cyclic'\nparams={priority=99}\n"
                  "[[tests]]\ntest='hackbench'\nparams={loops=5}\n")
    cyclic, hackbench = suite.tests
    args = cyclic.probe_args(Scenario("idle"), None, "other")
    assert args[-2:] == ["--policy", "other"] and "--priority" not in args
    assert "--priority" in cyclic.probe_args(Scenario("idle"), None)
    assert "--policy" not in hackbench.probe_args(Scenario("idle"), None, "other")


# ---- item 5: the verdict ----------------------------------------------------------------

def test_verdict_names_worst_threshold_causes_and_remedies() -> None:
    facts = run_preflight(STOCK_KERNEL, steal=0.0)
    run = a_run("fail", [
        measurement("cyclic-1ms", "cyclic", "fail", [series(14_933_200, [(100_000, 50),
                                                                        (MS, 3)])]),
        measurement("cyclic-250us", "cyclic", "ok", [series(80_000, [(100_000, 0),
                                                                     (MS, 0)])])],
        preflight=facts, sysinfo=STOCK_KERNEL)
    verdict = verdict_of(run, ["rtprobe: warning: PM-QoS not held: open: EACCES"] * 2)
    assert verdict.headline.startswith("FAIL: 1 of 2 measurements crossed a threshold")
    assert "worst 14,933.2 µs in idle / cyclic-1ms" in verdict.headline
    assert "3 samples at or above the 1ms threshold" in verdict.headline
    assert [c.name for c in verdict.causes] == ["preempt_rt", "virtualization"]
    text = "\n".join(line for _, line in verdict_lines(verdict))
    assert "PREEMPT_RT" in text and "bare metal" in text and "what to do:" in text
    assert text.count("PM-QoS not held") == 1  # rtprobe's warning, once
    page = render_html(run)
    assert page.index("Verdict: FAIL") < page.index("<h2>Summary")


def test_verdict_of_a_passing_run_lists_no_causes() -> None:
    run = a_run("ok", [measurement("c", "cyclic", "ok", [series(50_000, [(MS, 0)])])],
                preflight=run_preflight(STOCK_KERNEL), sysinfo=STOCK_KERNEL)
    verdict = verdict_of(run)
    assert verdict.headline.startswith("PASS: 1 measurement within every threshold")
    assert verdict.causes == [] and not any("what to do" in line
                                            for _, line in verdict_lines(verdict))


def test_runner_passes_rtprobe_warnings_through_once() -> None:
    from rtbench.report.live import LiveProgress

    console = Console(record=True, width=200, force_terminal=False)
    live = LiveProgress(console)
    events: list[Event] = []

    def watch(event: Event) -> None:
        events.append(event)
        live(event)

    runner = Runner(None, on_event=watch)  # type: ignore[arg-type]
    for line in ("rtprobe: noise: warning: RT throttling is on", "cyclic: 3 samples",
                 "rtprobe: noise: warning: RT throttling is on"):
        runner._on_probe_stderr(line)
    assert runner.warnings == ["rtprobe: noise: warning: RT throttling is on"]
    assert events == [ProbeWarning("rtprobe: noise: warning: RT throttling is on")]
    assert console.export_text().count("RT throttling is on") == 1


# ---- item 6: RT throttling -------------------------------------------------------------

def test_preflight_rt_throttling_warns_naming_busy_loop_tests() -> None:
    fact = {f["name"]: f for f in run_preflight(STOCK_KERNEL)}["rt_throttling"]
    assert fact["severity"] == "warn"
    assert "noise" in fact["advice"] and "50 ms" in fact["advice"]
    assert "sched_rt_runtime_us" in fact["advice"]
    off = {f["name"]: f for f in run_preflight({"rt_runtime_us": -1})}["rt_throttling"]
    assert off["severity"] == "ok"


def test_throttling_gaps_one_per_period() -> None:
    gaps = [(k * 1_000_000_000 + 3_000, 49 * MS) for k in range(1, 6)]
    assert throttling_gaps(gaps, 950000, 1000000) == (5, 49 * MS)
    scattered = [(137 * MS, 49 * MS), (512 * MS, 50 * MS), (1_801 * MS, 48 * MS)]
    assert throttling_gaps(scattered, 950000, 1000000) is None
    short = [(k * 1_000_000_000, 20_000) for k in range(5)]
    assert throttling_gaps(short, 950000, 1000000) is None
    assert throttling_gaps(gaps, -1, 1000000) is None


def test_verdict_blames_throttling_for_a_failed_noise_test() -> None:
    worst = [(k * 1_000_000_000 + 500, 49 * MS + k) for k in range(1, 9)]
    noise = measurement("noise", "noise", "fail", [series(49 * MS + 8, [(MS, 8)], worst)])
    run = a_run("fail", [noise], preflight=run_preflight(STOCK_KERNEL), sysinfo=STOCK_KERNEL)
    verdict = verdict_of(run)
    assert [t.label for t in verdict.throttled] == ["idle / noise"]
    assert verdict.causes[0].name == "rt_throttling"
    text = "\n".join(line for _, line in verdict_lines(verdict))
    assert "RT throttling stopped its busy loop" in text and "8 gaps of ~49 ms" in text
    # a failed cyclic test is not a throttling victim
    cyclic = measurement("c", "cyclic", "fail", [series(49 * MS, [(MS, 8)], worst)])
    verdict = verdict_of(a_run("fail", [cyclic], preflight=run_preflight(STOCK_KERNEL),
                                sysinfo=STOCK_KERNEL))
    assert verdict.throttled == [] and "rt_throttling" not in [c.name for c in verdict.causes]


# ---- item 8: tables never cut a number ---------------------------------------------------

NUMBER = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?(?:±\d+(?:\.\d+)?)?(?![\w.,])")


def render(renderable: object, width: int = 200) -> str:
    """Text of a rich renderable at a width."""
    console = Console(width=width, record=True, force_terminal=False)
    console.print(renderable)
    return console.export_text()


@pytest.fixture()
def wide_run(tmp_path: Path) -> tuple[str, RunDetail]:
    """A stored run with large counts and four thresholds (a wide summary)."""
    url = f"sqlite:///{tmp_path / 'w.db'}"
    thresholds = (20_000, 50_000, 100_000, MS)
    with Store.open(url) as store:
        run_id = store.create_run(
            suite="wide", suite_source="", scale=1.0, hostname="box", target="local",
            sysinfo={}, preflight=[], tool_versions={}, command_line=["rtbench"],
            simulated=True)
        for name in ("idle", "sched-and-net-load-with-a-long-name"):
            sc = store.add_scenario(run_id, name=name, loads=[], load_cpus=None,
                                    measure_cpus=None)
            lines, _ = synth_lines(seed=3, series=2, windows=2, per_window=60_000,
                                   thresholds_ns=thresholds)
            store.add_measurement(sc, name="cyclic-1ms", test="cyclic", params={},
                                  command=["rtprobe"], output=ProbeOutput.from_lines(lines),
                                  status="fail", thresholds_ns=list(thresholds))
        store.finish_run(run_id, "fail")
        return url, store.get_run(run_id)


@pytest.mark.parametrize("width", [80, 60])
def test_tables_print_every_number_whole(wide_run: tuple[str, RunDetail], width: int) -> None:
    from rtbench.analysis.measurement import run_stats

    _, run = wide_run
    tables = [summary_table(run), *[series_table(ms) for ms in run_stats(run)]]
    for table in tables:
        full, narrow = render(table, 400), render(table, width)
        assert "…" not in narrow
        assert max(len(line.rstrip()) for line in narrow.splitlines()) <= width
        wanted = NUMBER.findall(full.split("times in")[0])
        got = NUMBER.findall(narrow)
        assert wanted and all(got.count(n) >= wanted.count(n) for n in wanted), \
            set(wanted) - set(got)
    assert "≥1ms" in render(summary_table(run), width)


@pytest.mark.parametrize("columns", ["80", "60"])
def test_show_at_narrow_terminals(wide_run: tuple[str, RunDetail], run_cli: RunCli,
                                  rtbench_env: dict[str, str], columns: str) -> None:
    url, run = wide_run
    rtbench_env["COLUMNS"] = columns
    done = run_cli("show", str(run.id), "--db", url)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout and "verdict: FAIL" in done.stdout
    worst = max(s.max_ns for sc in run.scenarios for m in sc.measurements for s in m.series
                if s.max_ns is not None)
    from rtbench.report.format import fmt_us
    assert re.search(rf"(?<![\d.]){re.escape(fmt_us(worst))}(?![\d])", done.stdout)


def test_ls_and_show_json(wide_run: tuple[str, RunDetail], run_cli: RunCli) -> None:
    url, run = wide_run
    done = run_cli("ls", "--json", "--db", url)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [r["id"] for r in listed] == [run.id]
    assert listed[0]["status"] == "fail" and listed[0]["simulated"] is True
    assert set(listed[0]) == {"id", "started_at", "board", "hostname", "target", "kernel", "suite",
                              "status", "worst_max_ns", "simulated", "tags", "scale",
                              "not_as_defined", "traced", "emulated", "markers"}
    assert listed[0]["target"] == run.target
    done = run_cli("show", str(run.id), "--json", "--db", url)
    assert done.returncode == 0, done.stderr
    back = runjson_loads(done.stdout)
    assert back.uid == run.uid and len(back.scenarios) == 2


# ---- item 9: histogram counts, thresholds, timeline --------------------------------------

def test_histogram_counts_thresholds_and_timeline(wide_run: tuple[str, RunDetail]) -> None:
    _, run = wide_run
    m = run.scenarios[0].measurements[0]
    svg = histogram_svg(m, "idle / cyclic-1ms")
    assert svg is not None
    assert "samples per bucket" in svg and "samples per µs" not in svg
    assert "threshold 20 µs" in svg and "threshold 1 ms" in svg
    assert "latency per window" in svg and "warm-up" in svg
    m.windows = []
    svg = histogram_svg(m, "no windows")
    assert svg is not None and "latency per window" not in svg


# ---- item 10: loads and params as a suite file writes them ------------------------------

def test_loads_print_as_suite_file_lines() -> None:
    assert load_text({"instances": 1, "kind": "cpu", "options": {}, "rate": 80.0}) \
        == '{ kind = "cpu", rate = 80 }'
    assert load_text({"instances": 2, "command": "find / -xdev", "cpus": "0-1"}) \
        == '{ command = "find / -xdev", instances = 2, cpus = "0-1" }'
    assert load_text({"instances": 1, "kind": "io", "rate": "max", "options": {"dir": "/t"},
                      "achieved": 3.0, "unit": "MB/s"}) \
        == '{ kind = "io", rate = "max", options = { dir = "/t" } }'


# generating the tables is slow only on a busy machine: not what this test checks
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(min_size=1, max_size=8),
                       st.one_of(st.text(max_size=12), st.integers(-10**6, 10**6),
                                 st.booleans(), st.lists(st.text(max_size=4), max_size=3)),
                       max_size=4))
def test_inline_tables_are_valid_toml(table: dict[str, Any]) -> None:
    assert tomllib.loads(f"x = {inline_table(table)}")["x"] == table


def test_suites_command_shows_toml_not_json(run_cli: RunCli) -> None:
    done = run_cli("suites", "quick")
    assert done.returncode == 0, done.stderr
    assert '{ kind = "cpu", rate = 80 }' in done.stdout
    assert '"instances"' not in done.stdout and "options={}" not in done.stdout


# ---- item 12: --db PATH, plurals, suite lengths -----------------------------------------

def test_db_accepts_a_plain_path(run_cli: RunCli, tmp_path: Path) -> None:
    assert db_url_of(str(tmp_path / "x.db")) == f"sqlite:///{tmp_path / 'x.db'}"
    assert db_url_of("sqlite:///rel.db") == "sqlite:///rel.db"
    # a reading command creates nothing (issue 27); `db migrate` creates, then ls reads it
    done = run_cli("ls", "--db", str(tmp_path / "x.db"))
    assert done.returncode == 2 and "does not exist" in done.stderr
    assert not (tmp_path / "x.db").exists()
    done = run_cli("db", "migrate", "--db", str(tmp_path / "x.db"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "x.db").is_file()
    done = run_cli("ls", "--db", str(tmp_path / "x.db"))
    assert done.returncode == 0, done.stderr


def test_suite_lengths_agree_with_the_estimate() -> None:
    doc = (REPO / "docs" / "suites.md").read_text(encoding="utf-8")
    for name, path in builtin_suites().items():
        suite = load_suite(str(path))
        estimate = suite.estimated_seconds()
        claims = re.findall(r"about (\d+) s", suite.description)
        row = re.search(rf"^\| `{name}` .*\| ~(\d+) s\s*\|$", doc, re.M)
        assert row, f"docs/suites.md has no length for {name}"
        for claim in [*claims, row.group(1)]:
            assert abs(int(claim) - estimate) <= 0.15 * estimate, (name, claim, estimate)


def test_wakeup_length_counts_every_mechanism() -> None:
    suite = parse("[suite]\nname='x'\n[[tests]]\ntest='wakeup'\nduration='5s'\n"
                  "warmup='1s'\nparams={mechanism='condvar,futex,pipe'}\n")
    (wakeup,) = suite.tests
    assert wakeup.runs() == 3 and wakeup.expected_seconds() == 18
    assert expected_text(wakeup) == "18 (3 mechanisms x 6)"
    assert suite.estimated_seconds() >= 18


def test_db_text_that_is_no_path_stays_a_url(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert db_url_of("::nonsense::") == "::nonsense::"
    assert db_url_of("results.db") == f"sqlite:///{tmp_path / 'results.db'}"
    assert db_url_of("~/x.sqlite").startswith("sqlite:///") and "~" not in db_url_of("~/x")
    assert list(tmp_path.iterdir()) == []


def test_verdict_notes_what_rtprobe_could_not_set_up() -> None:
    m = measurement("c", "cyclic", "ok", [series(50_000, [(MS, 0)])])
    m.start["rt"] = {"mlockall": False, "mlock_error": "mlockall: Cannot allocate memory",
                     "pmqos": {"held": False, "error": "open /dev/cpu_dma_latency: EACCES"}}
    same = measurement("d", "cyclic", "ok", [series(50_000, [(MS, 0)])])
    same.start["rt"] = m.start["rt"]
    skipped = measurement("e", "cyclic", "ok", [series(50_000, [(MS, 0)])])
    skipped.start["rt"] = {"mlockall": True, "pmqos": {"held": False,
                                                       "error": "not done: --no-pmqos"}}
    notes = verdict_of(a_run("ok", [m, same, skipped])).notes
    assert len(notes) == 2
    assert "memory not locked" in notes[0] and "PM-QoS not held" in notes[1]


def test_building_only_the_probe_needs_no_python(tmp_path: Path) -> None:
    done = make("-n", "probe", f"PYTHON={tmp_path / 'no-python'}")
    assert done.returncode == 0, done.stderr
    assert "no-python" not in done.stdout


@pytest.mark.parametrize("command", [["preflight"], ["suites"], ["suites", "catalogue"]])
def test_text_tables_wrap_instead_of_cutting(run_cli: RunCli, rtbench_env: dict[str, str],
                                             command: list[str]) -> None:
    rtbench_env["COLUMNS"] = "70"
    done = run_cli(*command)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    assert max(len(line.rstrip()) for line in done.stdout.splitlines()) <= 70
