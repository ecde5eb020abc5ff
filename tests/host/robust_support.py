"""Helpers of the robustness corpus and fault tests: fake probes, suites, DB digests."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def write_suite(directory: Path, body: str, name: str = "suite.toml") -> Path:
    """Write a suite file and return its path."""
    path = directory / name
    path.write_text(body, encoding="utf-8")
    return path


def one_test_suite(name: str = "robust", scenario: str = "idle", test: str = "cyclic-1",
                   duration: str = "1s", extra_scenario: str = "") -> str:
    """A one-scenario, one-test cyclic suite (short)."""
    return (f'[suite]\nname = {json.dumps(name)}\n[defaults]\nduration = "{duration}"\n'
            f'warmup = "0s"\nsettle = "0s"\n[[scenarios]]\nname = {json.dumps(scenario)}\n'
            f'{extra_scenario}\n[[tests]]\nname = {json.dumps(test)}\ntest = "cyclic"\n'
            'params = { interval = "1ms" }\n')


def fake_probe(directory: Path, real: Path, lines: list[str | bytes], *, exit_code: int = 0,
               stderr: str = "", sleep_s: int = 0) -> Path:
    """A probe that is the real rtprobe for sysinfo, describe, --version, load and --help; for
    a test prints the given lines (then stderr, sleeps, and exits with exit_code)."""
    data = directory / "fake-lines.bin"
    with data.open("wb") as out:
        for line in lines:
            out.write(line if isinstance(line, bytes) else line.encode())
            out.write(b"\n")
    (directory / "fake-stderr.txt").write_text(stderr, encoding="utf-8")
    path = directory / "fake-rtprobe"
    path.write_text(
        "#!/bin/sh\n"
        f'case "$1" in sysinfo|--version|load|describe|"") exec "{real}" "$@";; esac\n'
        # --help, and the checks before a run (--no-pmqos: the RT permission check,
        # --loops: the --simulate check) go to the real probe too
        f'for a in "$@"; do case "$a" in --help|--no-pmqos|--loops) exec "{real}" "$@";; '
        'esac; done\n'
        f'cat "{data}"\n'
        f'cat "{directory / "fake-stderr.txt"}" >&2\n'
        f"sleep {sleep_s}\n"
        f"exit {exit_code}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _sqlite_path(url: str) -> str:
    """The file of a sqlite:/// URL."""
    assert url.startswith("sqlite:///")
    return url[len("sqlite:///"):]


def _ro(url: str) -> sqlite3.Connection:
    """A read-only connection that writes nothing (also on a read-only file system)."""
    conn = sqlite3.connect(f"file:{_sqlite_path(url)}?mode=ro", uri=True)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
    except sqlite3.OperationalError:  # WAL on a read-only file system: no -shm possible
        conn.close()
        conn = sqlite3.connect(f"file:{_sqlite_path(url)}?immutable=1", uri=True)
    return conn


def db_digest(url: str) -> dict[int, str]:
    """Every stored run (its rows in every table) as a digest, by run id."""
    conn = _ro(url)
    try:
        def rows(query: str, *args: Any) -> list[Any]:
            return sorted(map(repr, conn.execute(query, args).fetchall()))

        out = {}
        for (run_id,) in conn.execute("SELECT id FROM runs").fetchall():
            parts: list[Any] = [rows("SELECT * FROM runs WHERE id = ?", run_id),
                                rows("SELECT h.* FROM hosts h JOIN runs r ON r.host_id = h.id"
                                     " WHERE r.id = ?", run_id),
                                rows("SELECT * FROM scenarios WHERE run_id = ?", run_id)]
            mids = [m for (m,) in conn.execute(
                "SELECT m.id FROM measurements m JOIN scenarios s ON m.scenario_id = s.id "
                "WHERE s.run_id = ?", (run_id,))]
            for mid in sorted(mids):
                parts.append(rows("SELECT * FROM measurements WHERE id = ?", mid))
                for table in ("series", "hist_buckets", "windows", "spikes"):
                    parts.append(rows(f"SELECT * FROM {table} WHERE measurement_id = ?", mid))
            out[int(run_id)] = hashlib.sha256(repr(parts).encode()).hexdigest()
        return out
    finally:
        conn.close()


def run_statuses(url: str) -> dict[int, str]:
    """Status of every stored run, by id."""
    conn = _ro(url)
    try:
        return {int(i): str(st) for i, st in conn.execute("SELECT id, status FROM runs")}
    finally:
        conn.close()


def base_env(tmp: Path, probe: Path, db_url: str) -> dict[str, str]:
    """Environment for an rtbench child or CliRunner: private data dir, probe, database."""
    env = dict(os.environ)
    env.update(XDG_DATA_HOME=str(tmp / "data"), RTBENCH_PROBE=str(probe),
               RTBENCH_DB=db_url, COLUMNS="200")
    env["PYTHONPATH"] = str(REPO) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
