"""tracefs put back after a killed probe or rtbench, and after rtprobe mounted it itself
(issue 36, items 2 and 8), on this machine's real tracefs.

Skipped only where tracefs cannot be used (not root, no tracefs).  tracefs is global:
every test holds the "tracefs" lock and checks tracefs is as before afterwards; the one
that unmounts tracefs does so in a private mount namespace of its own (unshare -m).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from probe_support import needs_root

from tests.parts import needs_part
from tests.session_lock import session_lock

TRACEFS = Path("/sys/kernel/tracing")
MEASURED_CPU = max(os.sched_getaffinity(0))
needs_tracefs = needs_part("tracefs", not (TRACEFS / "tracing_on").exists(),
                           "tracefs not mounted at /sys/kernel/tracing")


def tracefs_state() -> dict[str, str]:
    """What rtprobe changes in tracefs, as these tests compare it."""
    state = {name: (TRACEFS / name).read_text().strip()
             for name in ("tracing_on", "trace_clock", "current_tracer", "events/enable")}
    kb = (TRACEFS / "buffer_size_kb").read_text().split("expanded: ")[-1].rstrip(")\n")
    state["buffer_size_kb"] = str(int(kb.split()[0]) // 8)  # rounded to its pages
    return state


@pytest.fixture()
def guard(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Hold the tracefs lock, check tracefs is as before afterwards; yield an env with a
    private state directory."""
    with session_lock("tracefs"):
        if (TRACEFS / "events/enable").read_text().strip() != "0":
            (TRACEFS / "events/enable").write_text("0")  # what a killed run left
        before = tracefs_state()
        yield dict(os.environ, RTPROBE_STATE_DIR=str(tmp_path))
        assert tracefs_state() == before
        assert not (tmp_path / "rtprobe-trace.state").exists()


def wait_for(path: Path, exists: bool, seconds: float) -> bool:
    """Wait until path exists (or is gone); whether it happened in time."""
    deadline = time.monotonic() + seconds
    while path.exists() != exists and time.monotonic() < deadline:
        time.sleep(0.05)
    return path.exists() == exists


@needs_root
@needs_tracefs
def test_rtbench_restores_what_a_killed_probe_left(rtprobe: Path, guard: dict[str, str],
                                                   tmp_path: Path) -> None:
    """rtprobe --trace SIGKILLed leaves the kernel tracing and its state file; the next
    rtbench command that opens the database (`ls`) puts tracefs back and says so."""
    before = tracefs_state()
    state_file = tmp_path / "rtprobe-trace.state"
    db = f"sqlite:///{tmp_path / 'r.db'}"
    env = {**guard, "RTBENCH_DB": db, "XDG_DATA_HOME": str(tmp_path / "xdg")}
    made = subprocess.run([sys.executable, "-m", "rtbench", "db", "migrate"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert made.returncode == 0, made.stderr
    with session_lock("realtime"):
        proc = subprocess.Popen([str(rtprobe), "cyclic", "--cpus", str(MEASURED_CPU),
                                 "--duration", "30s", "--trace=on", "--output",
                                 str(tmp_path / "o")], env=guard, stderr=subprocess.PIPE,
                                text=True)
        if not wait_for(state_file, True, 20):
            proc.kill()
            _, said = proc.communicate(timeout=10)
            pytest.fail(f"rtprobe --trace=on did not start tracing: {said.strip()}")
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert tracefs_state() != before  # the kernel is left tracing
    listed = subprocess.run([sys.executable, "-m", "rtbench", "ls"], env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert listed.returncode == 0, listed.stderr
    assert f"restored the tracefs state left by rtprobe pid {proc.pid} (it died)" in \
        listed.stderr
    assert not state_file.exists() and tracefs_state() == before


@needs_root
@needs_tracefs
def test_killed_rtbench_run_trace_leaves_no_tracing(guard: dict[str, str],
                                                    tmp_path: Path) -> None:
    """SIGKILL of `rtbench run --trace`: its probe gets SIGTERM from the lifeline's
    watcher, ends its run and puts tracefs back itself (no later command needed)."""
    state_file = tmp_path / "rtprobe-trace.state"
    suite = tmp_path / "s.toml"
    suite.write_text('[suite]\nname = "t"\n[defaults]\nduration = "60s"\n'
                     f'[[scenarios]]\nname = "idle"\nmeasure_cpus = "{MEASURED_CPU}"\n'
                     '[[tests]]\nname = "c"\ntest = "cyclic"\n')
    env = {**guard, "RTBENCH_DB": f"sqlite:///{tmp_path / 'r.db'}",
           "XDG_DATA_HOME": str(tmp_path / "xdg")}
    with session_lock("realtime"):
        proc = subprocess.Popen([sys.executable, "-m", "rtbench", "run", str(suite),
                                 "--trace", "--no-report"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started = wait_for(state_file, True, 60)
        time.sleep(0.5)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        assert started, stderr[-2000:]
        assert wait_for(state_file, False, 10), "the probe did not put tracefs back"


@needs_root
@needs_tracefs
@needs_part("util-linux", shutil.which("unshare") is None, "no unshare(1)")
def test_probe_unmounts_the_tracefs_it_mounted(rtprobe: Path, guard: dict[str, str],
                                               tmp_path: Path) -> None:
    """In a mount namespace without tracefs, rtprobe --trace mounts it, and at the end
    closes its trace_pipe fds and unmounts it: `restored: true`, exit 0, no mount left."""
    out = tmp_path / "out.ndjson"
    script = (f"umount {TRACEFS} 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null; "
              "grep -c tracefs /proc/self/mounts; "
              f"{rtprobe} cyclic --cpus {MEASURED_CPU} --duration 1s --warmup 0 --trace=on "
              f"--output {out}; echo exit=$?; grep -c tracefs /proc/self/mounts")
    with session_lock("realtime"):
        done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                               script], env=guard, capture_output=True, text=True,
                              timeout=60, check=False)
    lines = done.stdout.split()
    if lines[:1] != ["0"]:
        # not a part: a kernel whose mount namespaces keep tracefs
        pytest.skip(f"tracefs cannot be unmounted in a private namespace: {done.stdout}")
    assert lines[1:] == ["exit=0", "0"], (done.stdout, done.stderr)
    summary = next(json.loads(line) for line in out.read_text().splitlines()
                   if '"trace_summary"' in line)
    assert summary["restored"] is True and summary["note"] is None, summary
    assert "not put back" not in done.stderr


@needs_root
def test_refusal_tells_root_nothing_about_root(rtprobe: Path) -> None:
    """--trace=on refused as root (a simulated run): the line names the reason and
    --trace=auto, never "run as root" (issue 36, item 7)."""
    done = subprocess.run([str(rtprobe), "cyclic", "--simulate", "1", "--trace=on",
                           "--duration", "10ms"], capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "simulated run" in line and "--trace=auto" in line and "run as root" not in line
