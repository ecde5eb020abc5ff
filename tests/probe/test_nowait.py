"""The measuring thread never waits for anything but its clock (docs/rtprobe.md, "Waits").

A host that reads rtprobe's output late, or a collector starved of its CPU, must not show
up as latency: the measuring thread goes on measuring, records queue in the probe
(bounded), windows merge and the result says so.  Each test asserts that no stored sample
comes near the stall the test made (a stall turned into latency would be as long as it),
that every measured sample and period is accounted for, and that merged or dropped detail
is reported.  Latencies on this shared machine are noisy: the bounds are a fraction of
the stall, never a latency figure.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.parts import needs_part
from tests.probe.probe_support import ProbeRun, is_root, parse_ndjson

needs_root = needs_part("root", not is_root(), "needs root (SCHED_FIFO)")
CPUS = sorted(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(CPUS) < 2,  # not a part: CPUs
                                    reason="needs two CPUs")
F_SETPIPE_SZ = 1031
INTERVAL_NS = 1_000_000


def probe_args(duration: str) -> list[str]:
    """A cyclic run on the last CPU (the collector is pinned to the others) with
    short windows and a warm-up boundary inside the stall."""
    return ["cyclic", "--cpus", str(CPUS[-1]), "--warmup", "500ms", "--window", "100ms",
            "--duration", duration, "--interval", "1ms", "--priority", "95"]


def read_all(fd: int) -> bytes:
    """Everything until EOF."""
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def check_no_self_latency(run: ProbeRun, stall_ns: int, noisy_cpu: bool = False) -> None:
    """No sample near the stall; every period and sample accounted for; merges reported.

    noisy_cpu: the measured CPU itself is late often (an emulated board on a busy host),
    so overruns are only held to the late samples that explain them, not to a share of
    the stall."""
    assert run.rc == 0, run.stderr
    result = run.result
    for series in result["series"]:
        warm = series["warmup"]
        # a measuring thread that had waited would show the stall as one sample
        assert series["max_ns"] < stall_ns // 4, series["max_ns"]
        # a warm-up with no sample (its periods were overruns or thread set-up, as on an
        # emulated board whose vCPU the host did not run) has no max
        assert warm["count"] > 0 or warm["max_ns"] is None, warm
        assert warm["count"] == 0 or warm["max_ns"] < stall_ns // 4, warm["max_ns"]
        mine = [w for w in run.windows if w["series"] == series["index"]]
        assert sum(w["count"] for w in mine if not w["warmup"]) == series["count"]
        assert sum(w["count"] for w in mine if w["warmup"]) == warm["count"]
        assert sum(w["merged"] for w in mine) == series["windows_merged"]
        # no window mixes warm-up and measured time, merged or not; a thread not ready at
        # t0 (a slow guest) moves both parts by its series' start_ns (docs/schema.md)
        measured_from = 500_000_000 + series.get("start_ns", 0)
        assert all(w["end_ns"] <= measured_from for w in mine if w["warmup"])
        assert all(w["start_ns"] >= measured_from for w in mine if not w["warmup"])
        # every deadline is a sample, an overrun or lies in a gap (thread set-up)
        periods = series["count"] + series["overruns"] + series["gap_ns"] // INTERVAL_NS
        assert periods == result["measured_ns"] // INTERVAL_NS
        if noisy_cpu:
            # each overrun is a deadline that passed during a late wake-up the series
            # holds as a sample: none came from time the thread did not measure
            late_ns = series["sum_ns"] + warm["sum_ns"]
            assert series["overruns"] + warm["overruns"] <= late_ns // INTERVAL_NS
        else:
            # the stall itself is no overrun burst: at most a few host hiccups
            assert series["overruns"] < stall_ns // INTERVAL_NS // 10
    output = result["output"]
    assert output["dropped_records"] == 0 == output["dropped_windows"]


@needs_root
def test_unread_small_pipe_does_not_stall_measuring(rtprobe: Path) -> None:
    """stdout on a 4 KiB pipe nobody reads for 1.5 s, across the warm-up boundary."""
    stall_s = 1.5
    read_fd, write_fd = os.pipe()
    fcntl.fcntl(write_fd, F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen([str(rtprobe), *probe_args("1500ms")], stdout=write_fd,
                            stderr=subprocess.PIPE)
    os.close(write_fd)
    time.sleep(stall_s)
    out = read_all(read_fd)
    os.close(read_fd)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    proc.wait(timeout=20)
    run = ProbeRun(proc.returncode, parse_ndjson(out.decode()), out.decode(), err)
    check_no_self_latency(run, int(stall_s * 1e9))
    # the records waited in the probe's queue, not in the measuring thread
    assert run.result["output"]["max_queued_bytes"] > 4096


HOG = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(sys.argv[2])))
end = time.monotonic() + float(sys.argv[3])
while time.monotonic() < end:
    pass
"""


@needs_root
@needs_two_cpus
def test_starved_collector_does_not_stall_measuring(rtprobe: Path) -> None:
    """A SCHED_FIFO hog on the collector's CPU for 1.2 s, across the warm-up boundary."""
    stall_s = 1.2
    proc = subprocess.Popen([str(rtprobe), *probe_args("1500ms")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the start record: the run has begun
    # above the collector (SCHED_OTHER), below the measuring thread's CPU's work
    hog = subprocess.run([sys.executable, "-c", HOG, str(CPUS[0]), "10", str(stall_s)],
                         timeout=30, check=True)
    assert hog.returncode == 0
    out, err = proc.communicate(timeout=20)
    text = (first + out).decode()
    run = ProbeRun(proc.returncode, parse_ndjson(text), text, err.decode())
    assert run.start["collector_cpus"] is not None
    assert str(CPUS[-1]) not in run.start["collector_cpus"].split(",")
    check_no_self_latency(run, int(stall_s * 1e9))
    # 950 ms of every second with no CPU: the collector fell behind, and it says so
    assert sum(s["windows_merged"] for s in run.result["series"]) > 0
