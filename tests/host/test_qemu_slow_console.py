"""rtprobe in Debian's PREEMPT_RT kernel under qemu, reached over its serial console; one
guest serves the module's tests and test_qemu_serial.py's rt case (tests/host/conftest.py:
booted once, about 2 s with KVM, a minute or more emulated).

On a board whose serial console carries 9600 baud: the host reads its records
no faster than such a line does (960 bytes a second), so the probe's output backs up
through the guest's tty while it measures.  The measuring thread must not notice: no
stored sample comes near the time the records waited, every window arrives, and the
records that queued in the probe are reported (docs/rtprobe.md, "The measuring thread
waits on its clock only").  qemu's serial port has no baud rate of its own; the line's
speed is the host's reading, as with a real slow line (tests/host/qemu_board.py).

With the collector starved by a SCHED_FIFO hog on its CPU (the guest's busybox has no chrt:
tests/host/fifo_hog.c), the same holds in the RT kernel as on the host
(tests/probe/test_nowait.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from rtbench.rtprobe.provider import Probes
from rtbench.targets.serial import SerialTarget
from tests.host.qemu_board import RT_GUEST_GROUP, QemuBoard, missing
from tests.parts import import_part, needs_part
from tests.probe.probe_support import ProbeRun, parse_ndjson
from tests.probe.test_nowait import check_no_self_latency, probe_args

import_part("serial")
pytestmark = [
    pytest.mark.qemu,
    needs_part("qemu", missing() is not None, str(missing())),
    needs_part("root", os.geteuid() != 0, "Debian's kernels in /boot are root's"),
    pytest.mark.xdist_group(RT_GUEST_GROUP),
]

REPO = Path(__file__).resolve().parents[2]
BYTES_PER_S = 960  # 9600 baud, 8N1
SLOW_S = 20.0  # the run measures for 2.5 s; an emulated guest takes a while to start it
HOG_SPIN_MS = 1200


@pytest.fixture(scope="module")
def rt_board(rt_guest: QemuBoard) -> QemuBoard:
    """The PREEMPT_RT guest (tests/host/conftest.py), the probe found on it once here."""
    open_target(rt_guest).close()
    return rt_guest


def open_target(board: QemuBoard) -> SerialTarget:
    """A serial target on the guest's console, the probe pushed."""
    target = SerialTarget(board.tty, baud=9600,
                          provider=Probes(REPO / "probe" / "build" / "musl" / "rtprobe"))
    target.open()  # pushes the probe at the pty's full speed
    return target


def read_run(target: SerialTarget, args: list[str]) -> ProbeRun:
    """Run the probe on the board with args and read all it writes."""
    proc = target.start_probe(args)
    out, err = b"", b""
    deadline = time.monotonic() + 300
    while not proc.at_eof() and time.monotonic() < deadline:
        more, more_err = proc.read_available()
        out, err = out + more, err + more_err
        time.sleep(0.02)
    rc = proc.poll()
    text = out.decode()
    return ProbeRun(-1 if rc is None else rc, parse_ndjson(text), text, err.decode())


class SlowLine:
    """A pyserial port read as a 9600-baud line delivers, at most BYTES_PER_S a second,
    for slow_s seconds (the measuring and then some), then as fast as it comes (the
    records still queued are the same however fast they are read then)."""

    def __init__(self, port: Any, slow_s: float) -> None:
        self.port = port
        self.credit = 0.0
        self.last = time.monotonic()
        self.fast_from = self.last + slow_s

    @property
    def in_waiting(self) -> int:
        now = time.monotonic()
        if now >= self.fast_from:
            return int(self.port.in_waiting)
        self.credit = min(self.credit + (now - self.last) * BYTES_PER_S, BYTES_PER_S / 10)
        self.last = now
        return min(int(self.port.in_waiting), int(self.credit))

    def read(self, n: int) -> bytes:
        data = bytes(self.port.read(n))
        self.credit -= len(data)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.port, name)


def test_starved_collector_in_the_rt_guest(rt_board: QemuBoard) -> None:
    """A SCHED_FIFO hog on the collector's CPU (0) for 1.2 s across the warm-up boundary,
    the measured CPU (1) left alone: as tests/probe/test_nowait.py on the host."""
    target = open_target(rt_board)
    try:
        # the hog waits for rtprobe to measure, then 200 ms (into the 500 ms warm-up);
        # FIFO 10: above the collector (SCHED_OTHER), below the measuring thread (40)
        target.run(f"( /bin/fifo_hog 0 10 200 {HOG_SPIN_MS}; echo rc=$? ) "
                   ">/tmp/fifo_hog.log 2>&1 &")
        args = probe_args("1500ms")
        args[args.index("--cpus") + 1] = "1"
        args[args.index("--priority") + 1] = "40"  # below the serial IRQ thread (FIFO 50)
        run = read_run(target, args)
        hog = ""
        deadline = time.monotonic() + 30
        while "rc=" not in hog and time.monotonic() < deadline:
            hog = target.run("cat /tmp/fifo_hog.log").stdout
        assert hog.strip() == "rc=0", hog  # it spun, as asked
    finally:
        target.close()
    assert run.start["collector_cpus"] is not None
    assert "1" not in run.start["collector_cpus"].split(",")
    # the guest's measured vCPU is itself late often (overruns in every window, more
    # while the hog's vCPU takes a host CPU): overruns are held to the late samples
    check_no_self_latency(run, HOG_SPIN_MS * 1_000_000, noisy_cpu=True)
    # 950 ms of every second with no CPU: the collector fell behind, and it says so
    assert sum(s["windows_merged"] for s in run.result["series"]) > 0


def test_probe_over_a_9600_baud_console_never_stalls_measuring(rt_board: QemuBoard) -> None:
    # the PREEMPT_RT guest: where an RT user runs; priority 40 keeps the measuring
    # threads below its serial IRQ thread (FIFO 50), which an emulated CPU needs
    target = open_target(rt_board)
    try:
        assert target.link is not None
        target.link.port = SlowLine(target.link.port, SLOW_S)
        began = time.monotonic()
        # every measured sample a spike record (--threshold 1us): some 200 KB of
        # records in 2.5 s, more than the buffers on the line's way hold (the
        # guest's pipe to cat and tty, qemu, socat and the host's pty: ~150 KB)
        run = read_run(target, ["cyclic", "--cpus", "0,1", "--warmup", "500ms",
                                "--window", "100ms", "--duration", "2s",
                                "--interval", "2ms", "--threshold", "1us",
                                "--priority", "40"])
        waited_s = time.monotonic() - began
        assert run.rc == 1, target.link.log[-20:]  # the 1 us threshold failed
    finally:
        target.close()
    result = run.result
    # the records took far longer than the run to cross the line: they waited, and
    # a good part of them in the probe's queue while it measured
    assert waited_s > SLOW_S
    output = result["output"]
    assert output["max_queued_bytes"] > 4096, output
    # every crossing is a spike record, or dropped in the probe's queue or its ring and
    # counted: none is lost unsaid
    spikes = len(run.by_type.get("spike", []))
    lost = output["dropped_records"] - output["dropped_windows"] + sum(
        s["spikes_dropped"] for s in result["series"])
    assert spikes + lost == sum(s["exceed"][0]["count"] for s in result["series"])
    for series in result["series"]:
        assert series["exceed"][0]["count"] == series["count"]
        # a measuring thread held up by the line would show it as one huge sample
        assert series["max_ns"] < 2_000_000_000, series["max_ns"]
        assert series["warmup"]["max_ns"] < 2_000_000_000
        mine = [w for w in run.windows if w["series"] == series["index"]]
        if not output["dropped_windows"]:
            assert sum(w["count"] for w in mine if not w["warmup"]) == series["count"]
        assert sum(w["merged"] for w in mine) == series["windows_merged"]
        periods = series["count"] + series["overruns"] + series["gap_ns"] // 2_000_000
        assert periods == result["measured_ns"] // 2_000_000
