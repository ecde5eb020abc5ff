"""RTBENCH_REQUIRE: a skip for want of a required part fails (tests/parts.py), and every
skip in tests/ that stands for a missing part is tagged with it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.parts import PARTS, part_of, part_reason

REPO = Path(__file__).resolve().parents[2]

PLANTED = '''
import pytest
from tests.parts import needs_part, require_part

def test_needs_sshd():
    require_part("sshd", "no sshd here")

@needs_part("qemu", True, "no qemu here")
def test_needs_qemu():
    pass

def test_two_cpus():
    pytest.skip("needs two CPUs")
'''
PLANTED_MODULE = '''
from tests.parts import require_part
require_part("chromium", "no browser here")

def test_never():
    pass
'''


def _pytest(tmp_path: Path, require: str | None) -> subprocess.CompletedProcess[str]:
    """pytest with the parts plugin over two planted modules, RTBENCH_REQUIRE=require (a
    module that fails to collect does not stop the other here)."""
    (tmp_path / "test_planted.py").write_text(PLANTED)
    (tmp_path / "test_planted_module.py").write_text(PLANTED_MODULE)
    # the planted run's own options only: a caller's PYTEST_ADDOPTS (a plugin of a
    # bench measuring the suite, `-p pytest_cpu`) is not importable from tmp_path
    env = {k: v for k, v in os.environ.items()
           if k not in ("RTBENCH_REQUIRE", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(REPO)
    if require is not None:
        env["RTBENCH_REQUIRE"] = require
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.parts", "-q",
                           "-p", "no:cacheprovider", "--continue-on-collection-errors", "-rA",
                           "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=120,
                          check=False, cwd=tmp_path)


def test_required_part_skips_fail(tmp_path: Path) -> None:
    """Without RTBENCH_REQUIRE every planted skip is a skip (exit 0); with it, the skips
    of the parts it names fail (a module skipped too), the others stay skips."""
    free = _pytest(tmp_path, None)
    assert free.returncode == 0, free.stdout[-2000:]
    assert "4 skipped" in free.stdout, free.stdout[-2000:]
    strict = _pytest(tmp_path, "sshd,chromium")
    assert strict.returncode == 1, strict.stdout[-2000:]
    assert "required part sshd is missing (RTBENCH_REQUIRE): no sshd here" in strict.stdout
    assert "required part chromium is missing" in strict.stdout
    assert "1 failed, 2 skipped, 1 error" in strict.stdout, strict.stdout[-2000:]


def test_unknown_required_part_is_refused(tmp_path: Path) -> None:
    """A misspelt part is a usage error, not a requirement silently met."""
    done = _pytest(tmp_path, "sshd,sshdd")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "unknown part 'sshdd'" in done.stdout + done.stderr


def test_reason_tag_round_trip() -> None:
    """A tagged reason names its part; an untagged one none."""
    assert part_of(part_reason("postgresql", "not installed")) == "postgresql"
    assert part_of("needs two CPUs") is None
    with pytest.raises(ValueError):
        part_reason("nonsense", "x")


# a skip in tests/ is either tagged with a part (tests/parts.py) or says, with a comment
# "# not a part: WHY" on its line, the line before or the line after, which condition it
# stands for
SKIP_CALL = re.compile(r"pytest\.skip\(|skipif\(|importorskip\(")


def test_every_skip_names_its_part_or_its_condition() -> None:
    """No skip in tests/ can hide a missing part from RTBENCH_REQUIRE: each goes through
    tests/parts.py or is marked as a condition that no machine setup provides."""
    untagged = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path.name in ("parts.py", "test_parts.py"):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if not SKIP_CALL.search(line) or "pytest.skip.Exception" in line:
                continue
            context = " ".join(lines[max(0, number - 1):number + 2])
            if "# not a part:" not in context:
                untagged.append(f"{path.relative_to(REPO)}:{number + 1}: {line.strip()}")
    assert not untagged, "\n".join(untagged)


def test_ci_requires_what_it_installs() -> None:
    """.ci/run sets RTBENCH_REQUIRE to every part (what CI installs)."""
    text = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    found = re.search(r"RTBENCH_REQUIRE=([a-z0-9,-]+)", text)
    assert found is not None
    assert set(found.group(1).split(",")) == set(PARTS)


def test_make_test_fails_when_no_tests_ran(tmp_path: Path) -> None:
    """pytest's exit 5 (no tests collected) fails `make test-fast` (and `make test`, the
    same define) with one line saying so; it was turned into success."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'no tests ran in 0.01s'\nexit 5\n")
    fake.chmod(0o755)
    # a venv whose stamp is newer than pyproject.toml: the set-up's sub-make, which
    # make's -o does not reach, finds it made (the checkout's own .venv may be older
    # than a pyproject.toml changed since, and would be set up again)
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".dev").touch()
    done = subprocess.run(["make", "-s", "-o", "check-c", "test-fast", f"VENV={venv}",
                           f"VPY={fake}"], cwd=REPO, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "make: pytest collected no tests (exit 5): nothing was tested" in done.stdout
