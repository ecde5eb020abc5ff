"""`rtbench fleet` over 8 boards, all the sshd fixture (tests/host/sshd_fixture.py).

A board takes one rtbench run at a time (its lock lives in the board's probe directory),
so the 8 inventory entries reach the one sshd with 8 probe directories (?dir=...).  One
board is made to vanish mid-run: its ssh_config is turned into one that cannot connect
and its control master is killed, as when a board's network dies.
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
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_inprocess import run_in_process
from tests.conftest import REPO
from tests.host.board_helpers import board_probes, static_probe, stored_runs
from tests.host.sshd_fixture import SshBoard, start_board
from tests.parts import needs_part

pytestmark = [
    needs_part("sshd", not Path("/usr/sbin/sshd").exists() or shutil.which("ssh") is None,
               "needs openssh-server and openssh-client"),
    needs_part("root", os.geteuid() != 0, "the sshd fixture runs as root"),
]

BOARDS = 8
VICTIM = "b3"
# scenario 1 measures at once; scenario 2 starts an idle load and lets it settle 8 s
# first: the victim vanishes then.
# Simulated, 12 s of samples take no time and give the 10,000 a p99.9 needs.
SUITE = """
[suite]
name = "fleet-test"
description = "two simulated cyclic measurements, the second after a long settle"

[defaults]
duration = "12s"
warmup = "0s"
settle = "0s"

[[scenarios]]
name = "first"

[[scenarios]]
name = "second"
settle = "8s"
loads = [{ command = "sleep 600" }]     # a settle needs a load; this one costs nothing

[[tests]]
name = "cyclic-1ms"
test = "cyclic"
params = { interval = "1ms", threads = 1 }
"""


@pytest.fixture(scope="module")
def board() -> Iterator[SshBoard]:
    """One sshd board for the whole module."""
    found = start_board()
    try:
        yield found
    finally:
        found.stop()


def inventory(board: SshBoard, tmp_path: Path) -> Path:
    """8 entries for the one board, each with its own probe directory and ssh_config."""
    port = f":{board.port}" if board.port != 22 else ""
    entries = []
    for i in range(1, BOARDS + 1):
        config = tmp_path / f"ssh_config.b{i}"
        config.write_text(board.config.read_text())
        entries.append(f'[[targets]]\nname = "b{i}"\n'
                       f'uri = "ssh://root@{board.address}{port}?dir={board.home}/b{i}"\n'
                       f'tags = {{ rack = "{i % 2}" }}\narch = "x86_64"\n'
                       f'ssh_config = "{config}"\n')
    path = tmp_path / "lab.toml"
    path.write_text("\n".join(entries))
    return path


def victim_measured(db: Path) -> bool:
    """True once the victim's run has its first measurement stored (asked every 0.2 s:
    one read-only query, not every stored run read back through the store)."""
    if not db.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        tags_of_measured = conn.execute(
            "SELECT r.tags FROM runs r JOIN scenarios s ON s.run_id = r.id "
            "JOIN measurements m ON m.scenario_id = s.id").fetchall()
    except sqlite3.Error:  # the schema may not be there yet
        return False
    finally:
        conn.close()
    return any(json.loads(tags).get("board") == VICTIM for (tags,) in tags_of_measured)


def cut_off(config: Path) -> None:
    """The victim's board vanishes: no new connection, its control master killed."""
    config.write_text(config.read_text() + "  ProxyCommand /bin/false\n")
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"ssh") and b"-M" in argv and str(config).encode() in argv:
            os.kill(int(pid), signal.SIGKILL)


def test_fleet_of_eight_keeps_going_when_one_board_is_lost(board: SshBoard,
                                                           tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    db = tmp_path / "fleet.db"
    report = tmp_path / "fleet.html"
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "COLUMNS": "160",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("RTBENCH_DB", None)
    env["RTBENCH_PROBE"] = str(static_probe())   # not a Zig build (tests/host/board_helpers.py)
    path = inventory(board, tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "rtbench", "fleet", str(path), str(suite),
                             "--simulate", "7", "--db", str(db), "--fleet-id", "night-1",
                             "--report", str(report)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while not victim_measured(db) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        cut_off(tmp_path / f"ssh_config.{VICTIM}")
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 3, out + err      # the worst board's: lost
    runs = stored_runs(db)
    assert len(runs) == BOARDS
    assert {r.tags["fleet"] for r in runs} == {"night-1"}
    assert sorted(r.tags["board"] for r in runs) == [f"b{i}" for i in range(1, BOARDS + 1)]
    assert all(r.tags["rack"] in ("0", "1") and r.simulated for r in runs)
    for run in runs:
        measurements = [m for sc in run.scenarios for m in sc.measurements]
        if run.tags["board"] == VICTIM:
            assert run.status == "lost"
            # what ran kept its windows; what never started is stored as such (issue 24)
            started = [m for m in measurements if m.status != "not started"]
            assert started and all(m.windows for m in started)
            assert all(not m.windows for m in measurements if m.status == "not started")
        else:
            assert run.status == "ok", (run.tags, run.status, out[-3000:], err[-2000:])
            assert len(measurements) == 2
    # the summary: every board, the victim lost; the HTML report names every board
    for i in range(1, BOARDS + 1):
        assert f" b{i} " in out
    assert f"{VICTIM}: lost" in out
    assert "7 of 8 boards ok, exit 3" in out
    b1_rows = [line for line in out.splitlines() if " b1 " in line and "first" in line]
    assert b1_rows and b1_rows[0].count(".") >= 2, out   # worst p99.9 and max, in us
    html = report.read_text()
    assert all(f"<td>b{i}</td>" in html for i in range(1, BOARDS + 1))
    assert "fleet=night-1" in html


def test_board_reads_the_sampled_files_in_one_command(board: SshBoard) -> None:
    """The 1 s /proc sample is one session on each board of a fleet, not three."""
    from rtbench.targets.base import TargetError, open_target
    from rtbench.targets.procstat import SAMPLED_FILES

    with open_target(board.uri, provider=board_probes(),
                     options={"ssh_config": str(board.config)}) as target:
        texts = target.read_files(list(SAMPLED_FILES))
        assert [t.splitlines()[0].split()[0] for t in texts[:1]] == ["cpu"]
        assert texts[2] == target.read_file("/proc/loadavg") or texts[2].count(" ") == 4
        assert texts[1].splitlines()[0] == target.read_file("/proc/interrupts").splitlines()[0]
        with pytest.raises(TargetError, match="cannot read /proc/stat /nonexistent"):
            target.read_files(["/proc/stat", "/nonexistent"])


def test_board_of_another_arch_is_not_run(board: SshBoard, tmp_path: Path) -> None:
    """arch in the inventory guards against a uri that reaches the wrong board."""
    port = f":{board.port}" if board.port != 22 else ""
    path = tmp_path / "lab.toml"
    path.write_text(f'[[targets]]\nname = "wrong"\narch = "aarch64"\nssh_config = '
                    f'"{board.config}"\nuri = "ssh://root@{board.address}{port}'
                    f'?dir={board.home}/wrong"\n')
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "COLUMNS": "160",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("RTBENCH_DB", None)
    env["RTBENCH_PROBE"] = str(static_probe())
    db = tmp_path / "fleet.db"
    # in this process (tests/cli_inprocess.py): the fleet's start-up is not the subject
    done = run_in_process(["fleet", str(path), "smoke", "--simulate", "7", "--db", str(db),
                           "--no-report"], env, REPO, timeout=240)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "wrong: error: the board reports arch x86_64, the inventory says aarch64" \
        in done.stdout
    (row,) = stored_runs(db)  # the board's history keeps the failed night, with why
    assert row.status == "error" and row.scenarios == []
    assert "the inventory says aarch64" in (row.reason or "")
