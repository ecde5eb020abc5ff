"""A failure whose report pytest cannot make fails as its test, and the run goes on
(tests/unformatted_failures.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# pytest's own report-making raising, as it did on a frame without a line number
CONFTEST = '''
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    if call.when == "call" and call.excinfo is not None:
        raise TypeError("unsupported operand type(s) for -: 'NoneType' and 'int'")
'''

TESTS = '''
def test_fails():
    assert 1 + 1 == 3, "the failure itself"

def test_after():
    pass
'''


def run_pytest(folder: Path, *plugins: str) -> subprocess.CompletedProcess[str]:
    """pytest on folder's tests, with these plugins alone (none of the installed ones: the
    child starts in a second), in a child."""
    args = [arg for plugin in plugins for arg in ("-p", plugin)]
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args, str(folder)],
                          capture_output=True, text=True, timeout=120, check=False,
                          cwd=folder, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin",
                                           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})


def test_a_report_pytest_cannot_make_is_a_failure_of_its_test(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_x.py").write_text(TESTS)
    without = run_pytest(tmp_path)
    assert without.returncode == 3 and "INTERNALERROR" in without.stdout + without.stderr
    done = run_pytest(tmp_path, "tests.unformatted_failures")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
    assert "FAILED test_x.py::test_fails" in done.stdout
    assert "pytest could not format this failure (TypeError: unsupported operand" \
        in done.stdout
    assert "AssertionError: the failure itself" in done.stdout
