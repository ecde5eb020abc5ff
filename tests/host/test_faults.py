"""Faults during a run: each leaves a truthful status, every finished window, no process
and no temporary file.

Signals to rtbench (SIGINT, SIGTERM, SIGHUP, SIGKILL), SIGKILL to the probe and to a load,
a hung probe, a full disk and a locked database mid-run.  The loads include a command that
escapes its process group (setsid) and a built-in io load with its own work directory.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import rtbench.run.runner
import rtbench.run.save
import rtbench.store
from rtbench.cli import main
from rtbench.interop.runjson import loads as load_bundle
from rtbench.store import Store
from tests.conftest import REPO, pids_with, wait_until_gone
from tests.host.robust_support import (
    base_env,
    db_digest,
    fake_probe,
    one_test_suite,
    write_suite,
)
from tests.host.synth_probe import synth_lines

GOOD, _ = synth_lines(seed=5, series=1, windows=3, per_window=40, warmup_windows=0)


def escapee(marker: str) -> str:
    """The unique number the escaping `setsid sleep` of a run sleeps."""
    return str(7_000_000 + int(marker[:5], 16))


def loaded_suite(tmp: Path, marker: str, duration: str = "30s", extra: str = "") -> Path:
    """One scenario with a shell load that escapes by setsid, a busy loop and an io load
    working in tmp/io; one real cyclic test (SCHED_OTHER, no RT privilege needed)."""
    (tmp / "io").mkdir(exist_ok=True)
    return write_suite(tmp, f"""
[suite]
name = "faults"
[defaults]
duration = "{duration}"
warmup = "0s"
settle = "0s"
[[scenarios]]
name = "loaded"
loads = [{{ command = "setsid sleep {escapee(marker)} & while :; do sleep 0.2; done # {marker}" }},
         {{ kind = "io", rate = 1, options = {{ dir = "{tmp / 'io'}" }} }}]
[[tests]]
name = "cyclic"
test = "cyclic"
params = {{ policy = "other", interval = "2ms" }}
{extra}""")


@pytest.fixture()
def run_env(tmp_path: Path, probe_path: Path) -> dict[str, Any]:
    """A database, a data dir, and a probe copy whose path carries a unique marker."""
    marker = uuid.uuid4().hex
    probe = tmp_path / f"rtprobe-{marker}"
    shutil.copy2(probe_path, probe)
    url = f"sqlite:///{tmp_path / 'results.db'}"
    return {"tmp": tmp_path, "marker": marker, "probe": probe, "url": url,
            "env": base_env(tmp_path, probe, url)}


def start(ctx: dict[str, Any], suite: Path) -> subprocess.Popen[str]:
    """Start `rtbench run SUITE` as a child."""
    return subprocess.Popen([sys.executable, "-m", "rtbench", "run", str(suite), "--no-report"],
                            env=ctx["env"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_measuring(ctx: dict[str, Any], proc: subprocess.Popen[str]) -> None:
    """Wait until the probe measures (its first windows out) and every load runs."""
    end = time.monotonic() + 40
    marker = ctx["marker"]
    while time.monotonic() < end:
        assert proc.poll() is None, proc.communicate()
        probes = [p for p in pids_with(marker) if p in pids_with("cyclic")]
        io_dirs = list((ctx["tmp"] / "io").glob("rtprobe-io-*"))
        if probes and io_dirs and pids_with(f"sleep {escapee(marker)}"):
            time.sleep(2.5)  # a few finished windows
            return
        time.sleep(0.1)
    raise AssertionError("the run never started measuring")


def leftovers(ctx: dict[str, Any]) -> list[str]:
    """Processes and files a run must not leave behind."""
    marker = ctx["marker"]
    left = [f"pid {p}" for p in pids_with(marker) + pids_with(f"sleep {escapee(marker)}")]
    left += [str(p) for p in (ctx["tmp"] / "io").glob("*")]
    left += [str(p) for p in (ctx["tmp"] / "data").rglob("*.tmp")]
    return left


def _measurements(url: str) -> int:
    """How many measurements are stored (read-only peek while a run writes)."""
    conn = sqlite3.connect(f"file:{url[len('sqlite:///'):]}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM measurements").fetchone()[0])
    finally:
        conn.close()


def newest_run(url: str) -> Any:
    """The newest stored run."""
    with Store.open(url) as store:
        return store.get_run(store.list_runs(1)[0].id)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_signal_to_rtbench(run_env: dict[str, Any], signum: int) -> None:
    """SIGINT, SIGTERM and SIGHUP: run `interrupted` with its windows, exit 4, clean."""
    proc = start(run_env, loaded_suite(run_env["tmp"], run_env["marker"]))
    try:
        wait_measuring(run_env, proc)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 4, out + err
    assert "Traceback" not in out + err
    run = newest_run(run_env["url"])
    assert run.status == "interrupted"
    (m,) = run.scenarios[0].measurements
    assert m.status == "interrupted" and len(m.windows) >= 1
    deadline = time.monotonic() + 5
    while leftovers(run_env) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert leftovers(run_env) == []


def test_sigkill_to_rtbench(run_env: dict[str, Any]) -> None:
    """SIGKILL: the next command marks the run `abandoned` (windows kept) and removes
    the escaped load process and the io load's directory."""
    second = ('[[tests]]\nname = "cyclic-long"\ntest = "cyclic"\nduration = "60s"\n'
              'params = { policy = "other", interval = "2ms" }\n')
    proc = start(run_env, loaded_suite(run_env["tmp"], run_env["marker"], "2s", second))
    try:
        wait_measuring(run_env, proc)
        end = time.monotonic() + 30
        while not db_digest(run_env["url"]) or not _measurements(run_env["url"]):
            assert time.monotonic() < end, "the first measurement was never stored"
            time.sleep(0.1)
        time.sleep(1.0)  # inside the second test
        proc.kill()
        proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with Store.open(run_env["url"]) as store:
        assert store.list_runs(1)[0].status == "running"
    # what PDEATHSIG reaches goes at once; the setsid escapee waits for the next start
    wait_until_gone(run_env["marker"], 5)
    result = CliRunner().invoke(main, ["ls"], env=run_env["env"])
    assert result.exit_code == 0, result.output
    run = newest_run(run_env["url"])
    assert run.status == "abandoned"
    assert run.finished_at is not None
    (m,) = run.scenarios[0].measurements  # the finished one, kept
    assert m.status == "ok" and len(m.windows) >= 1
    deadline = time.monotonic() + 5
    while leftovers(run_env) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert leftovers(run_env) == []


def test_sigkill_to_probe(run_env: dict[str, Any]) -> None:
    """A probe killed mid-test: the measurement is an error with its windows kept."""
    proc = start(run_env, loaded_suite(run_env["tmp"], run_env["marker"]))
    try:
        wait_measuring(run_env, proc)
        for pid in pids_with(run_env["marker"]):
            if pid in pids_with("cyclic"):
                os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3, out + err
    run = newest_run(run_env["url"])
    assert run.status == "error"
    (m,) = run.scenarios[0].measurements
    assert m.status == "error" and len(m.windows) >= 1
    assert m.reason and "without a result" in m.reason
    assert "without a result" in out
    assert leftovers(run_env) == []


def test_sigkill_to_load(run_env: dict[str, Any]) -> None:
    """A load killed mid-test: the test is an error naming the load; its dir removed."""
    proc = start(run_env, loaded_suite(run_env["tmp"], run_env["marker"], "5s"))
    try:
        wait_measuring(run_env, proc)
        io_loads = [p for p in pids_with(run_env["marker"]) if p in pids_with("load io")]
        assert io_loads
        for pid in io_loads:
            os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3, out + err
    run = newest_run(run_env["url"])
    (m,) = run.scenarios[0].measurements
    assert m.status == "error" and len(m.windows) >= 1
    assert m.reason and "load io" in m.reason
    assert "load io" in out
    assert leftovers(run_env) == []


def test_hung_probe(run_env: dict[str, Any], probe_path: Path,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe that stops talking is killed after its grace; windows kept, reason said."""
    marker = run_env["marker"]
    seconds = 8_000_000 + int(marker[:5], 16)
    fake = fake_probe(run_env["tmp"], probe_path, GOOD[:3], sleep_s=seconds)
    monkeypatch.setattr(rtbench.run.runner, "HANG_GRACE_S", 1.0)
    suite = write_suite(run_env["tmp"], one_test_suite())
    env = {**run_env["env"], "RTBENCH_PROBE": str(fake)}
    result = CliRunner().invoke(main, ["run", str(suite), "--no-report"], env=env)
    assert result.exit_code == 3, result.output
    run = newest_run(run_env["url"])
    (m,) = run.scenarios[0].measurements
    assert m.status == "error" and len(m.windows) == 2
    assert m.reason and "hung" in m.reason
    assert wait_until_gone(f"sleep {seconds}", 2) == []


@pytest.fixture()
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs of its own (unmounted after)."""
    mount = tmp_path / f"fs-{uuid.uuid4().hex[:8]}"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_full_disk_mid_run(run_env: dict[str, Any], probe_path: Path,
                           small_fs: Path) -> None:
    """The database's disk fills while the probe measures: exit 3, the measurement kept
    in a recovery file that is named; the next command marks the run abandoned."""
    url = f"sqlite:///{small_fs / 'results.db'}"
    Store.open(url).close()
    filler = small_fs / "filler"
    fake = fake_probe(run_env["tmp"], probe_path, GOOD)
    script = fake.read_text().replace(
        "\ncat ", f"\ndd if=/dev/zero of={filler} bs=4k 2>/dev/null\ncat ", 1)
    fake.write_text(script)
    suite = write_suite(run_env["tmp"], one_test_suite())
    env = {**run_env["env"], "RTBENCH_PROBE": str(fake), "RTBENCH_DB": url}
    done = subprocess.run([sys.executable, "-m", "rtbench", "run", str(suite), "--no-report"],
                          env=env, cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 1 and "full" in errors[0]
    path = Path(errors[0].split(" kept in ")[1].split(" ")[0])
    recovered = load_bundle(path.read_text())
    (m,) = recovered.scenarios[0].measurements
    assert len(m.windows) == 3
    filler.unlink()
    assert CliRunner().invoke(main, ["ls"], env=env).exit_code == 0
    with Store.open(url) as store:
        assert store.list_runs(1)[0].status == "abandoned"
    assert not list((run_env["tmp"] / "data").rglob("*.tmp"))


def test_locked_database(run_env: dict[str, Any], probe_path: Path,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The database stays locked by another process when the measurement is stored:
    the write is retried with back-off, then the run so far and the measurement are kept
    in a recovery file that the one error line names (exit 3)."""
    monkeypatch.setattr(rtbench.run.save, "RETRY_DELAYS_S", (0.1, 0.2))
    attempts: list[float] = []

    def locked(self: Store, *args: Any, **kwargs: Any) -> int:
        attempts.append(time.monotonic())
        raise rtbench.store.StoreError(f"database {self.url}: cannot store measurement "
                                       "'cyclic-1': database is locked")

    monkeypatch.setattr(Store, "add_measurement_detail", locked)
    fake = fake_probe(run_env["tmp"], probe_path, GOOD)
    suite = write_suite(run_env["tmp"], one_test_suite())
    env = {**run_env["env"], "RTBENCH_PROBE": str(fake)}
    result = CliRunner().invoke(main, ["run", str(suite), "--no-report"], env=env)
    assert result.exit_code == 3, result.output
    assert len(attempts) == 3 and attempts[2] - attempts[0] >= 0.3
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and "locked" in errors[0], errors
    path = Path(errors[0].split(" kept in ")[1].split(" ")[0])
    recovered = load_bundle(path.read_text())
    assert recovered.tags.get("recovered_from") == "1"
    assert recovered.uid and recovered.status == "error"
    (m,) = recovered.scenarios[0].measurements
    assert len(m.windows) == 3 and m.series and m.series[0].count == 120
    json.loads(path.read_text())  # one JSON document
    with Store.open(run_env["url"]) as store:
        # the cut-short run is stored as what it is
        assert store.list_runs(1)[0].status == "error"


@pytest.mark.parametrize("settle", ["0s", "1s"])
def test_load_that_never_runs(run_env: dict[str, Any], settle: str) -> None:
    """An io load whose directory does not exist: not `ok` — the test (or, after a settle,
    the scenario) is an error and the load's own message is printed and stored."""
    missing = run_env["tmp"] / "no-such-dir"
    suite = write_suite(run_env["tmp"], f"""
[suite]
name = "dead-load"
[defaults]
duration = "1s"
warmup = "0s"
settle = "{settle}"
[[scenarios]]
name = "io"
loads = [{{ kind = "io", rate = 1, options = {{ dir = "{missing}" }} }}]
[[tests]]
name = "cyclic"
test = "cyclic"
""")
    result = CliRunner().invoke(main, ["run", str(suite), "--simulate", "1", "--no-report"],
                                env=run_env["env"])
    assert result.exit_code == 3, result.output
    assert "no-such-dir" in result.output
    run = newest_run(run_env["url"])
    assert run.status == "error"
    loads = run.scenarios[0].intensity["loads"]
    assert any("no-such-dir" in " ".join(ld.get("errors", [])) for ld in loads)
    for m in run.scenarios[0].measurements:
        assert m.status == "error" and m.reason and "no-such-dir" in m.reason


def test_database_locked_by_another_process(run_env: dict[str, Any], probe_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A real second process (in a session of its own, so that the probe's end does not take
    it along) holds the database's write lock (BEGIN EXCLUSIVE) while the measurement is
    stored: rtbench waits, retries, then keeps the measurement in a recovery
    file named in one line (exit 3), which `rtbench import` stores once the lock is gone."""
    monkeypatch.setattr(rtbench.run.save, "RETRY_DELAYS_S", (0.1, 0.2))
    monkeypatch.setattr(rtbench.store, "BUSY_TIMEOUT_MS", 300)
    db = run_env["tmp"] / "results.db"
    flag = run_env["tmp"] / "locked.flag"
    holder = ("import sqlite3, sys, time\n"
              "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
              "c.execute('BEGIN EXCLUSIVE')\n"
              "open(sys.argv[2], 'w').write(str(time.time()))\n"
              "time.sleep(4)\n"
              "c.execute('COMMIT')\n")
    fake = fake_probe(run_env["tmp"], probe_path, GOOD)
    script = fake.read_text().replace(
        "cat \"", f"setsid -f {sys.executable} -c \"{holder}\" '{db}' '{flag}' "
        "</dev/null >/dev/null 2>&1\n"
        f"i=0; while [ ! -e '{flag}' ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done\n"
        "cat \"", 1)
    fake.write_text(script)
    suite = write_suite(run_env["tmp"], one_test_suite())
    env = {**run_env["env"], "RTBENCH_PROBE": str(fake)}
    result = CliRunner().invoke(main, ["run", str(suite), "--no-report"], env=env)
    assert flag.exists()
    assert result.exit_code == 3, result.output
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and "locked" in errors[0], errors
    path = Path(errors[0].split(" kept in ")[1].split(" ")[0])
    recovered = load_bundle(path.read_text())
    (m,) = recovered.scenarios[0].measurements
    assert len(m.windows) == 3 and m.series[0].count == 120
    time.sleep(4.5)  # the holder has let go
    imported = CliRunner().invoke(main, ["import", str(path), "--db", run_env["url"]], env=env)
    assert imported.exit_code == 0, imported.output
    with Store.open(run_env["url"]) as store:
        runs = store.list_runs()
        assert any(r.id != 1 for r in runs)
