"""The real parts some tests need (sshd, qemu, PostgreSQL, ...), and the one way a test
says that one is missing here.

A test that cannot run without a part skips through `require_part` (or the mark from
`needs_part`), which tags the skip's reason with the part's name: "[sshd] ...".  Where
RTBENCH_REQUIRE names that part (a comma-separated list of PARTS; .ci/run sets it to
everything CI installs), the hook in tests/conftest.py turns such a skip into a failure:
on a machine meant to have the part, its absence is a broken setup, not a pass.
Skips for a condition rather than a part (two CPUs, an x86_64 host, tracefs already
mounted) stay plain skips.
"""

from __future__ import annotations

import os
import re
from typing import NoReturn

import pytest

# part -> what provides it (for the failure line)
PARTS = {
    "root": "run the tests as root",
    "sshd": "apt-get install openssh-server openssh-client",
    "qemu": "apt-get install qemu-system-x86 linux-image-amd64 (kernels in /boot)",
    "qemu-user": "apt-get install qemu-user-static",
    "postgresql": "apt-get install postgresql",
    "chromium": "apt-get install chromium chromium-driver",
    "tracefs": "a kernel with tracefs (mount -t tracefs nodev /sys/kernel/tracing)",
    "zig": "pip install ziglang (make dev)",
    "cc": "apt-get install build-essential",
    "cross-gcc": "apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross",
    "musl": "apt-get install musl-tools",
    "rt-tests": "apt-get install rt-tests",
    "tools": "apt-get install stress-ng jitterdebugger rtla (the imported tools)",
    "socat": "apt-get install socat",
    "util-linux": "apt-get install util-linux (script, unshare, setpriv, chroot)",
    "binutils": "apt-get install binutils",
    "tmpfs": "root, to mount a tmpfs",
    "netns": "root and iproute2 (network namespaces for the sshd boards)",
    "prometheus": "apt-get install prometheus",
    "python-dev": "pip install -e '.[dev]' (make dev)",
}
REQUIRE_VARIABLE = "RTBENCH_REQUIRE"
_TAG = re.compile(r"^\[([a-z0-9-]+)\] ")


def required_parts() -> set[str]:
    """The parts RTBENCH_REQUIRE names; pytest.UsageError for a name not in PARTS."""
    names = {n.strip() for n in os.environ.get(REQUIRE_VARIABLE, "").split(",") if n.strip()}
    unknown = sorted(names - set(PARTS))
    if unknown:
        raise pytest.UsageError(f"{REQUIRE_VARIABLE}: unknown part {unknown[0]!r} "
                                f"(known: {', '.join(sorted(PARTS))})")
    return names


def part_reason(part: str, reason: str) -> str:
    """A skip reason tagged with its part: '[part] reason'."""
    if part not in PARTS:
        raise ValueError(f"unknown test part {part!r}")
    return f"[{part}] {reason}"


def part_of(reason: str) -> str | None:
    """The part a skip reason is tagged with, or None."""
    found = _TAG.match(reason)
    return found.group(1) if found else None


def require_part(part: str, reason: str) -> NoReturn:
    """Skip the test (or module, at module level) for want of part."""
    pytest.skip(part_reason(part, reason), allow_module_level=True)


def needs_part(part: str, missing: bool, reason: str) -> pytest.MarkDecorator:
    """A skipif mark: skip when missing, for want of part."""
    return pytest.mark.skipif(missing, reason=part_reason(part, reason))


def import_part(module: str, part: str = "python-dev") -> object:
    """importorskip whose skip is tagged with part."""
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        require_part(part, f"{module} is not installed ({PARTS[part]})")


def missing_part(part: str, reason: str) -> None:
    """For a test that goes on another way without part: fail when part is required."""
    if part in required_parts():
        pytest.fail(f"required part {part} is missing ({REQUIRE_VARIABLE}): {reason}; "
                    f"{PARTS[part]}")


def required_failure(reason: str) -> str | None:
    """The failure text for a skip with this reason when its part is required, else None."""
    part = part_of(reason)
    if part is None or part not in required_parts():
        return None
    return (f"required part {part} is missing ({REQUIRE_VARIABLE}): "
            f"{reason[len(part) + 3:]}; {PARTS[part]}")


# ------------------------------------------------------------------ the pytest plugin
# (tests/conftest.py loads this module as a plugin)


def pytest_configure(config: pytest.Config) -> None:
    """Refuse an RTBENCH_REQUIRE naming an unknown part before anything runs."""
    required_parts()


def _fail_if_required(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Turn report, a skip for want of a required part, into a failure."""
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return
    reason = str(report.longrepr[2]).removeprefix("Skipped: ")
    failure = required_failure(reason)
    if failure is not None:
        report.outcome = "failed"
        report.longrepr = failure


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    """A test skipped for want of a required part fails."""
    outcome = yield
    _fail_if_required(outcome.get_result())  # type: ignore[attr-defined]
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    """A module skipped for want of a required part fails to collect."""
    outcome = yield
    _fail_if_required(outcome.get_result())  # type: ignore[attr-defined]
    return None
