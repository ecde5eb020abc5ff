"""rtprobe cyclic on the real machine: counts, schema, exit codes 0/1/3/4, modes.

Latencies on a shared VM are noise: these tests assert behaviour, counts and
formats, never latency values.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from jsonschema.protocols import Validator
from probe_support import ProbeRun, RunProbe, needs_root, parse_ndjson

from tests.parts import needs_part, require_part
from tests.session_lock import session_lock

NCPU = len(os.sched_getaffinity(0))
UNPRIVILEGED = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")


@needs_root
def test_five_seconds_default_run(run_probe: RunProbe, validator: Validator) -> None:
    run = run_probe("cyclic", "--duration", "5s", timeout=30)
    assert run.rc == 0, run.stderr
    assert run.stderr == "", "no human text on a non-TTY stderr without --verbose"
    for rec in run.records:
        errors = [e.message for e in validator.iter_errors(rec)]
        assert not errors, (rec["type"], errors[:3])
    start = run.start
    assert start["rt"]["policy"] == "fifo" and start["rt"]["priority"] == 80
    assert start["rt"]["mlockall"] is True
    assert start["common"]["threads"] == NCPU
    assert [s["cpu"] for s in start["series"]] == sorted(os.sched_getaffinity(0))
    result = run.result
    assert result["status"] == "ok" and result["exit_code"] == 0
    assert len(result["series"]) == NCPU
    for series in result["series"]:
        assert 4000 <= series["count"] <= 5000
        # A deadline is sampled, counted as overrun, or lies in a gap (the thread
        # was still being set up), never lost.
        warm = series["warmup"]
        assert series["count"] + series["overruns"] + series["gap_ns"] // 1_000_000 == 5000
        assert 800 <= warm["count"] <= 1000
        assert warm["count"] + warm["overruns"] + warm["gap_ns"] // 1_000_000 == 1000
        mine = [w for w in run.windows if w["series"] == series["index"]]
        assert mine[0]["warmup"] is True and mine[0]["index"] == 0
        assert all(not w["warmup"] for w in mine[1:])
        assert sum(w["count"] for w in mine if not w["warmup"]) == series["count"]


@needs_root
def test_threshold_crossed_exits_1(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--duration", "1s", "--warmup", "0", "--threshold", "1ns",
                    timeout=20)
    assert run.rc == 1
    result = run.result
    assert result["status"] == "fail" and result["exit_code"] == 1
    assert result["verdicts"][0]["pass"] is False
    for series in result["series"]:
        assert series["exceed"][0]["count"] == series["count"]


@needs_root
def test_no_rt_permission_exits_3_with_remedy(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--duration", "1s", prefix=UNPRIVILEGED, timeout=20,
                    measures=False)
    assert run.rc == 3
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "CAP_SYS_NICE" in lines[0] and "--policy other" in lines[0]
    assert run.stdout == ""


@needs_root
def test_policy_other_runs_unprivileged(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--duration", "1s", "--warmup", "0", "--policy", "other",
                    prefix=UNPRIVILEGED, timeout=20)
    assert run.rc == 0, run.stderr
    assert run.start["rt"]["policy"] == "other"
    assert run.start["rt"]["pmqos"]["held"] is False
    assert run.result["status"] == "ok"


@needs_root
def test_sigint_exits_4_and_keeps_windows(rtprobe: Path) -> None:
    # Priority 95: other FIFO 80 work on this shared machine must not starve us; and one
    # real measurement at a time across the workers (a 1.6 s measured window is counted)
    with session_lock("realtime"):
        proc = subprocess.Popen([str(rtprobe), "cyclic", "--duration", "30s", "--priority",
                                 "95"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        time.sleep(2.6)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 4, err
    run = ProbeRun(proc.returncode, parse_ndjson(out), out, err)
    result = run.result
    assert result["status"] == "interrupted" and result["exit_code"] == 4
    for series in result["series"]:
        mine = [w for w in run.windows if w["series"] == series["index"]]
        indices = [w["index"] for w in mine]
        # Warm-up window 0 and measured window 1 were finished before SIGINT.
        assert indices[:2] == [0, 1]
        assert indices == list(range(len(indices)))
        assert sum(w["count"] for w in mine if not w["warmup"]) == series["count"]
        assert series["count"] > 900


@needs_root
def test_tiny_interval_counts_overruns(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--interval", "5us", "--duration", "1s", "--warmup", "0",
                    "--threads", "1", timeout=30)
    assert run.rc == 0, run.stderr
    series = run.result["series"][0]
    assert series["overruns"] > 0
    assert sum(w["overruns"] for w in run.windows) == series["overruns"]
    # Every deadline of the second is accounted for (sampled or overrun).
    # deadlines that passed while the thread was being set up are a gap
    periods = series["count"] + series["overruns"] + series["gap_ns"] // 5000
    assert periods == pytest.approx(200_000, abs=2)


@needs_root
def test_loops_gives_exact_count(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--loops", "300", "--interval", "500us", "--warmup", "100ms",
                    timeout=20)
    assert run.rc == 0
    for series in run.result["series"]:
        assert series["count"] == 300
        assert series["count"] + series["overruns"] >= 300


@needs_root
@pytest.mark.parametrize("mode", ["abs", "rel", "itimer", "timerfd"])
def test_each_timer_mode_runs(run_probe: RunProbe, mode: str) -> None:
    run = run_probe("cyclic", "--mode", mode, "--duration", "1s", "--warmup", "0",
                    "--interval", "1ms", timeout=20)
    assert run.rc == 0, run.stderr
    assert run.start["params"] == {"interval_ns": 1_000_000, "mode": mode}
    for series in run.result["series"]:
        # deadlines that passed while the thread was still being set up are a gap
        periods = series["count"] + series["overruns"] + series["gap_ns"] // 1_000_000
        if mode in ("abs", "timerfd"):
            assert periods == pytest.approx(1000, abs=2)
        else:
            # rel and itimer came short of the duration's 1000 periods in CI when the
            # host stalled this VM (995 and 961; 982 once before): a count that depends
            # on a stall is a latency, not asserted here; never more periods than fit
            assert periods <= 1002
        assert series["count"] >= 500


@needs_root
def test_verbose_prints_live_lines(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--duration", "1s", "--warmup", "0", "--verbose", timeout=20)
    assert run.rc == 0
    assert any("measured" in line and "max" in line for line in run.stderr.splitlines())


@needs_root
def test_output_appears_only_when_done(rtprobe: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.ndjson"
    proc = subprocess.Popen([str(rtprobe), "cyclic", "--duration", "1s", "--warmup", "0",
                             "--output", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    assert not out.exists()
    temps = [p for p in tmp_path.iterdir() if p.name.startswith("run.ndjson.")]
    assert len(temps) == 1
    stdout, _ = proc.communicate(timeout=15)
    assert proc.returncode == 0 and stdout == ""
    assert [p.name for p in tmp_path.iterdir()] == ["run.ndjson"]
    records = parse_ndjson(out.read_text())
    assert records[0]["type"] == "start" and records[-1]["type"] == "result"


@needs_root
def test_break_on_without_tracefs_exits_3(run_probe: RunProbe) -> None:
    if any(Path(d, "tracing_on").exists()
           for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")):
        # not a part: this test needs tracefs absent (test_..._in_a_namespace covers CI)
        pytest.skip("tracefs is mounted here")
    run = run_probe("cyclic", "--duration", "1s", "--break-on", "100us", timeout=20)
    assert run.rc == 3
    assert "tracefs" in run.stderr and "mount" in run.stderr


@needs_root
@needs_part("util-linux", shutil.which("unshare") is None, "unshare missing")
def test_break_on_stops_ftrace(rtprobe: Path, tmp_path: Path) -> None:
    # A private mount of tracefs; tracing_on itself is global, so restore it.
    script = (
        "set -e; mnt=/sys/kernel/tracing; "
        "[ -e $mnt/tracing_on ] || mount -t tracefs nodev $mnt; "
        "old=$(cat $mnt/tracing_on); echo > $mnt/trace; echo 1 > $mnt/tracing_on; "
        f"set +e; {rtprobe} cyclic --duration 2s --warmup 0 --break-on 1ns > out.ndjson; "
        "rc=$?; echo rc=$rc; echo on=$(cat $mnt/tracing_on); "
        "grep -c 'rtprobe: break-on' $mnt/trace || true; echo $old > $mnt/tracing_on"
    )
    with session_lock("tracefs"):  # tracing_on is global: not while a --trace test runs
        done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                              text=True, timeout=30, cwd=tmp_path, check=False)
    if "mount" in done.stderr and "rc=" not in done.stdout:
        require_part("tracefs", f"cannot mount tracefs: {done.stderr.strip()}")
    lines = done.stdout.split()
    assert "rc=1" in lines, done.stdout + done.stderr
    assert "on=0" in lines
    assert lines[-1] == "1"  # one marker line in the trace



@needs_root
@needs_part("util-linux", shutil.which("unshare") is None, "unshare missing")
@pytest.mark.parametrize("mode", ["abs", "itimer", "timerfd"])
def test_break_on_continue_is_a_gap(rtprobe: Path, tmp_path: Path, mode: str) -> None:
    """The deadlines that pass while --break-on writes to tracefs are one gap spanning
    their periods (samples + overruns + gap_ns / interval = deadlines), in every timer
    mode: neither overruns nor a late sample.  The writes take tens of µs, several
    5-µs periods; the warm-up holds the thread's set-up gap."""
    interval_ns = 5_000
    script = (
        "set -e; mnt=/sys/kernel/tracing; "
        "[ -e $mnt/tracing_on ] || mount -t tracefs nodev $mnt; "
        "old=$(cat $mnt/tracing_on); echo 1 > $mnt/tracing_on; "
        f"set +e; {rtprobe} cyclic --cpus {sorted(os.sched_getaffinity(0))[-1]} "
        f"--mode {mode} --interval 5us --warmup 100ms --duration 500ms --priority 95 "
        "--break-on 1ns --break-action continue > out.ndjson; "
        "rc=$?; echo rc=$rc; echo $old > $mnt/tracing_on"
    )
    with session_lock("tracefs"):  # tracing_on is global: not while a --trace test runs
        done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                              text=True, timeout=30, cwd=tmp_path, check=False)
    if "mount" in done.stderr and "rc=" not in done.stdout:
        require_part("tmpfs", f"cannot mount tracefs: {done.stderr.strip()}")
    assert "rc=0" in done.stdout.split(), done.stdout + done.stderr
    result = parse_ndjson((tmp_path / "out.ndjson").read_text())[-1]
    assert result["status"] == "ok"
    (series,) = result["series"]
    assert series["gaps"] == 1, series
    periods = series["count"] + series["overruns"] + series["gap_ns"] // interval_ns
    assert periods == result["measured_ns"] // interval_ns
