"""The LAVA definition as a lab runs it (issue 26 item 7): rtbench from the directory
install.sh made, the run pushed to a live `rtbench serve` given as a parameter, and
nothing left on the device; install.sh never takes over a directory it did not make."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from server_helpers import free_port

from rtbench.store import Store
from rtbench.store.tokens import create_token

REPO = Path(__file__).resolve().parents[2]
LAVA = REPO / "integrations" / "lava"


def test_lava_run_pushes_and_leaves_nothing(tmp_path: Path, rtbench_env: dict[str, str]
                                            ) -> None:
    url = f"sqlite:///{tmp_path / 'server.db'}"
    with Store.open(url) as store:
        token = create_token(store, "lava")
    port = free_port()
    serve = subprocess.Popen([sys.executable, "-m", "rtbench", "serve", "--db", url,
                              "--bind", f"127.0.0.1:{port}"], env=rtbench_env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        # what install.sh leaves: a marked directory holding the venv's rtbench
        lava_dir = tmp_path / "rtbench-lava"
        (lava_dir / "venv" / "bin").mkdir(parents=True)
        (lava_dir / ".rtbench-lava").touch()
        wrapper = lava_dir / "venv" / "bin" / "rtbench"
        wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m rtbench "$@"\n')
        wrapper.chmod(0o755)
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        log = tmp_path / "lava.log"
        (bin_dir / "lava-test-case").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
        (bin_dir / "lava-test-case").chmod(0o755)
        scratch = tmp_path / "tmp"
        scratch.mkdir()
        env = dict(rtbench_env, PATH=f"{bin_dir}:/usr/bin:/bin", TMPDIR=str(scratch),
                   RTBENCH_LAVA_DIR=str(lava_dir), RTBENCH_SERVER=base, RTBENCH_TOKEN=token)
        done = subprocess.run([str(LAVA / "run-and-report.sh"), "smoke", "--scale", "0.2",
                               "--simulate", "4"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=180, check=False)
    finally:
        serve.terminate()
        serve.wait(20)
    assert done.returncode in (0, 1), done.stderr
    lines = log.read_text().splitlines()
    assert "rtbench-push --result pass" in lines
    assert "idle.cyclic-1ms --result pass" in lines
    with Store.open(url) as store:
        assert [r.suite for r in store.list_runs()] == ["smoke"]
    assert not lava_dir.exists() and list(scratch.iterdir()) == []


def test_install_refuses_a_directory_it_did_not_make(tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "precious").touch()
    done = subprocess.run([str(LAVA / "install.sh"), "."], capture_output=True, text=True,
                          env=dict(os.environ, RTBENCH_LAVA_DIR=str(foreign)),
                          timeout=30, check=False)
    assert done.returncode == 3 and "was not made by install.sh" in done.stderr
    assert (foreign / "precious").exists()
