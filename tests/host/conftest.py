"""Fixtures of more than one module of tests/host."""

from __future__ import annotations

import subprocess
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.host.qemu_board import RT_GUEST_GROUP, QemuBoard, build_initramfs, kernels
from tests.xdist_groups import group_of

REPO = Path(__file__).resolve().parents[2]

# The rt_guest booted in this process, and the node id of the last test of its group in
# the run's order: the guest is powered off once that test is done instead of at the end
# of the session (an idle emulated guest kept one of the 2 vCPUs about 5 % busy for the
# rest of make test).
RT_GUESTS: list[QemuBoard] = []
LAST_OF_GROUP = pytest.StashKey[str]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Note the last test of RT_GUEST_GROUP in the order the tests run (xdist hands a
    group's tests to one worker in this order)."""
    grouped = [item.nodeid for item in session.items if group_of(item) == RT_GUEST_GROUP]
    if grouped:
        session.config.stash[LAST_OF_GROUP] = grouped[-1]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    """After the last test of RT_GUEST_GROUP: power the rt_guest off."""
    yield
    if item.nodeid == item.config.stash.get(LAST_OF_GROUP, None):
        for board in RT_GUESTS:
            board.stop()


@pytest.fixture(scope="session")
def rt_guest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QemuBoard]:
    """Debian's PREEMPT_RT kernel in qemu (tests/host/qemu_board.py), shared by the tests
    of xdist group RT_GUEST_GROUP (one worker runs them, so it boots once):
    test_qemu_slow_console.py and test_qemu_serial.py's rt case: fifo_hog in /bin, and
    the probes both push already in place (the static musl build and the board build of
    rtbench's default provider), so the serial target finds them by their checksum
    instead of sending some 300 KiB over the emulated console."""
    from rtbench.rtprobe.provider import Probes

    workdir = tmp_path_factory.mktemp("rt-guest")
    done = subprocess.run(["make", "-C", str(REPO / "probe"), "musl"], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    hog = workdir / "fifo_hog"
    done = subprocess.run(["musl-gcc", "-static", "-O2", "-Wall", "-Werror", "-o", str(hog),
                           str(REPO / "tests" / "host" / "fifo_hog.c")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    musl = Probes(REPO / "probe" / "build" / "musl" / "rtprobe")
    probes = (musl.probe_for("x86_64", small=True), Probes().probe_for("x86_64", small=True))
    # noirqdebug: on a busy host the emulated UART raises interrupts its threaded handler
    # finds nothing left to do for; after enough of them the kernel took IRQ 4 for stuck
    # and disabled it ("Disabling IRQ #4"), and the console stopped.  A traced run's
    # records over the console are some 200,000 interrupts, up to 99 % of them unhandled
    # (/proc/irq/4/spurious); booted without it, as test_qemu_serial.py's guest was, the
    # guest's console fell silent (until given up) twice in some 30 traced runs on a busy
    # host (once mid-run, once setting tracing up: rtbench's `lost`), not in the 6 with it
    board = QemuBoard(kernels()["rt"], workdir,
                      build_initramfs(workdir, (hog,), probes), append="noirqdebug")
    RT_GUESTS.append(board)
    try:
        yield board
    finally:
        board.stop()
        RT_GUESTS.remove(board)
