"""The static aarch64 cross build runs a simulated cyclic under qemu-user."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from probe_support import REPO, parse_ndjson

from tests.parts import needs_part
from tests.session_lock import session_lock

CROSS = "aarch64-linux-gnu-"
QEMU = "qemu-aarch64-static"


@pytest.mark.cross
@needs_part("cross-gcc", shutil.which(CROSS + "gcc") is None, "aarch64 cross compiler missing")
@needs_part("qemu-user", shutil.which(QEMU) is None, "qemu-aarch64-static missing")
def test_aarch64_static_build_runs_under_qemu() -> None:
    with session_lock("probe-make"):  # test_static.py makes the same build
        build = subprocess.run(["make", "-C", str(REPO / "probe"), "STATIC=1",
                                f"CROSS_COMPILE={CROSS}"],
                               capture_output=True, text=True, timeout=600, check=False)
    assert build.returncode == 0, build.stderr[-2000:]
    assert "warning" not in build.stderr
    binary = REPO / "probe" / "build" / "aarch64-linux-gnu" / "rtprobe"
    run = subprocess.run([QEMU, str(binary), "cyclic", "--simulate", "1", "--loops", "1000"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    records = parse_ndjson(run.stdout)
    result = records[-1]
    assert result["type"] == "result" and result["status"] == "ok"
    assert records[0]["sysinfo"]["uname"]["machine"] == "aarch64"
    assert all(s["count"] == 1000 for s in result["series"])
