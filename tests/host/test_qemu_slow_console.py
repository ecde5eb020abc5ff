"""rtprobe on a board whose serial console carries 9600 baud: the host reads its records
no faster than such a line does (960 bytes a second), so the probe's output backs up
through the guest's tty while it measures.  The measuring thread must not notice: no
stored sample comes near the time the records waited, every window arrives, and the
records that queued in the probe are reported (docs/rtprobe.md, "The measuring thread
waits on its clock only").  qemu's serial port has no baud rate of its own; the line's
speed is the host's reading, as with a real slow line (tests/host/qemu_board.py)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from rtbench.rtprobe.provider import Probes
from rtbench.targets.serial import SerialTarget
from tests.host.qemu_board import QemuBoard, build_initramfs, kernels, missing
from tests.parts import import_part, needs_part
from tests.probe.probe_support import ProbeRun, parse_ndjson

import_part("serial")
pytestmark = [
    pytest.mark.qemu,
    needs_part("qemu", missing() is not None, str(missing())),
    needs_part("root", os.geteuid() != 0, "Debian's kernels in /boot are root's"),
]

REPO = Path(__file__).resolve().parents[2]
BYTES_PER_S = 960  # 9600 baud, 8N1
SLOW_S = 20.0  # the run measures for 2.5 s; an emulated guest takes a while to start it


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


def test_probe_over_a_9600_baud_console_never_stalls_measuring(tmp_path: Path) -> None:
    done = subprocess.run(["make", "-C", str(REPO / "probe"), "musl"], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    # the PREEMPT_RT guest: where an RT user runs; priority 40 keeps the measuring
    # threads below its serial IRQ thread (FIFO 50), which an emulated CPU needs
    board = QemuBoard(kernels()["rt"], tmp_path, build_initramfs(tmp_path))
    try:
        target = SerialTarget(board.tty, baud=9600,
                              provider=Probes(REPO / "probe" / "build" / "musl" / "rtprobe"))
        target.open()  # pushes the probe at the pty's full speed
        try:
            assert target.link is not None
            target.link.port = SlowLine(target.link.port, SLOW_S)
            began = time.monotonic()
            # every measured sample a spike record (--threshold 1us): some 200 KB of
            # records in 2.5 s, more than the buffers on the line's way hold (the
            # guest's pipe to cat and tty, qemu, socat and the host's pty: ~150 KB)
            proc = target.start_probe(["cyclic", "--cpus", "0,1", "--warmup", "500ms",
                                       "--window", "100ms", "--duration", "2s",
                                       "--interval", "2ms", "--threshold", "1us",
                                       "--priority", "40"])
            out = b""
            deadline = time.monotonic() + 300
            while not proc.at_eof() and time.monotonic() < deadline:
                out += proc.read_available()[0]
                time.sleep(0.02)
            waited_s = time.monotonic() - began
            assert proc.poll() == 1, target.link.log[-20:]  # the 1 us threshold failed
        finally:
            target.close()
    finally:
        board.stop()
    run = ProbeRun(0, parse_ndjson(out.decode()), out.decode(), "")
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
