"""The local target on the Target interface: URIs, pinning through the launcher gate,
short commands, files, and the stdin lifeline."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from rtbench.rtprobe.provider import Probes
from rtbench.targets import LocalTarget, TargetError, TargetUsageError, open_target
from rtbench.targets.base import target_schemes
from tests.conftest import RunCli, pids_with, wait_until_gone

LAST_CPU = max(os.sched_getaffinity(0))


def stand_in(tmp_path: Path, body: str) -> Path:
    """An executable shell script playing rtprobe."""
    path = tmp_path / "rtprobe"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def output_of(proc: object, timeout_s: float = 5.0) -> str:
    """Everything a started process printed on stdout until EOF."""
    from rtbench.targets.base import ProbeProcess

    assert isinstance(proc, ProbeProcess)
    chunks = []
    end = time.monotonic() + timeout_s
    while not proc.at_eof() and time.monotonic() < end:
        out, _ = proc.read_available()
        chunks.append(out)
        time.sleep(0.02)
    return b"".join(chunks).decode()


def test_open_target_by_uri(tmp_path: Path) -> None:
    probe = stand_in(tmp_path, "exit 0\n")
    target = open_target(None, provider=Probes(probe))
    assert isinstance(target, LocalTarget) and target.name == "local"
    assert "local" in target_schemes()
    with pytest.raises(TargetUsageError, match="unknown scheme"):
        open_target("bogus://x", provider=Probes(probe))
    with pytest.raises(TargetUsageError, match="takes no address"):
        LocalTarget.from_uri("local:x", provider=Probes(probe))


def test_probe_is_pinned_before_it_starts(tmp_path: Path) -> None:
    probe = stand_in(tmp_path, "grep Cpus_allowed_list /proc/self/status\n")
    target = LocalTarget(probe)
    proc = target.start_probe([], cpus=str(LAST_CPU))
    text = output_of(proc)
    proc.stop()
    assert text.split(":")[1].strip() == str(LAST_CPU)
    assert proc.poll() == 0


def test_command_load_is_pinned_and_stops_with_its_group(tmp_path: Path) -> None:
    marker = f"rtbench-test-{uuid.uuid4().hex}"
    out = tmp_path / "cpus"
    target = LocalTarget(stand_in(tmp_path, "exit 0\n"))
    proc = target.start_command(
        # written under another name and renamed: the file appears whole (the shell's
        # redirection makes it empty before grep writes)
        f"grep Cpus_allowed_list /proc/self/status > {out}.part; mv {out}.part {out}; "
        f"sleep 30; : {marker}",
        cpus=str(LAST_CPU))
    end = time.monotonic() + 5
    while not out.exists() and time.monotonic() < end:
        time.sleep(0.05)
    assert out.read_text().split(":")[1].strip() == str(LAST_CPU)
    assert pids_with(marker)
    # closing the lifeline (what happens when rtbench dies) kills the whole group
    assert proc.proc.stdin is not None
    proc.proc.stdin.close()
    assert wait_until_gone(marker, 3.0) == []
    proc.stop()


def test_bad_cpus_is_one_target_error(tmp_path: Path) -> None:
    target = LocalTarget(stand_in(tmp_path, "exit 0\n"))
    with pytest.raises(TargetError, match="cannot pin to CPUs 4096"):
        target.start_probe([], cpus="4096")


def test_short_commands_files_and_probe_questions(tmp_path: Path) -> None:
    probe = stand_in(tmp_path, 'if [ "$1" = --version ]; then echo "rtprobe 9.8.7"; '
                               'else echo "--duration --simulate"; fi\n')
    target = LocalTarget(probe)
    done = target.run("echo hi; echo err >&2; exit 3")
    assert (done.returncode, done.stdout, done.stderr) == (3, "hi\n", "err\n")
    with pytest.raises(TargetError, match="no answer in 0.2 s"):
        target.run("sleep 5", timeout_s=0.2)
    assert target.probe_version() == "9.8.7"
    assert target.run_probe(["describe", "--json"]).stdout == "--duration --simulate\n"
    assert target.probe_path() == str(probe)
    assert target.arch() == os.uname().machine
    copy = tmp_path / "sub" / "copy"
    target.put_file(probe, str(copy), mode=0o700)
    assert copy.read_bytes() == probe.read_bytes()
    assert copy.stat().st_mode & 0o777 == 0o700
    assert "cpu" in target.read_file("/proc/stat")
    with pytest.raises(TargetError, match="/no/such/file"):
        target.read_file("/no/such/file")


def test_cli_target_option(run_cli: RunCli, tmp_path: Path) -> None:
    done = run_cli("run", "smoke", "--target", "nosuch://board", "--db",
                   f"sqlite:///{tmp_path / 'r.db'}")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "unknown scheme 'nosuch'" in done.stderr
    assert not (tmp_path / "r.db").exists()
    assert "local" in run_cli("run", "--help").stdout


def test_command_loads_stopped_together_take_their_escapees(tmp_path: Path) -> None:
    # each load leaves a setsid'ed sleep outside its process group; stop_commands kills the
    # groups and, in one sweep for all their tags, whatever escaped them
    target = LocalTarget(stand_in(tmp_path, "exit 0\n"))
    marker = uuid.uuid4().hex
    base = 8_000_000 + int(marker[:5], 16)  # the escapees' sleeps, unique to this test
    procs = [target.start_command(f"setsid sleep {base + i} & : {marker}; sleep 300")
             for i in range(3)]
    end = time.monotonic() + 10
    while any(not pids_with(f"sleep {base + i}") for i in range(3)) \
            and time.monotonic() < end:
        time.sleep(0.05)
    assert all(pids_with(f"sleep {base + i}") for i in range(3))
    target.stop_commands(procs)
    assert all(proc.poll() is not None for proc in procs)
    assert wait_until_gone(marker, 3.0) == []
    assert [pid for i in range(3) for pid in pids_with(f"sleep {base + i}")] == []
