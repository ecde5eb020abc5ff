"""What a plain `make test` leaves to CI (docs/testing.md, "What make test leaves to CI"):
the tests marked `ci` are deselected and the run says so; RTBENCH_TEST_ALL=1, which
.ci/run sets, runs them; make dev and check-c run side by side after probe/'s build."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import CI_ONLY

REPO = Path(__file__).resolve().parents[2]


def make_dry_run(target: str, **env: str) -> str:
    """`make -n TARGET` in the checkout (recursive makes dry-run too), with env set."""
    done = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=REPO,
                          env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout


def pytest_line(dry_run: str) -> str:
    """The line of a dry run that starts pytest."""
    return next(line for line in dry_run.splitlines() if " -m pytest " in line)


def test_every_ci_only_entry_is_a_test_file() -> None:
    assert CI_ONLY
    for entry in CI_ONLY:
        assert (REPO / entry.split("::", 1)[0]).is_file(), entry


def test_make_test_leaves_the_ci_tests_out_and_says_so() -> None:
    plain = make_dry_run("test", RTBENCH_TEST_ALL="")
    assert '-m "not ci"' in pytest_line(plain)
    assert "make test: left to CI" in plain and "RTBENCH_TEST_ALL=1" in plain
    everything = make_dry_run("test", RTBENCH_TEST_ALL="1")
    assert "not ci" not in pytest_line(everything)


def test_ci_runs_everything() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    assert "export RTBENCH_TEST_ALL=1" in ci
    assert ci.index("export RTBENCH_TEST_ALL=1") < ci.index("make test 2>&1")


def test_venv_and_unit_tests_are_set_up_side_by_side_after_the_probe() -> None:
    lines = make_dry_run("test", RTBENCH_TEST_ALL="").splitlines()
    probe = next(i for i, line in enumerate(lines) if line.startswith("make -C probe -j"))
    both = next(i for i, line in enumerate(lines)
                if (".venv/.dev &" in line or ".venv/.test &" in line) and "check-c" in line)
    assert probe < both < lines.index(pytest_line("\n".join(lines)))
