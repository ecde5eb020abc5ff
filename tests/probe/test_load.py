"""rtprobe load KIND: rates reached, records, strict input, clean-up, no orphans."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema.protocols import Validator
from probe_support import RunProbe, assert_valid, parse_ndjson, validate_records

KINDS = ["cpu", "sched", "mem", "io", "net", "timer", "build"]

# (kind, arguments): every kind's achieved rate must land within +-20 % of its target
# (docs/design.md: a load is defined by the rate it reaches); the cpu load may fall
# short only when it reports why (see the test).  The targets are what
# this 2-vCPU KVM guest, shared by several busy jobs (load average 10+), reaches with a
# wide margin: measured 99-100 % of target for each of them over 3 s runs, with sched at
# 5000 msg/s and timer at 5000/s too, so 2000/s leaves the CPU time a stalled VM needs.
# io writes 2 MB/s (8 x 256 KiB files a second, fsynced) and walks 1000 entries/s: far
# below what even an SD card or a loaded tmpfs sustains.
MODERATE = [
    ("cpu", ["--rate", "30", "--cpus", "1"]),
    ("mem", ["--rate", "200", "--cpus", "1"]),
    ("net", ["--rate", "5000"]),
    ("sched", ["--rate", "2000", "--groups", "1", "--fds", "2"]),
    ("io", ["--rate", "2", "--walk", "1000", "--file-size", "256K"]),
    ("timer", ["--rate", "2000", "--timers", "4"]),
]

BAD_INPUT = [
    (["cpu", "--rate", "0"], "--rate"),
    (["cpu", "--rate", "101"], "--rate"),
    (["cpu", "--rate", "-5"], "--rate"),
    (["cpu", "--rate", "fast"], "--rate"),
    (["cpu"], "--rate"),
    (["mem", "--rate", "0"], "--rate"),
    (["net", "--rate", "nan"], "--rate"),
    (["net", "--rate", "100", "--target", "10.0.0.1:9"], "--target"),
    (["net", "--rate", "100", "--target", "[2001:db8::1]:9"], "--target"),
    (["net", "--rate", "100", "--target", "127.0.0.1"], "--target"),
    (["net", "--rate", "100", "--target", "127.0.0.1:0"], "--target"),
    (["net", "--rate", "100", "--target", "127.0.0.1:70000"], "--target"),
    (["net", "--rate", "100", "--target", "localhost:9"], "--target"),
    (["net", "--rate", "100", "--target", "127.0.0.01:9"], "--target"),
    (["net", "--rate", "100", "--target", "[::1::]:9"], "--target"),
    (["net", "--rate", "100", "--target", "[::127.0.0.1.]:9"], "--target"),
    (["net", "--rate", "100", "--size", "70000"], "--size"),
    (["io", "--rate", "1"], "--dir"),
    (["io", "--rate", "1", "--dir", "/nonexistent/rtprobe"], "--dir"),
    (["timer", "--rate", "10000000", "--timers", "2"], "--rate"),
    (["cpu", "--rate", "10", "--dir", "/tmp"], "--dir"),
    (["cpu", "--rate", "10", "--cpus", "0-4095"], "--cpus"),
    (["cpu", "--rate", "10", "--duration", "0"], "--duration"),
    (["cpu", "--rate", "10", "--period", "1ns"], "--period"),
    (["sched", "--rate", "10", "--fds", "0"], "--fds"),
    (["bogus", "--rate", "1"], "bogus"),
]


def live_group_members(pgid: int) -> list[int]:
    """Processes of a process group that are not zombies (zombies are dead)."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        state, group = fields[0], int(fields[2])
        if group == pgid and state not in ("Z", "X"):
            alive.append(int(entry))
    return alive


def start_load(rtprobe: Path, *args: str) -> tuple[subprocess.Popen[str], dict[str, object]]:
    """Start a load in its own session and return it once its start record is out."""
    proc = subprocess.Popen([str(rtprobe), "load", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout is not None
    start = json.loads(proc.stdout.readline())
    assert start["type"] == "start"
    return proc, start


@pytest.mark.parametrize(("kind", "args"), MODERATE, ids=[m[0] for m in MODERATE])
def test_each_kind_reaches_a_moderate_rate(run_probe: RunProbe, validator: Validator,
                                           tmp_path: Path, kind: str,
                                           args: list[str]) -> None:
    extra = ["--dir", str(tmp_path)] if kind == "io" else []
    run = run_probe("load", kind, *args, *extra, "--duration", "3s", timeout=20)
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    assert run.start["test"] == "load" and run.start["load"] == kind
    assert run.start["params"]["rate"] == float(args[1])
    rates = run.by_type["rate"]
    assert [r["index"] for r in rates] == list(range(len(rates)))
    assert 2 <= len(rates) <= 3
    assert all(r["load"] == kind and r["unit"] == run.result["unit"] for r in rates)
    result = run.result
    assert result["status"] == "ok" and result["exit_code"] == 0
    assert result["target"] == float(args[1])
    assert result["achieved"] > 0
    assert sum(result["data"]["counters"].values()) > 0
    assert 2.9e9 <= result["elapsed_ns"] <= 4e9
    assert result["achieved"] <= 1.2 * result["target"], result
    if kind == "cpu" and result["achieved"] < 0.8 * result["target"]:
        # The cpu load counts only the CPU time its worker really got: when other jobs
        # share that CPU (this machine: load average 10+ at times) it falls short, and
        # then it must say so by the periods it could not finish (missed_periods).
        assert result["data"]["counters"]["missed_periods"] > 0, result
    else:
        assert result["achieved"] >= 0.8 * result["target"], result
    if kind == "io":
        walk = result["data"]["walk"]
        assert 0.8 * walk["target"] <= walk["achieved"] <= 1.2 * walk["target"], walk
        assert list(tmp_path.iterdir()) == [], "io left files behind"


def test_rate_counters_add_up_to_the_result(run_probe: RunProbe) -> None:
    run = run_probe("load", "net", "--rate", "2000", "--duration", "2s", timeout=15)
    assert run.rc == 0, run.stderr
    per_second = sum(r["counters"]["packets_sent"] for r in run.by_type["rate"])
    total = run.result["data"]["counters"]["packets_sent"]
    assert per_second <= total
    assert run.result["data"]["counters"]["packets_received"] > 0
    assert run.start["params"]["own_receiver"] is True
    assert run.start["params"]["target"].startswith("127.0.0.1:")


def test_net_sends_to_an_ipv6_loopback_target(run_probe: RunProbe) -> None:
    """A bracketed IPv6 --target is parsed and the packets reach a socket there."""
    try:
        receiver = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    except OSError:
        pytest.skip("no IPv6 sockets here")  # not a part: the kernel's IPv6
    with receiver:
        try:
            receiver.bind(("::1", 0))
        except OSError:
            pytest.skip("no IPv6 loopback address here")  # not a part: the network
        receiver.settimeout(5)
        port = receiver.getsockname()[1]
        run = run_probe("load", "net", "--rate", "200", "--duration", "1s",
                        "--target", f"[0:0::1]:{port}", timeout=15)
        assert run.rc == 0, run.stderr
        assert run.result["data"]["counters"]["packets_sent"] > 0
        assert receiver.recv(65536)


def test_rate_max_runs_flat_out_without_a_target(run_probe: RunProbe,
                                                 validator: Validator) -> None:
    run = run_probe("load", "timer", "--rate", "max", "--timers", "2", "--duration", "1s",
                    timeout=15)
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    assert run.start["params"]["rate"] is None and run.start["params"]["rate_max"] is True
    assert "target" not in run.result and run.result["rate_max"] is True
    assert run.result["achieved"] > 0


def test_output_file_instead_of_stdout(run_probe: RunProbe, tmp_path: Path) -> None:
    out = tmp_path / "load.ndjson"
    run = run_probe("load", "cpu", "--rate", "10", "--cpus", "0", "--duration", "1s",
                    "--output", str(out), parse=False, timeout=15)
    assert run.rc == 0, run.stderr
    assert run.stdout == ""
    types = [json.loads(line)["type"] for line in out.read_text().splitlines()]
    assert types[0] == "start" and types[-1] == "result" and "rate" in types
    assert sorted(p.name for p in tmp_path.iterdir()) == ["load.ndjson"]


@pytest.mark.parametrize(("args", "option"), BAD_INPUT)
def test_bad_input_exits_2_naming_what_was_wrong(run_probe: RunProbe, args: list[str],
                                                 option: str) -> None:
    run = run_probe("load", *args, "--duration", "1s", timeout=10, measures=False)
    assert run.rc == 2
    assert run.records == []
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0], run.stderr


@settings(max_examples=20, deadline=None)
@given(st.tuples(st.integers(1, 126), st.integers(0, 255), st.integers(0, 255),
                 st.integers(1, 254), st.integers(1, 65535)))
def test_non_loopback_targets_are_refused_before_sending(
        rtprobe: Path, addr: tuple[int, int, int, int, int]) -> None:
    # Refused while parsing: exit 2 before any socket exists, nothing is sent.
    target = "{}.{}.{}.{}:{}".format(*addr)
    done = subprocess.run([str(rtprobe), "load", "net", "--rate", "10", "--target", target],
                          capture_output=True, text=True, timeout=10, check=False)
    assert done.returncode == 2
    assert "--allow-remote" in done.stderr and done.stdout == ""


def test_help_lists_every_kind(run_probe: RunProbe) -> None:
    run = run_probe("load", "--help", parse=False)
    assert run.rc == 0
    for kind in KINDS:
        assert f"  {kind} " in run.stdout
        kind_help = run_probe("load", kind, "--help", parse=False)
        assert kind_help.rc == 0 and "--rate" in kind_help.stdout


@pytest.mark.parametrize("kind_args", [
    ["sched", "--rate", "2000", "--processes"],
    ["sched", "--rate", "2000", "--threads", "--pipe"],
    ["cpu", "--rate", "20"],
    ["net", "--rate", "1000"],
], ids=["sched-processes", "sched-threads", "cpu", "net"])
def test_sigkill_of_the_load_leaves_no_process(rtprobe: Path, kind_args: list[str]) -> None:
    proc, start = start_load(rtprobe, *kind_args, "--duration", "30s")
    params = start["params"]
    assert isinstance(params, dict)
    pgid = params["pgid"]
    assert pgid == proc.pid  # its own process group
    time.sleep(0.5)
    if kind_args[-1] == "--processes":
        assert len(live_group_members(pgid)) > 1  # the forked workers exist
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=5)
    deadline = time.monotonic() + 2.0
    while live_group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert live_group_members(pgid) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_io_signal_writes_interrupted_result_and_removes_its_files(
        rtprobe: Path, validator: Validator, tmp_path: Path, sig: signal.Signals) -> None:
    proc, start = start_load(rtprobe, "io", "--rate", "5", "--walk", "1000",
                             "--dir", str(tmp_path))
    params = start["params"]
    assert isinstance(params, dict)
    work_dir = Path(str(params["work_dir"]))
    assert work_dir.parent == tmp_path
    time.sleep(1.3)
    assert work_dir.is_dir() and any(work_dir.iterdir())
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 4, err
    records = parse_ndjson(out)
    validate_records(records, validator)
    result = records[-1]
    assert result["type"] == "result"
    assert result["status"] == "interrupted" and result["exit_code"] == 4
    assert result["reason"] == sig.name
    assert list(tmp_path.iterdir()) == []
    assert live_group_members(proc.pid) == []


def rss_kib(pid: int) -> int:
    """VmRSS of a live process in KiB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines()
                 if line.startswith("VmRSS:")), 0)


def test_mem_stopped_while_touching_its_buffer_ends_at_once(rtprobe: Path,
                                                            validator: Validator) -> None:
    # 8 GiB take this machine seconds to touch; a stop while it touches ends the load at
    # once instead of after the whole buffer (a scenario's stop used to wait for it)
    proc = subprocess.Popen([str(rtprobe), "load", "mem", "--rate", "10", "--buffer", "8G"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while rss_kib(proc.pid) < 128 * 1024 and time.monotonic() < deadline:
        assert proc.poll() is None
        time.sleep(0.01)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    took_s = time.monotonic() - sent
    assert proc.returncode == 4, err
    records = parse_ndjson(out)
    validate_records(records, validator)
    assert records[-1]["status"] == "interrupted" and records[-1]["reason"] == "SIGINT"
    assert records[-1]["footprint"]["peak_rss_kib"] < 4 * 1024 * 1024
    assert took_s < 3.0, took_s


@pytest.mark.parametrize("kind_args", [
    ["cpu", "--rate", "20"],
    ["sched", "--rate", "2000", "--processes"],
], ids=["cpu-threads", "sched-processes"])
def test_load_threads_are_named_as_the_load(rtprobe: Path, kind_args: list[str]) -> None:
    # issue 34: a trace names them "rtbench load KIND" from their comm, not "rtprobe"
    proc, start = start_load(rtprobe, *kind_args, "--duration", "30s")
    try:
        time.sleep(0.3)
        pids = [proc.pid, *live_group_members(proc.pid)]
        comms = {Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
                 for pid in pids for tid in os.listdir(f"/proc/{pid}/task")}
        assert comms == {f"rtload-{kind_args[0]}"}, comms
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=10)
