"""Shared fixtures: the real rtprobe (built once per session) and an rtbench runner."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli_inprocess import run_in_process
from tests.measuring_cli import run_measuring
from tests.session_lock import session_lock
from tests.slow_list import read_slow_list

REPO = Path(__file__).resolve().parent.parent
# The tests run many measurements at once on a few CPUs, so an idle scenario is never
# idle here: its runs would exit 6 (NOT AS DEFINED) by chance.  Tests run with the
# user's switch for a known-busy host; tests/host/test_verdict_exits.py unsets it to
# test exit 6 itself.
os.environ.setdefault("RTBENCH_ACCEPT_UNDEFINED", "1")

# --dist loadgroup for pytest-xdist, read from the workers' collection (tests/xdist_groups.py);
# a skip for want of a part that RTBENCH_REQUIRE names fails (tests/parts.py); a failure
# pytest cannot format fails as its test (tests/unformatted_failures.py)
pytest_plugins = ["tests.xdist_groups", "tests.parts", "tests.unformatted_failures"]


@pytest.fixture(scope="session")
def probe_path() -> Path:
    """Build probe/ with make (once per worker, one worker at a time) and return
    build/rtprobe."""
    with session_lock("probe-make"):
        done = subprocess.run(["make", "-C", str(REPO / "probe")], capture_output=True,
                              text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"make -C probe failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    path = REPO / "probe" / "build" / "rtprobe"
    assert path.is_file()
    return path


@pytest.fixture()
def rtbench_env(tmp_path: Path, probe_path: Path) -> dict[str, str]:
    """Environment for running rtbench: private data dir, the session's probe."""
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["RTBENCH_PROBE"] = str(probe_path)
    env["PYTHONPATH"] = str(REPO) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["COLUMNS"] = "200"
    env.pop("RTBENCH_DB", None)
    return env


RunCli = Callable[..., subprocess.CompletedProcess[str]]

# Commands that measure for real: run in a child of their own (one at a time across
# workers, see the realtime lock), as a user runs them.
MEASURING = ("run", "cyclictest", "fleet")


@pytest.fixture()
def realtime() -> Iterator[None]:
    """The machine-wide realtime lock for the whole test: for a test whose board stand-in
    (an sshd or a console on this machine) runs rtprobe for real at an RT priority, from
    the test's own process or a plain `python -m rtbench` child (a board's rtprobe at
    SCHED_FIFO 80 beside another worker's traced measurement took the blame for 47 of
    the 75 spikes that test's injector caused)."""
    with session_lock("realtime"):
        yield


def measures(args: tuple[str, ...]) -> bool:
    """True when `rtbench ARGS` may run the probe for real (not --simulate, not --help)."""
    from rtbench.cli import COMMANDS

    command = next((arg for arg in args if arg in COMMANDS), None)
    return command in MEASURING and not {"--simulate", "--help"} & set(args)


@pytest.fixture()
def run_cli(rtbench_env: dict[str, str]) -> RunCli:
    """Run `rtbench ARGS...` to completion (bounded) and capture its output: in this
    process (tests/cli_inprocess.py) unless it measures for real, then as
    `python -m rtbench` in a child (tests/measuring_cli.py, under the realtime lock)."""

    def run(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        if not measures(args):
            return run_in_process(args, rtbench_env, REPO, timeout=timeout)
        # a real measurement: one at a time across xdist workers (see probe/conftest.py);
        # the child takes the realtime lock when its first suite starts to run
        # (tests/measuring_cli.py), so other workers do not wait through its start-up,
        # and a command refused before it measures does not wait for theirs
        # the test's phase now (rtbench_env was made in its setup), for RTBENCH_LOCK_LOG
        env = {**rtbench_env, "PYTEST_CURRENT_TEST": os.environ.get("PYTEST_CURRENT_TEST", "")}
        return run_measuring(args, env, REPO, timeout)

    return run


def pids_with(marker: str) -> list[int]:
    """PIDs of live (non-zombie) processes whose command line contains marker."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def wait_until_gone(marker: str, timeout_s: float) -> list[int]:
    """Poll until no process carries marker; return what is left after timeout_s."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        left = pids_with(marker)
        if not left:
            return []
        time.sleep(0.1)
    return pids_with(marker)


# Markers of the slow real-part tests (registered in pyproject.toml; make test-fast skips them).
SLOW_MARKERS = ("qemu", "browser", "cross", "slow")

# Tests marked `slow` here, by where they are, rather than in their modules: the real parts
# that take 10 s to minutes each on 2 vCPUs (docs/testing.md; durations in BENCHMARKS.md).
# A module or a test named, or every test using one of the fixtures named.
SLOW_PARTS = (
    # board stand-ins: sshd in network namespaces, serial consoles, labgrid places, and
    # fleets of them; every test runs the CLI over the link
    "tests/host/test_target_ssh.py",
    "tests/host/test_target_serial.py",
    "tests/host/test_target_labgrid.py",
    "tests/host/test_fleet.py",
    # a live uvicorn server on PostgreSQL: 8 x 20 concurrent uploads, schemathesis
    "tests/host/test_server_live.py",
    # an SQLite server held locked while uploads queue
    "tests/host/test_faults.py::test_sqlite_server_queues_uploads_past_a_lock",
)
SLOW_FIXTURES = (
    "study_db",  # the five study suites run with their real loads (50 x find /, floods)
    "sanitized_probe",  # rtprobe built with ASan and UBSan
)


# Tests marked `slow` because they take SLOW_S seconds or more alone (tests/slow_tests.txt).
SLOW_BY_TIME = read_slow_list()

# Tests marked `ci` here (a module, or a test by its node id): the ones a plain `make test`
# leaves to CI to keep a newcomer's first run within its 8 minutes on 2 vCPUs.  make test
# deselects them (`-m "not ci"`) and says so at its start and end; RTBENCH_TEST_ALL=1
# make test, which .ci/run runs, runs them too (docs/testing.md, "What make test leaves
# to CI").  The import memory bounds (a child Python importing files of 3-8 MiB in every
# format, 268 s of tests/slow_tests.txt's serial run): the largest block of the suite's
# CPU work; the importers' own tests stay in make test.  The qemu-system guests (Debian's
# generic and PREEMPT_RT kernels booted under TCG, smoke and quick over their serial
# consoles, the 9600-baud console): 245 s of wall time on two workers and, with their
# emulated CPUs, about a third of the CPU of a newcomer's run (BENCHMARKS.md, "make test
# for a newcomer, fourth pass"); the serial target's own tests (test_target_serial.py,
# a shell on a pty) stay in make test, and make test-boards boots the zoo.
CI_ONLY = (
    "tests/host/test_import_memory.py",
    "tests/host/test_import_memory_formats.py",
    "tests/host/test_qemu_serial.py",
    "tests/host/test_qemu_slow_console.py",
    # the schemathesis fuzzers of the API (generated requests against a live server);
    # the endpoints' own tests stay in make test
    "tests/host/test_lab_ops_server.py::test_schemathesis_admin_endpoints",
    "tests/host/test_regressions.py::test_schemathesis_on_the_regressions_endpoint",
    "tests/host/test_server_live.py::test_schemathesis",
    # the wheel built and installed in a fresh venv (pip's isolated build environment)
    "tests/host/test_target_ssh.py::test_wheel_carries_what_a_board_needs",
    "tests/host/test_target_ssh.py::test_board_measured_from_a_wheel_install",
    # the Zig-built board probes: a cold Zig cache builds each arch's C library first
    # (make test-arches runs them too)
    "tests/probe/test_arches.py",
)


def named_by(nodeid: str, parts: tuple[str, ...]) -> bool:
    """True when nodeid is one of parts or a test (or parameter) of one of them."""
    return any(nodeid == part or nodeid.startswith((f"{part}::", f"{part}["))
               for part in parts)


def mark_slow_parts(item: pytest.Item) -> None:
    """Mark item `slow` when SLOW_PARTS, SLOW_FIXTURES or tests/slow_tests.txt name it,
    and `ci` when CI_ONLY does."""
    nodeid = item.nodeid
    named = nodeid in SLOW_BY_TIME or named_by(nodeid, SLOW_PARTS)
    if named or any(name in getattr(item, "fixturenames", ()) for name in SLOW_FIXTURES):
        item.add_marker(pytest.mark.slow)
    if named_by(nodeid, CI_ONLY):
        item.add_marker(pytest.mark.ci)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    """Say at the end of a run that left the `ci` tests out (make test's `-m "not ci"`)
    what it left out and how to run it."""
    if "not ci" not in (config.getoption("markexpr", "") or ""):
        return
    terminalreporter.write_line(
        f"left to CI: the tests marked `ci` ({', '.join(CI_ONLY)}); "
        "RTBENCH_TEST_ALL=1 make test runs them too (docs/testing.md)")


def shares_module_fixture(item: pytest.Item) -> bool:
    """True when item uses a module- or session-scoped fixture defined in its own module:
    a setup (a booted server, built probes) meant to be made once for all its tests."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    module_id = item.nodeid.split("::", 1)[0]
    return any(defs[-1].scope in ("module", "session") and defs[-1].baseid == module_id
               for defs in info.name2fixturedefs.values())


def is_slow(item: pytest.Item) -> bool:
    """True when item carries one of SLOW_MARKERS."""
    return any(item.get_closest_marker(name) is not None for name in SLOW_MARKERS)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow real parts (SLOW_PARTS); for pytest-xdist (--dist loadgroup): keep a
    module whose own fixtures are shared by its tests on one worker (so they are set up
    once), and hand out the modules holding slow tests first, so that they do not start
    last and end the run late."""
    for item in items:
        mark_slow_parts(item)
        module = item.nodeid.split("::", 1)[0]
        if item.get_closest_marker("xdist_group") is None and module in REALTIME_PROBE:
            item.add_marker(pytest.mark.xdist_group(REALTIME_GROUP))
        if item.get_closest_marker("xdist_group") is None and shares_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(module))
    slow_modules = {item.nodeid.split("::", 1)[0] for item in items if is_slow(item)}
    items.sort(key=lambda item: start_rank(item, slow_modules))


# The longest work units of make test, started first and so on workers of their own (the
# scheduler deals the units out in turn): the PREEMPT_RT guest's group (test_qemu_slow_console
# and test_qemu_serial's rt case), the nine arches' Zig builds, the generic guest (these
# three in CI), and the serial consoles' group (test_target_serial and test_target_labgrid:
# about three minutes of wall time, mostly waiting for consoles and deadlines; dealt out
# in collection order it started 183 s into a newcomer's run and ended it 40 s after the
# other workers).
LONGEST_FIRST = ("tests/host/test_qemu_slow_console.py",
                 "tests/probe/test_arches.py",
                 "tests/host/test_qemu_serial.py",
                 "tests/host/test_target_serial.py",
                 "tests/host/test_target_labgrid.py")


# The probe's modules whose tests measure for real, each measurement under the
# machine-wide realtime lock: one work unit (REALTIME_GROUP) on one worker, so that they
# follow each other instead of waiting for each other's lock from three workers (in a
# newcomer's make test they waited 110 s of the 172 s all tests waited for it), started
# right after LONGEST_FIRST as the longest unit left (about two minutes).  Their other
# tests (refusals, --help) are quick and go with them.
REALTIME_PROBE = ("tests/probe/test_load.py",
                  "tests/probe/test_cyclic_real.py",
                  "tests/probe/test_trace_probe.py",
                  "tests/probe/test_load_build.py",
                  "tests/probe/test_ipc.py",
                  "tests/probe/test_event.py",
                  "tests/probe/test_clock.py",
                  "tests/probe/test_trace_restore.py",
                  "tests/probe/test_wakeup.py",
                  "tests/probe/test_noise.py",
                  "tests/probe/test_nowait.py",
                  "tests/probe/test_pi.py",
                  "tests/probe/test_periodic.py",
                  "tests/probe/test_ctx.py")
REALTIME_GROUP = "realtime-probe"


def start_rank(item: pytest.Item, slow_modules: set[str]) -> tuple[int, bool]:
    """Sort key: LONGEST_FIRST's modules in its order, then REALTIME_PROBE's, then the
    modules holding slow tests, then the rest (a stable sort keeps collection order within
    each)."""
    module = item.nodeid.split("::", 1)[0]
    if module in LONGEST_FIRST:
        return LONGEST_FIRST.index(module), False
    if module in REALTIME_PROBE:
        return len(LONGEST_FIRST), False
    return len(LONGEST_FIRST) + 1, module not in slow_modules
