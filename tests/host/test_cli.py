"""The rtbench command line end to end, with the real rtprobe in --simulate mode."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from rtbench.analysis.stats import stats_of_series
from rtbench.store import Store
from tests.conftest import REPO, RunCli, pids_with, wait_until_gone

BUCKET_ERROR = 1 / 128


def db_url(tmp_path: Path) -> str:
    """A fresh SQLite URL under tmp_path."""
    return f"sqlite:///{tmp_path / 'results.db'}"


def write_suite(tmp_path: Path, body: str, name: str = "s.toml") -> Path:
    """Write a suite file."""
    path = tmp_path / name
    path.write_text(body)
    return path


@pytest.mark.parametrize(("body", "key", "reason"), [
    ("[suite]\nname='x'\n[[tests]]\ntest='cyclic'\ndurration='1s'\n",
     "tests[0].durration", "unknown key"),
    ("[suite]\nname='x'\n[[tests]]\ntest='cyclic'\nduration='1 fortnight'\n",
     "tests[0].duration", "not a duration"),
    ("[suite]\nname='x'\n[[tests]]\ntest='cyclicc'\n", "tests[0].test", "unknown test kind"),
    ("[suite]\nname='x'\n[[tests]]\ntest='cyclic'\nparams={intervall='1ms'}\n",
     "tests[0].params.intervall", "has no option --intervall"),
])
def test_bad_suite_exits_2_and_stores_nothing(run_cli: RunCli, tmp_path: Path, body: str,
                                               key: str, reason: str) -> None:
    suite = write_suite(tmp_path, body)
    url = db_url(tmp_path)
    done = run_cli("run", str(suite), "--db", url, "--simulate", "1")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1
    assert str(suite) in line and key in line and reason in line
    assert "Traceback" not in done.stderr
    if (tmp_path / "results.db").exists():
        with Store.open(url) as store:
            assert store.list_runs() == []


def test_unknown_suite_and_bad_scale(run_cli: RunCli, tmp_path: Path) -> None:
    done = run_cli("run", "no-such-suite", "--db", db_url(tmp_path))
    assert done.returncode == 2
    assert "no-such-suite" in done.stderr
    done = run_cli("run", "smoke", "--scale", "0", "--db", db_url(tmp_path))
    assert done.returncode == 2
    assert "--scale" in done.stderr
    assert not (tmp_path / "results.db").exists()


def test_missing_probe_exits_3(run_cli: RunCli, tmp_path: Path) -> None:
    done = run_cli("run", "smoke", "--probe", str(tmp_path / "nope"), "--db", db_url(tmp_path))
    assert done.returncode == 3
    assert "--probe" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_help_has_examples(run_cli: RunCli) -> None:
    for command in ("run", "suites", "preflight", "ls", "show", "report", "db", "db path",
                    "db migrate"):
        done = run_cli(*command.split(), "--help")
        assert done.returncode == 0, command
        assert "Example" in done.stdout, command


def test_suites_and_preflight_commands(run_cli: RunCli) -> None:
    done = run_cli("suites")
    assert done.returncode == 0
    assert "quick" in done.stdout and "smoke" in done.stdout
    done = run_cli("suites", "quick", "--scale", "0.5")
    assert done.returncode == 0 and "cyclic-1ms" in done.stdout
    done = run_cli("preflight", "--json")
    assert done.returncode == 0, done.stderr
    assert "preempt_rt" in done.stdout and "clocksource" in done.stdout


def test_simulated_smoke_end_to_end(run_cli: RunCli, tmp_path: Path) -> None:
    url = db_url(tmp_path)
    report = tmp_path / "report.html"
    done = run_cli("run", "smoke", "--scale", "0.5", "--db", url, "--report", str(report),
                   "--simulate", "1:const,lat=5us,spike=500us,every=1000")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"report: {report}" in done.stdout
    assert report.is_file()
    with Store.open(url) as store:
        (summary,) = store.list_runs()
        run = store.get_run(summary.id)
    assert (run.status, run.simulated, run.scale, run.suite) == ("ok", True, 0.5, "smoke")
    assert [f["name"] for f in run.preflight][0] == "preempt_rt"
    assert [s.name for s in run.scenarios] == ["idle", "busy-loop"]
    for scenario in run.scenarios:
        assert scenario.intensity is not None and scenario.intensity["samples"] >= 2
        (measurement,) = scenario.measurements
        assert measurement.status == "ok"
        assert measurement.measured_ns == 1_000_000_000
        assert "--simulate" in measurement.command
        assert measurement.series
        for series in measurement.series:
            stats = stats_of_series(series, measurement.measured_ns)
            assert stats.samples > 0
            assert stats.max_ns == 500_000
            for label in ("p50", "p99"):
                value = stats.percentiles[label]
                assert value is not None
                assert abs(value - 5000) <= 5000 * BUCKET_ERROR
    loaded_intensity = run.scenarios[1].intensity
    assert loaded_intensity is not None
    assert loaded_intensity["loads"][0]["command"] == "while :; do :; done"

    ls = run_cli("ls", "--db", url)
    assert ls.returncode == 0 and "smoke" in ls.stdout and "ok" in ls.stdout
    show = run_cli("show", str(summary.id), "--db", url)
    assert show.returncode == 0 and "busy-loop" in show.stdout
    out = tmp_path / "again.html"
    rep = run_cli("report", str(summary.id), "-o", str(out), "--db", url)
    assert rep.returncode == 0 and out.is_file()
    html = out.read_text()
    assert "<svg" in html and "busy-loop" in html
    missing = run_cli("show", "999", "--db", url)
    assert missing.returncode == 2 and "999" in missing.stderr


WIDE_SUITE = """
[suite]
name = "wide"
[defaults]
duration = "10s"
warmup = "0s"
[[tests]]
test = "cyclic"
params = { threads = 1 }
"""


def test_window_option_widens_the_stored_windows(run_cli: RunCli, tmp_path: Path) -> None:
    suite = write_suite(tmp_path, WIDE_SUITE)
    url = db_url(tmp_path)
    for window in (None, "5s"):
        extra = ["--window", window] if window else []
        done = run_cli("run", str(suite), "--db", url, "--simulate", "7", "--no-report",
                       *extra)
        assert done.returncode == 0, done.stdout + done.stderr
    with Store.open(url) as store:
        narrow, wide = (store.get_run(r.id) for r in reversed(store.list_runs()))
    (m1,), (m5,) = (run.scenarios[0].measurements for run in (narrow, wide))
    assert "--window" in m5.command and "--window" not in m1.command
    assert (len(m1.windows), len(m5.windows)) == (10, 2)
    assert sum(w.count for w in m5.windows) == sum(w.count for w in m1.windows) == 10_000
    for value, why in (("1500us", "whole milliseconds"), ("50ms", "whole milliseconds"),
                       ("2h", "whole milliseconds"),
                       ("soon", "not a duration")):
        done = run_cli("run", str(suite), "--db", url, "--simulate", "7", "--window", value)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
        assert "--window" in done.stderr and why in done.stderr
    with Store.open(url) as store:
        assert len(store.list_runs()) == 2


def marked_suite(tmp_path: Path, marker: str) -> Path:
    """A suite whose load command carries marker: idle then loaded, 4 s real tests.

    Simulated runs finish instantly, so these measure for real (SCHED_OTHER: no RT
    privilege needed; nothing asserts latency values).
    """
    return write_suite(tmp_path, f"""
[suite]
name = "interrupt-me"
[defaults]
duration = "4s"
warmup = "1s"
settle = "0.5s"
[[scenarios]]
name = "idle"
[[scenarios]]
name = "loaded"
loads = [{{ command = "while :; do :; done # {marker}", instances = 2 }}]
[[tests]]
name = "cyclic"
test = "cyclic"
params = {{ policy = "other" }}
""")


def start_run(rtbench_env: dict[str, str], tmp_path: Path, probe_path: Path,
              marker: str) -> tuple[subprocess.Popen[str], str]:
    """Start rtbench with a probe copy and load commands that carry marker."""
    probe_copy = tmp_path / f"rtprobe-{marker}"
    shutil.copy2(probe_path, probe_copy)
    url = db_url(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rtbench", "run", str(marked_suite(tmp_path, marker)),
         "--db", url, "--probe", str(probe_copy), "--no-report"],
        env=rtbench_env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, url


def wait_for(marker: str, count: int, timeout_s: float) -> None:
    """Wait until count processes carry marker."""
    end = time.monotonic() + timeout_s
    while len(pids_with(marker)) < count:
        assert time.monotonic() < end, f"{count} processes with {marker} never appeared"
        time.sleep(0.05)


def test_sigint_mid_suite(rtbench_env: dict[str, str], tmp_path: Path,
                          probe_path: Path) -> None:
    marker = uuid.uuid4().hex
    proc, url = start_run(rtbench_env, tmp_path, probe_path, marker)
    try:
        # Two load wrappers + two shells + the probe of the second scenario.
        wait_for(marker, 5, 30)
        time.sleep(2.5)  # inside the measurement, after its warm-up window
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 4, out + err
    assert "interrupted" in out
    assert wait_until_gone(marker, 1.0) == []
    with Store.open(url) as store:
        (summary,) = store.list_runs()
        run = store.get_run(summary.id)
    assert run.status == "interrupted"
    idle, loaded = run.scenarios
    assert idle.measurements[0].status == "ok"
    (partial,) = loaded.measurements
    assert partial.status == "interrupted"
    assert any(not w.warmup for w in partial.windows)
    assert partial.series and partial.series[0].count > 0


def test_sigkill_leaves_no_children(rtbench_env: dict[str, str], tmp_path: Path,
                                    probe_path: Path) -> None:
    marker = uuid.uuid4().hex
    proc, _ = start_run(rtbench_env, tmp_path, probe_path, marker)
    try:
        wait_for(marker, 5, 30)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert wait_until_gone(marker, 2.0) == []
