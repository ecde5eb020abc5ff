"""CI integrations: the LAVA script reports through fake lava-test-case; the YAMLs parse."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
INTEGRATIONS = REPO / "integrations"


def test_yaml_files_parse_and_name_what_exists() -> None:
    lava = yaml.safe_load((INTEGRATIONS / "lava" / "rtbench.yaml").read_text())
    assert lava["metadata"]["format"] == "Lava-Test Test Definition 1.0"
    assert "lava-test-shell" in lava["metadata"]["environment"]
    for section in ("install", "run"):
        step = lava[section]["steps"][0]
        script = REPO / next(word for word in step.split() if word.endswith(".sh"))
        assert script.is_file() and os.access(script, os.X_OK)
    gitlab = yaml.safe_load((INTEGRATIONS / "gitlab" / "gitlab-ci.yml").read_text())
    assert gitlab["rtbench-latency"]["artifacts"]["reports"]["junit"] == "rtbench-junit.xml"
    github = yaml.safe_load((INTEGRATIONS / "github" / "rtbench.yml").read_text())
    assert "latency" in github["jobs"]


def test_lava_script_reports_every_cell(tmp_path: Path, rtbench_env: dict[str, str]) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "lava.log"
    (bin_dir / "lava-test-case").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (bin_dir / "rtbench").write_text(f'#!/bin/sh\nexec {sys.executable} -m rtbench "$@"\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    env = dict(rtbench_env, PATH=f"{bin_dir}:{os.environ['PATH']}", TMPDIR=str(tmp_path))
    done = subprocess.run([str(INTEGRATIONS / "lava" / "run-and-report.sh"), "smoke",
                           "--scale", "0.2", "--simulate", "4"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode in (0, 1), done.stderr
    lines = log.read_text().splitlines()
    assert "idle.cyclic-1ms --result pass" in lines
    assert any(re.match(r"idle\.cyclic-1ms\.cpu\d+\.max --result pass --measurement "
                        r"[0-9.]+ --units us$", x) for x in lines)


def test_lava_script_reports_a_run_that_could_not_start(tmp_path: Path,
                                                        rtbench_env: dict[str, str]) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "lava.log"
    (bin_dir / "lava-test-case").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (bin_dir / "rtbench").write_text(f'#!/bin/sh\nexec {sys.executable} -m rtbench "$@"\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    env = dict(rtbench_env, PATH=f"{bin_dir}:{os.environ['PATH']}", TMPDIR=str(tmp_path))
    done = subprocess.run([str(INTEGRATIONS / "lava" / "run-and-report.sh"), "no-such-suite"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2
    assert log.read_text().splitlines() == ["rtbench-run --result fail"]
