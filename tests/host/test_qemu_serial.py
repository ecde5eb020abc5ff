"""A real board on a serial line: Debian's generic and PREEMPT_RT kernels in qemu, each
reached as serial:///..., the probe pushed (or found there), the smoke and quick suites
(scaled down) run with their loads as jobs of the guest's shell and stored with the
guest's kernel (tests/host/qemu_board.py).  Slow (a boot each): one test per kernel, so
that two workers run them at the same time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.host.qemu_board import RT_GUEST_GROUP, QemuBoard, build_initramfs, kernels, missing
from tests.parts import import_part, needs_part

import_part("serial")
pytestmark = [
    pytest.mark.qemu,
    needs_part("qemu", missing() is not None, str(missing())),
    needs_part("root", os.geteuid() != 0, "Debian's kernels in /boot are root's"),
]

# The built-in suites, scaled down: smoke (a shell-command load) and quick (built-in cpu,
# sched and net loads), their loads running as background jobs of the guest's shell.
SUITES = (("smoke", "0.5"), ("quick", "0.1"))


@pytest.mark.parametrize("kind", ["generic", pytest.param(
    "rt", marks=pytest.mark.xdist_group(RT_GUEST_GROUP))])
def test_generic_and_rt_guests_store_complete_runs_differing_in_kernel(
        tmp_path: Path, kind: str, request: pytest.FixtureRequest) -> None:
    """One guest per kernel (each a test of its own, so two workers run the two at once):
    its runs are stored with its kernel, and the two kernels differ.  The generic guest is
    booted here and the probe pushed over its console; the PREEMPT_RT guest is the one
    test_qemu_slow_console.py uses too (tests/host/conftest.py), booted once, with the
    probe already on it (found by its checksum, not pushed)."""
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    env.pop("RTBENCH_DB", None)
    env.pop("RTBENCH_PROBE", None)
    found = kernels()
    release = {k: found[k].name.removeprefix("vmlinuz-") for k in found}
    assert release["generic"] != release["rt"]
    shared = kind == "rt"
    board = request.getfixturevalue("rt_guest") if shared else \
        QemuBoard(found[kind], tmp_path, build_initramfs(tmp_path))
    try:
        for suite, scale in SUITES:
            # Under TCG a PREEMPT_RT guest's CPU is so slow that quick's 250 us cells
            # at FIFO 80 can starve the serial port's IRQ thread (FIFO 50) and the
            # run is lost; measuring at SCHED_OTHER there keeps the line alive.
            policy = ["--policy", "other"] if (kind, suite) == ("rt", "quick") else []
            # smoke on the RT guest traces its spikes: its init mounts no tracefs, so
            # rtprobe mounts it (and unmounts it again); --trace=on fails the test if
            # tracing cannot be set up there
            trace = ["--trace=on"] if (kind, suite) == ("rt", "smoke") else []
            done = subprocess.run([sys.executable, "-m", "rtbench", "run", suite,
                                   "--scale", scale, *policy, *trace,
                                   "--target", f"serial://{board.tty}?baud=115200"],
                                  env=env, capture_output=True, text=True, timeout=400,
                                  check=False)
            assert done.returncode in (0, 1), f"{kind} {suite}: {done.stderr}{done.stdout}"
            # pushed once to the generic guest; found on the shared one by its checksum
            pushed = "pushing rtprobe" in done.stderr
            assert pushed is (not shared and suite == "smoke"), (kind, suite, done.stderr)
        # nothing left behind on the guest: no load job, no job directory
        left = subprocess.run([sys.executable, "-c", LEFTOVERS, board.tty], env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert left.returncode == 0 and left.stdout.split() == ["jobs=0", "loads=0"], \
            left.stdout + left.stderr
    finally:
        if not shared:
            board.stop()

    from rtbench.store import Store

    store = Store.open(f"sqlite:///{tmp_path}/data/rtbench/results.db")
    runs = [store.get_run(r.id) for r in reversed(store.list_runs())]
    assert [r.suite for r in runs] == ["smoke", "quick"]
    assert {r.kernel for r in runs} == {release[kind]}
    assert all(r.sysinfo["preempt_rt"] is (kind == "rt") for r in runs)
    assert {r.hostname for r in runs} == {"rtbench-guest"}
    assert all(r.target.startswith("serial://") for r in runs)
    if kind == "rt":
        traced = [m.command for sc in runs[0].scenarios for m in sc.measurements]
        assert traced and all("--trace" in c and "--trace-budget" in c for c in traced)
        # the guest's trace summary came back and was stored with each measurement:
        # tracefs found or mounted, the scheduler events enabled, every spike over the
        # trace threshold either traced (a trace record kept) or counted as untraced
        measured = [m for sc in runs[0].scenarios for m in sc.measurements]
        for m in measured:
            info = m.trace_info
            assert info is not None, m.name
            assert "sched:sched_switch" in info["events_enabled"], info
            assert len(m.traces) == info["spikes_traced"], (m.name, info)
            assert info["spikes_traced"] + info["spikes_untraced"] == info["spikes_over"]
        explained = subprocess.run([sys.executable, "-m", "rtbench", "explain",
                                    str(runs[0].id)], env=env, capture_output=True,
                                   text=True, timeout=120, check=False)
        assert explained.returncode == 0, explained.stderr
        if any(m.traces for m in measured):
            assert "spike" in explained.stdout, explained.stdout
    for run in runs:
        # complete: every scenario measured every test, with windows
        assert run.status in ("ok", "fail"), (run.suite, run.kernel, run.status)
        tests = len(run.scenarios[0].measurements)
        assert tests >= 1
        for scenario in run.scenarios:
            assert len(scenario.measurements) == tests
            assert all(m.status in ("ok", "fail") and m.windows
                       for m in scenario.measurements), (run.suite, scenario.name)
            for load in scenario.intensity.get("loads", []):
                if load.get("kind") is not None:
                    assert load["achieved"] is not None and load["rate_samples"] >= 1, load
    # wide enough that no kernel release wraps inside its column
    listing = subprocess.run([sys.executable, "-m", "rtbench", "--width", "200", "ls"], env=env,
                             capture_output=True, text=True, timeout=60, check=True).stdout
    assert release[kind] in listing
    assert "serial://" in listing


# Asks the guest (through rtbench's serial target) for load jobs and job directories.
LEFTOVERS = """
import sys
from rtbench.rtprobe.provider import Probes
from rtbench.targets.base import open_target
with open_target(f"serial://{sys.argv[1]}", provider=Probes()) as board:
    done = board.run("ls -d /tmp/rtbench/job-* 2>/dev/null | wc -l; "
                     "ps | grep -c '[r]tbench-job\\|[l]oad cpu\\|[l]oad sched\\|[l]oad net'")
    words = done.stdout.split()
    print(f"jobs={words[0]}", f"loads={words[1] if len(words) > 1 else '?'}")
"""
