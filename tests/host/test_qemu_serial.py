"""A real board on a serial line: Debian's generic and PREEMPT_RT kernels in qemu, each
reached as serial:///..., the probe pushed, a suite run and stored with the guest's
kernel (tests/host/qemu_board.py).  Slow (two boots): one test for both kernels."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.host.qemu_board import QemuBoard, build_initramfs, kernels, missing

pytest.importorskip("serial")
pytestmark = [
    pytest.mark.qemu,
    pytest.mark.skipif(missing() is not None, reason=str(missing())),
    pytest.mark.skipif(os.geteuid() != 0, reason="Debian's kernels in /boot are root's"),
]

# The smoke suite's idle scenario: a serial line runs one process at a time, so the
# smoke suite's shell-command load has no place on it.
SERIAL_SUITE = """
[suite]
name = "serial-smoke"
description = "cyclic idle, 2 s, over a serial console"

[defaults]
duration = "2s"
warmup = "1s"
settle = "0s"

[[scenarios]]
name = "idle"

[[tests]]
name = "cyclic-1ms"
test = "cyclic"
params = { interval = "1ms" }
"""


def test_generic_and_rt_guests_store_two_runs_differing_in_kernel(tmp_path: Path) -> None:
    suite = tmp_path / "serial-smoke.toml"
    suite.write_text(SERIAL_SUITE)
    initramfs = build_initramfs(tmp_path)
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    env.pop("RTBENCH_DB", None)
    env.pop("RTBENCH_PROBE", None)
    found = kernels()
    for kind in ("generic", "rt"):
        board = QemuBoard(found[kind], tmp_path, initramfs)
        try:
            done = subprocess.run([sys.executable, "-m", "rtbench", "run", str(suite),
                                   "--target", f"serial://{board.tty}?baud=115200"],
                                  env=env, capture_output=True, text=True, timeout=400,
                                  check=False)
        finally:
            board.stop()
        assert done.returncode in (0, 1), done.stderr + done.stdout

    from rtbench.store import Store

    store = Store.open(f"sqlite:///{tmp_path}/data/rtbench/results.db")
    runs = [store.get_run(r.id) for r in reversed(store.list_runs())]
    assert len(runs) == 2
    generic, rt = runs
    release = {kind: found[kind].name.removeprefix("vmlinuz-") for kind in found}
    assert generic.kernel == release["generic"] and rt.kernel == release["rt"]
    assert generic.sysinfo["preempt_rt"] is False and rt.sysinfo["preempt_rt"] is True
    assert generic.hostname == rt.hostname == "rtbench-guest"
    assert all(r.target.startswith("serial://") for r in runs)
    for run in runs:
        windows = [w for s in run.scenarios for m in s.measurements for w in m.windows]
        assert windows, f"{run.kernel}: no windows stored"
    listing = subprocess.run([sys.executable, "-m", "rtbench", "ls"], env=env,
                             capture_output=True, text=True, timeout=60, check=True).stdout
    assert release["generic"] in listing and release["rt"] in listing
