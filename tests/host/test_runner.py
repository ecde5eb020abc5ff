"""Runner building blocks: line splitting, /proc sampling, child process hygiene."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rtbench.run.pump import LineBuffer, Pump
from rtbench.targets import LocalTarget
from rtbench.targets.local import LocalProcess
from rtbench.targets.procstat import (
    IntensitySampler,
    parse_interrupts,
    parse_loadavg,
    parse_proc_stat,
    steal_fraction,
)
from rtbench.util.cpulist import parse_cpulist
from tests.conftest import pids_with, wait_until_gone

REPO = Path(__file__).resolve().parents[2]


@settings(deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                               blacklist_characters="\n"), max_size=30),
                max_size=10), st.data())
def test_line_buffer_any_chunking(lines: list[str], data: st.DataObject) -> None:
    stream = "".join(line + "\n" for line in lines).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    buffer = LineBuffer()
    got: list[tuple[int, str]] = []
    last = 0
    for cut in [*cuts, len(stream)]:
        got += buffer.feed(stream[last:cut])
        last = cut
    assert [text for _, text in got] == lines
    assert [n for n, _ in got] == list(range(1, len(lines) + 1))
    assert buffer.rest() == ""


def test_line_buffer_keeps_partial_line() -> None:
    buffer = LineBuffer()
    assert buffer.feed(b'{"a":1}\n{"b"') == [(1, '{"a":1}')]
    assert buffer.rest() == '{"b"'


PROC_STAT_1 = """cpu  100 0 50 800 50 0 0 0 0 0
cpu0 50 0 25 400 25 0 0 0 0 0
cpu1 50 0 25 400 25 0 0 0 0 0
intr 1000 5 6
ctxt 5000
btime 1
"""
PROC_STAT_2 = """cpu  250 0 100 1000 50 0 0 0 0 0
cpu0 150 0 50 450 25 0 0 0 0 0
cpu1 100 0 50 550 25 0 0 0 0 0
intr 3000 5 6
ctxt 9000
"""
INTERRUPTS_1 = """           CPU0       CPU1
  0:         10          0   IO-APIC   2-edge      timer
LOC:        100        200   Local timer interrupts
ERR:          0
"""
INTERRUPTS_2 = """           CPU0       CPU1
  0:         20          0   IO-APIC   2-edge      timer
LOC:        300        250   Local timer interrupts
ERR:          0
"""


def test_proc_parsers() -> None:
    cpu, ctxt, intr = parse_proc_stat(PROC_STAT_1)
    assert cpu["cpu"] == (150, 1000)
    assert cpu["cpu1"] == (75, 500)
    assert (ctxt, intr) == (5000, 1000)
    assert parse_interrupts(INTERRUPTS_1) == (110, 200)
    assert parse_loadavg("0.50 0.40 0.30 1/100 1234\n") == (0.5, 0.4, 0.3)
    assert steal_fraction("cpu  90 0 0 0 0 0 0 10 0 0\n") == 0.1


def test_intensity_from_two_snapshots() -> None:
    files = {"/proc/stat": PROC_STAT_1, "/proc/interrupts": INTERRUPTS_1,
             "/proc/loadavg": "1.00 0.5 0.2 1/1 1"}
    clock = iter([10.0, 12.0])
    sampler = IntensitySampler(files.__getitem__, lambda: next(clock))
    sampler.sample()
    files.update({"/proc/stat": PROC_STAT_2, "/proc/interrupts": INTERRUPTS_2,
                  "/proc/loadavg": "2.00 0.5 0.2 1/1 1"})
    sampler.sample()
    result = sampler.intensity()
    # busy: (350-150)/(1400-1000) = 50 %; cpu0: (200-75)/(675-500)
    assert result["cpu_busy_pct"] == 50.0
    assert result["cpu_busy_pct_per_cpu"]["cpu0"] == round(100 * 125 / 175, 2)
    assert result["ctxt_per_s"] == 2000.0
    assert result["irq_per_s"] == 1000.0
    assert result["irq_per_s_per_cpu"] == [105.0, 25.0]
    assert (result["loadavg_1m_max"], result["samples"]) == (2.0, 2)


def test_intensity_reports_unreadable_proc() -> None:
    def missing(path: str) -> str:
        raise FileNotFoundError(path)

    sampler = IntensitySampler(missing, time.monotonic)
    sampler.sample()
    sampler.sample()
    result = sampler.intensity()
    assert result["samples"] == 0
    assert len(result["errors"]) == 1


def test_real_proc_sampling() -> None:
    target = LocalTarget(Path("/bin/true"))
    sampler = IntensitySampler(target.read_file, time.monotonic)
    sampler.sample()
    time.sleep(0.3)
    sampler.sample()
    result = sampler.intensity()
    assert 0.0 <= result["cpu_busy_pct"] <= 100.0
    assert result["ctxt_per_s"] > 0


def test_parse_cpulist() -> None:
    assert parse_cpulist("0-2,5") == {0, 1, 2, 5}


def test_load_wrapper_restarts_and_stops_whole_group(tmp_path: Path) -> None:
    marker = f"rtbench-test-{uuid.uuid4().hex}"
    counter = tmp_path / "count"
    target = LocalTarget(Path("/bin/true"))
    # The command forks a grandchild (sleep) and ends quickly: it must be restarted,
    # and the grandchild must die with the group.
    proc = target.start_command(f"echo x >> {counter}; sleep 30 & : {marker}; exit 0")
    time.sleep(1.6)
    assert counter.read_text().count("x") >= 2
    assert pids_with(marker)
    proc.stop()
    assert wait_until_gone(marker, 2.0) == []
    assert proc.poll() is not None


def test_children_die_with_a_killed_parent(tmp_path: Path) -> None:
    # A parent python that starts a load and a probe-like child, then gets SIGKILL.
    marker = f"rtbench-test-{uuid.uuid4().hex}"
    fake_probe = tmp_path / f"probe-{marker}"
    fake_probe.write_text("#!/bin/sh\nsleep 60\n")
    fake_probe.chmod(0o755)
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from rtbench.targets import LocalTarget\n"
        f"t = LocalTarget(Path({str(fake_probe)!r}))\n"
        f"t.start_command('sleep 60; : {marker}')\n"
        "t.start_probe(['x'])\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline().strip() == b"ready"
        end = time.monotonic() + 5
        # the parent itself; the load's launcher, its restart loop and its sh -c; the
        # probe's lifeline watcher and the probe stand-in (the launcher exec'd it)
        while len(pids_with(marker)) < 6 and time.monotonic() < end:
            time.sleep(0.1)
        assert len(pids_with(marker)) == 6
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        # the probe's watcher gives the probe up to 3 s after SIGTERM before SIGKILL
        # (targets/shell.py); 2 s was too short once on a busy machine
        assert wait_until_gone(marker, 5.0) == []
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_pump_reads_until_eof() -> None:
    proc = LocalProcess(subprocess.Popen(["/bin/sh", "-c", "echo a; sleep 0.2; echo b"],
                                         stdout=subprocess.PIPE))
    chunks: list[bytes] = []
    pump = Pump()
    pump.add(proc, chunks.append, chunks.append)
    pump.drain(proc, 5.0)
    proc.proc.wait()
    assert b"".join(chunks) == b"a\nb\n"
    assert chunks[-1] == b""
    assert not pump.watching(proc)
