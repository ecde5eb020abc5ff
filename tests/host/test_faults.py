"""Faults during a run: each leaves a truthful status, every finished window, no process
and no temporary file.

Signals to rtbench (SIGINT, SIGTERM, SIGHUP, SIGKILL), SIGKILL to the probe and to a load,
a hung probe, a full disk and a locked database mid-run.  The loads include a command that
escapes its process group (setsid) and a built-in io load with its own work directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import sqlite3
import struct
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
import rtbench.store.engine
from rtbench.cli import main
from rtbench.interop.runjson import loads as load_bundle
from rtbench.store import Store
from tests.cli_inprocess import run_in_process
from tests.conftest import REPO, pids_with, wait_until_gone
from tests.host.robust_support import (
    base_env,
    db_digest,
    fake_probe,
    one_test_suite,
    run_statuses,
    write_suite,
)
from tests.host.synth_probe import synth_lines
from tests.parts import require_part

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
    # 10 s: on a busy machine the kill below once came after a 5 s test had ended (exit 0)
    proc = start(run_env, loaded_suite(run_env["tmp"], run_env["marker"], "10s"))
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
        require_part("tmpfs", f"cannot mount a tmpfs: {done.stderr.strip()}")
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
    monkeypatch.setattr(rtbench.store.engine, "BUSY_TIMEOUT_MS", 300)
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


# ----------------------------------------------------------------- issue 27: second pass
@pytest.fixture(scope="module")
def one_run_db(tmp_path_factory: pytest.TempPathFactory, probe_path: Path) -> dict[str, Any]:
    """A database holding one simulated run, and the environment that points at it."""
    base = tmp_path_factory.mktemp("one-run")
    url = f"sqlite:///{base / 'results.db'}"
    env = base_env(base, probe_path, url)
    suite = write_suite(base, one_test_suite())
    result = CliRunner().invoke(main, ["run", str(suite), "--simulate", "1", "--no-report"],
                                env=env)
    assert result.exit_code == 0, result.output
    return {"dir": base, "url": url, "env": env}


def rtbench_child(args: list[str], env: dict[str, str], stdout: Any,
                  stdin: Any = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    """rtbench as a child process with the given stdout (a file, /dev/full)."""
    return subprocess.run([sys.executable, "-m", "rtbench", *args], env=env, cwd=REPO,
                          stdout=stdout, stdin=stdin, stderr=subprocess.PIPE, text=True,
                          timeout=120, check=False)


def one_error_line(stderr: str, *words: str) -> str:
    """The only line of stderr; it contains every word (case-insensitive)."""
    assert "Traceback" not in stderr, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    for word in words:
        assert word.lower() in lines[0].lower(), lines[0]
    return lines[0]


STDOUT_COMMANDS = (("export", "1", "--format", "json"), ("export", "1", "--format", "ndjson"),
                   ("export", "1", "--format", "kcidb"),
                   ("export", "1", "--format", "openmetrics"), ("show", "1", "--json"),
                   ("show", "1"), ("ls",), ("suites",), ("db", "path"), ("--help",))


@pytest.mark.parametrize("args", STDOUT_COMMANDS, ids=lambda a: "_".join(a))
def test_stdout_on_dev_full(args: tuple[str, ...], one_run_db: dict[str, Any]) -> None:
    """Every command writing to stdout: a refused write is exit 3 and one line, never 0."""
    with open("/dev/full", "w", encoding="utf-8") as full:
        done = rtbench_child(list(args), one_run_db["env"], full)
    assert done.returncode == 3, done.stderr
    one_error_line(done.stderr, "stdout")


# one of each way of writing: rich tables, bytes whole, click's own help
@pytest.mark.parametrize("args", [("ls",), ("export", "1", "--format", "ndjson"), ("--help",)],
                         ids=lambda a: "_".join(a))
def test_stdout_closed_by_its_reader(args: tuple[str, ...], one_run_db: dict[str, Any]
                                     ) -> None:
    """`rtbench ... | head -1` with a reader that has already gone: a real pipe whose read
    end is closed before rtbench writes; exit 0, nothing on stderr, no traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = rtbench_child(list(args), one_run_db["env"], write_end)
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_run_goes_on_when_its_reader_is_gone(one_run_db: dict[str, Any], tmp_path: Path
                                             ) -> None:
    """`rtbench run | head -1`: the run measures to its end and is stored 'ok' with the
    run's own exit code, quietly."""
    suite = write_suite(tmp_path, one_test_suite())
    url = f"sqlite:///{tmp_path / 'pipe.db'}"
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = rtbench_child(["run", str(suite), "--simulate", "1", "--no-report",
                              "--db", url], one_run_db["env"], write_end)
    finally:
        os.close(write_end)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert newest_run(url).status == "ok"


@pytest.mark.parametrize("fmt", ["json", "ndjson"])
def test_stdout_short_write_on_full_fs(fmt: str, one_run_db: dict[str, Any],
                                       small_fs: Path) -> None:
    """stdout a file on a file system with room for part of the export: exit 3, one line."""
    # the whole export's length, in this process (tests/cli_inprocess.py); the export
    # onto the full file system below is a child of its own, whose stdout is that file
    whole = run_in_process(["export", "1", "--format", fmt], one_run_db["env"], REPO,
                           timeout=120)
    assert whole.returncode == 0
    for name, size in (("filler", 65536), ("filler2", 512)):
        fd = os.open(small_fs / name, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
        finally:
            os.close(fd)
    (small_fs / "filler2").unlink()  # room for 4 KiB pages of part of the output
    assert len(whole.stdout) > 8192
    with open(small_fs / "out", "w", encoding="utf-8") as out:
        done = rtbench_child(["export", "1", "--format", fmt], one_run_db["env"], out)
    assert done.returncode == 3, (done.stderr, (small_fs / "out").stat().st_size)
    one_error_line(done.stderr, "stdout", "no space")


def test_export_output_on_full_fs(one_run_db: dict[str, Any], small_fs: Path) -> None:
    """`export -o` onto a full disk exits 3 as `report` does, leaving no file."""
    fd = os.open(small_fs / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\0" * 4096)
    finally:
        os.close(fd)
    out = small_fs / "run.json"
    result = CliRunner().invoke(main, ["export", "1", "--format", "json", "-o", str(out)],
                                env=one_run_db["env"])
    assert result.exit_code == 3, result.output
    one_error_line(result.stderr, str(out))
    assert not out.exists() and not list(small_fs.glob(".*tmp"))
    report = CliRunner().invoke(main, ["report", "1", "-o", str(small_fs / "r.html")],
                                env=one_run_db["env"])
    assert report.exit_code == result.exit_code


@pytest.mark.parametrize("content,mode,words", [
    ("rtb_abc\nsecond line\n", 0o600, ("one line",)),
    ("rtb_abc", 0o644, ("chmod 600",)),
    ("rtb_a b", 0o600, ("printable",)),
    ("rtb_\x1b[2Jx", 0o600, ("control characters",)),
], ids=["two-lines", "world-readable", "space", "escape"])
def test_token_file_never_printed(content: str, mode: int, words: tuple[str, ...],
                                  one_run_db: dict[str, Any], tmp_path: Path) -> None:
    """A malformed or exposed token file: exit 2, one line, and the token is not in it."""
    token = tmp_path / "token"
    token.write_text(content)
    token.chmod(mode)
    result = CliRunner().invoke(main, ["push", "1", "--server", "http://127.0.0.1:9",
                                       "--token-file", str(token)], env=one_run_db["env"])
    assert result.exit_code == 2, result.output
    line = one_error_line(result.stderr, *words)
    assert "rtb_a" not in line and "second" not in line


def test_token_env_never_printed(one_run_db: dict[str, Any]) -> None:
    """RTBENCH_TOKEN with a second line: exit 2, one line without the token."""
    env = {**one_run_db["env"], "RTBENCH_TOKEN": "rtb_secret\nsecond line"}
    result = CliRunner().invoke(main, ["push", "1", "--server", "http://127.0.0.1:9"], env=env)
    assert result.exit_code == 2, result.output
    line = one_error_line(result.stderr, "RTBENCH_TOKEN")
    assert "rtb_secret" not in line and "second" not in line


def test_token_file_dev_zero_is_bounded(one_run_db: dict[str, Any]) -> None:
    """--token-file /dev/zero is refused unread: a device, not a regular file (it took all
    memory once, then was read up to the bound)."""
    done = rtbench_child(["push", "1", "--server", "http://127.0.0.1:9", "--token-file",
                          "/dev/zero"], one_run_db["env"], subprocess.PIPE)
    assert done.returncode == 2, done.stderr
    one_error_line(done.stderr, "/dev/zero", "character device")


def _sh(script: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a /bin/sh script as a board would."""
    return subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True,
                          timeout=30, check=False, env=env)


def test_board_dir_is_private(tmp_path: Path) -> None:
    """The board's rtbench directory: created 0700, a loose one of ours tightened; one of
    another user, or a symlink, refused with the reason (the probe could be swapped)."""
    from rtbench.targets._shell import private_dir_command

    fresh = tmp_path / "fresh" / "rtbench"
    assert _sh(private_dir_command(str(fresh))).returncode == 0
    assert fresh.is_dir() and fresh.stat().st_mode & 0o777 == 0o700
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    assert _sh(private_dir_command(str(loose))).returncode == 0
    assert loose.stat().st_mode & 0o777 == 0o700
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)
    done = _sh(private_dir_command(str(theirs)))
    assert done.returncode == 1 and "belongs to uid 65534" in done.stdout
    link = tmp_path / "link"
    link.symlink_to(fresh)
    done = _sh(private_dir_command(str(link)))
    assert done.returncode == 1 and "not a directory" in done.stdout


def test_serial_session_files_private(tmp_path: Path) -> None:
    """The serial session's stderr and exit-code files: in a 0700 directory of a new name
    (no pid-named files in TMPDIR to plant as symlinks), removed when the session ends."""
    from rtbench.targets.serial import CLEAR_FILES, ERR_FILE, SESSION_CLEANUP, SESSION_VARS

    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = _sh(f"{SESSION_VARS}; {SESSION_VARS}; echo $RTBD; ls -ld $RTBD; "
               f"(echo oops >&2) 2>{ERR_FILE}; cat {ERR_FILE}; {CLEAR_FILES}; "
               f"{SESSION_CLEANUP}", env)
    assert done.returncode == 0, done.stderr
    directory, mode, said = done.stdout.splitlines()[:3]
    assert Path(directory).parent == tmp_path and mode.startswith("drwx------")
    assert said == "oops"
    assert list(tmp_path.iterdir()) == []
    # without mktemp: a directory of its own made by mkdir -m 700, still removed
    done = _sh(f"mktemp() {{ return 1; }}; {SESSION_VARS}; ls -ld $RTBD; {SESSION_CLEANUP}",
               env)
    assert done.stdout.startswith("drwx------"), done.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command,words", [
    ("/nonexistent/binary --x", ("cannot run", "not found")),
    ("exit 0", ("ends at once",)),
], ids=["not-found", "exits-at-once"])
def test_command_load_that_cannot_run(run_env: dict[str, Any], command: str,
                                      words: tuple[str, ...]) -> None:
    """A command load that is not found, or ends at once every time, fails its scenario's
    measurement with the reason (it was stored `ok`, verdict PASS, before)."""
    suite = write_suite(run_env["tmp"], f"""
[suite]
name = "bad-command-load"
[defaults]
duration = "3s"
warmup = "0s"
settle = "0s"
[[scenarios]]
name = "loaded"
loads = [{{ command = "{command}" }}]
[[tests]]
name = "cyclic"
test = "cyclic"
params = {{ policy = "other", interval = "2ms" }}
""")
    result = CliRunner().invoke(main, ["run", str(suite), "--no-report"], env=run_env["env"])
    assert result.exit_code == 3, result.output
    run = newest_run(run_env["url"])
    assert run.status == "error"
    (m,) = run.scenarios[0].measurements
    assert m.status == "error" and m.reason
    for word in words:
        assert word in m.reason, m.reason


# ----------------------------------------------------------------- the server under attack
@pytest.fixture()
def sqlite_app(tmp_path: Path) -> Iterator[tuple[Any, str, str]]:
    """(TestClient, token, db URL) of a server over a fresh SQLite database."""
    from fastapi.testclient import TestClient

    from rtbench.server.app import create_app
    from rtbench.store.tokens import create_token

    url = f"sqlite:///{tmp_path / 'server.db'}"
    store = Store.open(url)
    token = create_token(store, "t")
    with TestClient(create_app(store=store), raise_server_exceptions=False) as client:
        yield client, token, url
    store.close()


def test_server_security_headers(sqlite_app: tuple[Any, str, str]) -> None:
    """Pages, API answers and errors carry CSP, X-Frame-Options and nosniff."""
    client, _, _ = sqlite_app
    answers = [client.get(path) for path in ("/runs", "/api/v1/runs", "/no/such/page",
                                             "/api/v1/runs/999", "/api/v1/openapi.json")]
    answers.append(client.post("/api/v1/runs", content=b"{}"))  # 401 without a token
    for answer in answers:
        where = f"{answer.request.method} {answer.request.url.path}"
        (policy,) = answer.headers.get_list("content-security-policy")  # once, not twice
        assert "frame-ancestors 'none'" in policy, where
        assert answer.headers.get_list("x-frame-options") == ["DENY"], where
        assert answer.headers["x-content-type-options"] == "nosniff", where
        assert answer.headers["referrer-policy"] == "no-referrer", where


def test_server_limits_failed_tokens(sqlite_app: tuple[Any, str, str]) -> None:
    """Ten wrong tokens from one address, then 429 (even for the right token) with
    Retry-After; the limit is per address, so other clients are not locked out."""
    from tests.host.server_helpers import bundle_text

    client, token, _ = sqlite_app
    body = bundle_text()
    for _ in range(10):
        answer = client.post("/api/v1/runs", content=body,
                             headers={"Authorization": "Bearer rtb_guess"})
        assert answer.status_code == 401
    answer = client.post("/api/v1/runs", content=body,
                         headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 429 and int(answer.headers["retry-after"]) > 0
    assert "rtb_" not in answer.text
    client.app.state.failed_attempts.window_s = 0.0  # the window has passed
    answer = client.post("/api/v1/runs", content=body,
                         headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 201, answer.text


def test_server_bounds_string_fields(sqlite_app: tuple[Any, str, str]) -> None:
    """A 1 MB word in command_line is refused (422 naming the field); nothing stored."""
    client, token, url = sqlite_app
    doc = json.loads(bundle_text_of())
    doc["command_line"] = ["rtbench", "x" * 1_000_000]
    answer = client.post("/api/v1/runs", content=json.dumps(doc),
                         headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 422 and "command_line" in answer.text, answer.text
    assert run_statuses(url) == {}


def bundle_text_of() -> str:
    """One synthetic run as rtbench-run/1 JSON."""
    from tests.host.server_helpers import bundle_text

    return bundle_text()


def test_serve_refuses_public_bind_without_flag(tmp_path: Path) -> None:
    """`serve --bind 0.0.0.0:PORT` is refused (exit 2, one line) unless --public."""
    result = CliRunner().invoke(main, ["serve", "--db", f"sqlite:///{tmp_path / 's.db'}",
                                       "--bind", "0.0.0.0:8999"])
    assert result.exit_code == 2, result.output
    one_error_line(result.stderr, "--public")


def test_sqlite_server_queues_uploads_past_a_lock(tmp_path: Path) -> None:
    """A live SQLite server while another process holds the write lock for longer than
    SQLite's busy timeout: 8 x 10 concurrent uploads all stored, none answered 503."""
    import httpx

    from rtbench.store.tokens import create_token
    from tests.host.server_helpers import bundle_text, free_port

    db = tmp_path / "server.db"
    url = f"sqlite:///{db}"
    with Store.open(url) as store:
        token = create_token(store, "t")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "rtbench", "serve", "--db", url,
                                   "--bind", f"127.0.0.1:{port}"], stdout=out, stderr=out,
                                  env=env)
    base = f"http://127.0.0.1:{port}"
    holder = None
    try:
        for _ in range(300):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                    break
            time.sleep(0.1)
        flag = tmp_path / "locked"
        holder = subprocess.Popen([sys.executable, "-c",
                                   "import sqlite3, sys, time\n"
                                   "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                                   "c.execute('BEGIN IMMEDIATE')\n"
                                   "open(sys.argv[2], 'w').close()\n"
                                   "time.sleep(12)\n"
                                   "c.execute('COMMIT')\n", str(db), str(flag)])
        while not flag.exists():
            time.sleep(0.05)
        template = json.loads(bundle_text())

        def uploader(worker: int) -> list[int]:
            """Ten uploads; their status codes."""
            codes = []
            with httpx.Client(timeout=180) as client:
                for _ in range(10):
                    doc = dict(template, uid=uuid.uuid4().hex, hostname=f"w{worker}")
                    codes.append(client.post(f"{base}/api/v1/runs", content=json.dumps(doc),
                                             headers={"Authorization": f"Bearer {token}"})
                                 .status_code)
            return codes

        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(8) as pool:
            codes = [c for part in pool.map(uploader, range(8)) for c in part]
        assert codes == [201] * 80, sorted(set(codes))
        assert len(run_statuses(url)) == 80
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()
        server.terminate()
        server.wait(20)
    assert "Traceback" not in log.read_text()


def test_server_pages_a_huge_run(sqlite_app: tuple[Any, str, str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of more measurements than a page holds (here 5 a page, 12 scenarios): its
    page shows part 1 of 3 and links the next; the parts hold every scenario once; no
    page past the last."""
    import copy

    import rtbench.server.views.paging
    from rtbench.interop.runjson import loads as load_run

    client, token, _ = sqlite_app
    run = load_run(bundle_text_of())
    first = run.scenarios[0]
    run.scenarios = []
    for i in range(12):
        scenario = copy.deepcopy(first)
        scenario.name = f"scenario-{i:03d}"
        scenario.measurements = scenario.measurements[:1]
        run.scenarios.append(scenario)
    from rtbench.interop.runjson import dumps as dump_run

    monkeypatch.setattr(rtbench.server.views.paging, "PAGE_MEASUREMENTS", 5)

    answer = client.post("/api/v1/runs", content=dump_run(run),
                         headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 201, answer.text
    run_id = answer.json()["id"]
    seen: list[str] = []
    for page in (1, 2, 3):
        html = client.get(f"/runs/{run_id}?page={page}").text
        assert f"part {page} of 3" in html
        assert (f"?page={page + 1}" in html) == (page < 3)
        seen += sorted(set(re.findall(r"scenario-\d{3}", html)))
    assert seen == [f"scenario-{i:03d}" for i in range(12)]
    assert client.get(f"/runs/{run_id}?page=4").status_code == 404


# ----------------------------------------------------------------- rtprobe under sanitizers
@pytest.fixture(scope="module")
def sanitized_probe() -> Path:
    """rtprobe built with ASan, UBSan and LSan (`make -C probe sanitize-probe`: a no-op in
    make test, whose check-c ran `make -C probe sanitize`, the C unit tests under them)."""
    if not shutil.which("gcc"):
        require_part("cc", "no gcc")
    done = subprocess.run(["make", "-C", str(REPO / "probe"), "-s", f"-j{os.cpu_count() or 2}",
                           "sanitize-probe"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return REPO / "probe" / "build" / "sanitize" / "rtprobe"


@pytest.mark.parametrize("args", [
    ("periodic", "--duration", "200ms", "--policy", "other"),
    ("clock", "--duration", "200ms", "--policy", "other"),
    ("noise", "--duration", "200ms", "--policy", "other"),
    ("cyclic", "--duration", "200ms", "--policy", "other"),
    ("cyclic", "--simulate", "3", "--loops", "500"),
    ("describe", "--json"),
    ("describe", "--json", "--bogus"),
], ids=lambda a: "_".join(a))
def test_probe_clean_under_sanitizers(sanitized_probe: Path, args: tuple[str, ...]) -> None:
    """No leak, overflow or undefined behaviour in a short run of each test (periodic,
    clock and noise leaked their thread arrays before); `describe --json --bogus` names
    --bogus."""
    done = subprocess.run([str(sanitized_probe), *args], capture_output=True, text=True,
                          timeout=120, check=False,
                          env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1"})
    assert "Sanitizer" not in done.stderr and "runtime error" not in done.stderr, \
        done.stderr[-3000:]
    if args[-1] == "--bogus":
        assert done.returncode == 2 and "'--bogus'" in done.stderr
    else:
        assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: a criterion failed


# ------------------------------------------- issue 27: bounded output of commands
FLOOD = "head -c {n} /dev/zero | tr '\\0' x"


def test_local_run_output_is_bounded(tmp_path: Path) -> None:
    """A command on the local target printing more than 16 MiB (stdout or stderr) is
    stopped: one line naming the command and the bound; a large legal output is kept."""
    from rtbench.core.boundedrun import COMMAND_OUTPUT_MAX_BYTES
    from rtbench.targets import LocalTarget, TargetError

    target = LocalTarget(tmp_path / "rtprobe")
    kept = target.run(FLOOD.format(n=1 << 20))
    assert kept.returncode == 0 and len(kept.stdout) == 1 << 20
    for redirect, stream in (("", "stdout"), (" >&2", "stderr")):
        command = FLOOD.format(n=COMMAND_OUTPUT_MAX_BYTES + 1) + redirect
        with pytest.raises(TargetError, match=rf"more than 16 MiB on {stream}") as caught:
            target.run(command)
        assert "\n" not in str(caught.value)


def test_endless_output_is_stopped_not_waited_for() -> None:
    """`yes` never ends: it is killed at the bound, long before its timeout."""
    from rtbench.core.boundedrun import OutputTooLarge, run_bounded

    start = time.monotonic()
    with pytest.raises(OutputTooLarge, match="^yes: printed more than 1 MiB on stdout"):
        run_bounded(["yes"], 60, "yes", limit_bytes=1 << 20)
    assert time.monotonic() - start < 30


def test_probe_describe_output_is_bounded(tmp_path: Path) -> None:
    """A fake rtprobe whose describe --json prints without end: one line, no hang."""
    from rtbench.rtprobe.util.locate import ProbeDescribeError, probe_describe

    fake = tmp_path / "rtprobe"
    fake.write_text("#!/bin/sh\nexec yes '{}'\n", encoding="utf-8")
    fake.chmod(0o755)
    with pytest.raises(ProbeDescribeError, match="more than 16 MiB on stdout"):
        probe_describe(fake)


class _FloodingPort:
    """A serial port that always has 1 MiB waiting and never sends a newline."""

    in_waiting = 1 << 20

    def read(self, size: int) -> bytes:
        """size bytes of 'x'."""
        return b"x" * size


def test_serial_line_without_end_is_bounded() -> None:
    """A board printing without a newline: the line reader stops at the bound."""
    from rtbench.targets import TargetError
    from rtbench.targets.serial import SerialLink

    with pytest.raises(TargetError, match="longer than 16 MiB"):
        SerialLink(_FloodingPort()).lines(60.0)


class _OdTarget:
    """A board target that answers `wc -c` and `od` from a local file (or a size)."""

    name = "board"

    def __init__(self, path: Path, claimed_size: int | None = None) -> None:
        """Answer from path; `wc -c` says claimed_size when given."""
        self.path = path
        self.claimed_size = claimed_size
        self.commands: list[str] = []

    def run(self, command: str, timeout_s: float = 30.0) -> Any:
        """The shell's answer, through this machine's wc and od."""
        from rtbench.targets.base import CommandResult

        self.commands.append(command)
        if command.startswith("wc -c") and self.claimed_size is not None:
            return CommandResult(0, f"{self.claimed_size}\n", "")
        done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True,
                              check=False)
        return CommandResult(done.returncode, done.stdout, done.stderr)


def test_cyclictest_samples_fetched_in_parts(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The samples file of `rtbench cyclictest -v` on a board is read back with od in
    parts (each under the command bound) and gives the same samples as a local read."""
    import rtbench.commands.cyclictest as cyclictest_cmd
    from rtbench.rtprobe.wire.raw import HEADER_BYTES, RAW_MAGIC, parse_raw

    records = b"".join(struct.pack("<QqII", i, 1000 + i, i % 2, 0) for i in range(500))
    data = RAW_MAGIC + struct.pack("<II", HEADER_BYTES, 24) + \
        b"\0" * (HEADER_BYTES - 16) + records
    path = tmp_path / "raw.bin"
    path.write_bytes(data)
    monkeypatch.setattr(cyclictest_cmd, "RAW_FETCH_PART_BYTES", 1000)
    board = _OdTarget(path)
    assert cyclictest_cmd.fetch_raw(board, str(path)) == parse_raw(data)  # type: ignore[arg-type]
    assert sum(c.startswith("od ") for c in board.commands) == -(-len(data) // 1000)


def test_cyclictest_samples_file_over_the_bound(tmp_path: Path) -> None:
    """A samples file on the board over 64 MiB is refused by its size, never fetched."""
    import rtbench.commands.cyclictest as cyclictest_cmd
    from rtbench.commands._common import CliError

    board = _OdTarget(tmp_path / "raw.bin", claimed_size=(64 << 20) + 1)
    with pytest.raises(CliError, match="larger than 64 MiB"):
        cyclictest_cmd.fetch_raw(board, str(tmp_path / "raw.bin"))  # type: ignore[arg-type]
    assert not any(c.startswith("od ") for c in board.commands)
