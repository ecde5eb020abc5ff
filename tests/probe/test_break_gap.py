"""A `--break-on D --break-action continue` hold is a gap in every timed test, not latency.

The first measured sample at or above D makes the probe write to tracefs in the measuring
thread (tens of µs).  The releases or deadlines that pass meanwhile are one gap spanning
their periods (docs/rtprobe.md, "Gaps"): neither a late next sample nor overruns.  So
samples + overruns + gap_ns / period add up to the measured part's releases, and the gap
is there.  cyclic's own case is in test_cyclic_real.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from probe_support import needs_root, parse_ndjson

from tests.parts import needs_part, require_part
from tests.session_lock import session_lock

PERIOD_NS = 5_000  # a few periods pass during the tracefs writes
CPU = sorted(os.sched_getaffinity(0))[-1]


def run_with_break(rtprobe: Path, tmp_path: Path, args: list[str]) -> dict:
    """Run rtprobe ARGS --break-on 1ns --break-action continue with tracing on (a
    private tracefs mount; tracing_on is global, so restored); its result record."""
    script = (
        "set -e; mnt=/sys/kernel/tracing; "
        "[ -e $mnt/tracing_on ] || mount -t tracefs nodev $mnt; "
        "old=$(cat $mnt/tracing_on); echo 1 > $mnt/tracing_on; "
        f"set +e; {rtprobe} {' '.join(args)} --break-on 1ns --break-action continue "
        "> out.ndjson; rc=$?; echo rc=$rc; echo $old > $mnt/tracing_on"
    )
    with session_lock("tracefs"):  # tracing_on is global: not while a --trace test runs
        done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                              text=True, timeout=30, cwd=tmp_path, check=False)
    if "mount" in done.stderr and "rc=" not in done.stdout:
        require_part("tracefs", f"cannot mount tracefs: {done.stderr.strip()}")
    assert "rc=0" in done.stdout.split(), done.stdout + done.stderr
    result: dict = parse_ndjson((tmp_path / "out.ndjson").read_text())[-1]
    assert result["status"] == "ok", result
    return result


@needs_root
@needs_part("util-linux", shutil.which("unshare") is None, "unshare missing")
def test_periodic_break_on_continue_is_a_gap(rtprobe: Path, tmp_path: Path) -> None:
    """periodic's releases are absolute: without the gap, the hold made the next
    release's delay as long as the hold and counted the releases it covered missed."""
    result = run_with_break(rtprobe, tmp_path, [
        "periodic", "--cpus", str(CPU), "--period", "5us", "--criterion", "off",
        "--warmup", "100ms", "--duration", "500ms", "--priority", "95"])
    (series,) = result["series"]
    assert series["gaps"] == 1, series
    periods = series["count"] + series["overruns"] + series["gap_ns"] // PERIOD_NS
    assert periods == result["measured_ns"] // PERIOD_NS


@needs_root
@needs_part("util-linux", shutil.which("unshare") is None, "unshare missing")
@pytest.mark.parametrize("args", [
    # the waker's timestamps come after the hold: without the gap, the wake-up times
    # it covered were counted as overruns
    ["wakeup", "--interval", "5us"],
    # the samples are gaps inside a batch read before the hold: idem for batch starts
    ["clock", "--interval", "5us", "--reads", "2"],
    # the next event taken waited for the probe: without the gap, it was a sample
    ["event", "--rate", "100000", "--max-missed", "1000000000"],
    # the loop re-reads its clock after recording: the hold is a gap, never a sample
    ["noise", "--gap-threshold", "1us"],
], ids=lambda args: args[0])
def test_break_on_continue_is_a_gap_in_every_timed_test(rtprobe: Path, tmp_path: Path,
                                                        args: list[str]) -> None:
    result = run_with_break(rtprobe, tmp_path, [
        *args, "--cpus", str(CPU), "--warmup", "100ms", "--duration", "300ms",
        "--priority", "95"])
    (series,) = result["series"]
    assert series["gaps"] == 1, series
    assert series["gap_ns"] > 0
