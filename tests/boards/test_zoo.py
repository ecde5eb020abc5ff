"""The board zoo (tools/zoo.py), each board booted once under qemu's CPU emulation and
reached over its serial console as serial:///... (tests/host/qemu_board.py): the smoke
suite runs and is stored with the board's kernel; a traced run next to fifoburst (a
SCHED_FIFO 99 thread of ours bursting 100 ms, tests/boards/fifoburst.c, built for the
board's CPU with Zig) is explained with fifoburst first and never the board's own timer
interrupt; what the one-CPU guest cannot run (noise, pi, a build load without a compiler:
tests/boards/unmade.toml) ends as inconclusive cells, the run completed; nothing of
rtbench is left running and tracefs is as it was.  The guests have one vCPU, as most
boards of the studies did (tools/zoo.py gives users two where the machine runs SMP).

`make test-boards` runs these (RTBENCH_TEST_BOARDS=1); `make test` skips them.
RTBENCH_ZOO_BOARDS=arm64,ppc64el tests those boards alone, and fails (not skips) one of
them that cannot run here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rtbench.rtprobe.build import ARCHES, zig_available
from tests.host.qemu_board import QemuBoard
from tests.parts import import_part, require_part
from tests.session_lock import session_lock
from tools.zoo import (
    BOARDS,
    BOARDS_VARIABLE,
    QEMU_PACKAGES,
    Board,
    assemble,
    boot_args,
    default_dir,
    listed_boards,
)

REPO = Path(__file__).resolve().parents[2]
SUITE = Path(__file__).with_name("fifoburst.toml")
UNMADE = Path(__file__).with_name("unmade.toml")
BURST_SOURCE = Path(__file__).with_name("fifoburst.c")

import_part("serial")
pytestmark = [pytest.mark.qemu]


def zoo_dir() -> Path:
    """Where the boards are assembled: RTBENCH_ZOO_DIR, else tools/zoo.py's default (the
    kernels and busybox are downloaded once and kept there)."""
    given = os.environ.get("RTBENCH_ZOO_DIR")
    return Path(given) if given else default_dir()


# The boards under test: RTBENCH_ZOO_BOARDS's, else all (a board listed there must run).
UNDER_TEST = listed_boards(os.environ.get(BOARDS_VARIABLE))


def require_board_parts(board: Board) -> None:
    """Skip (fail, when RTBENCH_ZOO_BOARDS lists the board) for want of a part."""
    reason = why_not(board)
    if reason is None:
        return
    if os.environ.get(BOARDS_VARIABLE, "").strip():
        pytest.fail(f"{board.name} is listed in {BOARDS_VARIABLE} but cannot run here: "
                    f"[{reason[0]}] {reason[1]}")
    require_part(*reason)


def why_not(board: Board) -> tuple[str, str] | None:
    """(the missing part, why) this board cannot be tested here, or None."""
    if not zig_available():
        return ("zig", "needs the ziglang package (the dev extra)")
    import shutil

    if shutil.which(board.qemu) is None:
        return ("qemu", f"{board.qemu} missing (apt-get install "
                        f"{QEMU_PACKAGES[board.qemu]})")
    if os.geteuid() != 0 and not (zoo_dir() / board.name / "kernel").is_file():
        return ("root", "assembling the zoo adds Debian architectures: root (or run "
                        "tools/zoo.py as root once)")
    return None


def said(done: subprocess.CompletedProcess[str]) -> str:
    """What a failed rtbench said: the ends of its stdout (where a run's closing lines and
    errors of the board go) and stderr."""
    return f"exit {done.returncode}; stdout: {done.stdout[-2000:]}; stderr: {done.stderr[-2000:]}"


def build_fifoburst(board: Board, into: Path) -> Path:
    """fifoburst for the board's CPU: static, musl, Zig's C compiler."""
    arch = ARCHES[board.probe_arch]
    out = into / "fifoburst"
    cpu = [f"-mcpu={arch.cpu}"] if arch.cpu else []
    done = subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", arch.zig_target,
                           *cpu, "-static", "-Os", "-s", "-o", str(out), str(BURST_SOURCE)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return out


class Guest:
    """A booted zoo board and what the tests learnt about it."""

    def __init__(self, board: Board, qemu: QemuBoard, release: str, env: dict[str, str],
                 boot_s: float) -> None:
        self.board = board
        self.qemu = qemu
        self.release = release
        self.env = env
        self.boot_s = boot_s
        self.uri = f"serial://{qemu.tty}?baud=115200"
        self.tracefs_before = ""

    def rtbench(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """`rtbench ARGS` against this guest's private store."""
        return subprocess.run([sys.executable, "-m", "rtbench", *args], env=self.env,
                              capture_output=True, text=True, timeout=timeout, check=False,
                              cwd=REPO)

    def latest_run(self) -> Any:
        """The newest run of this guest's store."""
        from rtbench.store import Store

        store = Store.open(f"sqlite:///{self.env['XDG_DATA_HOME']}/rtbench/results.db")
        return store.get_run(store.list_runs()[0].id)

    def shell(self, command: str) -> str:
        """A command's stdout on the guest, through rtbench's serial target."""
        done = subprocess.run([sys.executable, "-c", ON_BOARD, self.uri, command], env=self.env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout


# Runs one command on the board through rtbench's serial target (which also clears the
# jobs a former session left: the checks below run after that).
ON_BOARD = """
import sys
from rtbench.rtprobe.provider import Probes
from rtbench.targets.base import open_target
with open_target(sys.argv[1], provider=Probes()) as board:
    sys.stdout.write(board.run(sys.argv[2], timeout_s=120).stdout)
"""
# The board's tracefs state: mounted where, tracing on, the events enabled.
TRACEFS_STATE = ("grep -c tracefs /proc/mounts; for d in /sys/kernel/tracing "
                 "/sys/kernel/debug/tracing; do [ -r $d/tracing_on ] && "
                 "echo $d $(cat $d/tracing_on) $(cat $d/set_event | wc -l); done; true")


@pytest.fixture(scope="module", params=[pytest.param(name, marks=pytest.mark.xdist_group(
    f"zoo-{name}")) for name in UNDER_TEST])
def guest(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Guest]:
    """The board assembled (once: kept in the zoo's folder) and booted once for its tests."""
    board = BOARDS[request.param]
    require_board_parts(board)
    work = tmp_path_factory.mktemp(f"zoo-{board.name}")
    burst = build_fifoburst(board, work)
    with session_lock(f"zoo-{board.name}"):
        where = assemble(board, zoo_dir(), [burst])
        # the initramfs is read whole when qemu starts: a private copy for this boot
        initramfs = work / "initramfs.cpio"
        initramfs.write_bytes((where / "initramfs.cpio").read_bytes())
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(work / "data")
    env["PYTHONPATH"] = str(REPO)
    for name in ("RTBENCH_DB", "RTBENCH_PROBE"):
        env.pop(name, None)
    start = time.monotonic()
    qemu = QemuBoard(where / "kernel", work, initramfs, board, cpus=1)
    try:
        release = (where / "release").read_text().strip()
        made = Guest(board, qemu, release, env, time.monotonic() - start)
        made.tracefs_before = made.shell(TRACEFS_STATE)
        yield made
    finally:
        qemu.stop()


def test_smoke_over_the_console(guest: Guest) -> None:
    """The smoke suite completes over the serial console and is stored with the board's
    kernel and arch."""
    done = guest.rtbench("run", "smoke", "--scale", "0.5", "--target", guest.uri)
    assert done.returncode in (0, 1), f"{guest.board.name}: {said(done)}"
    run = guest.latest_run()
    assert run.suite == "smoke" and run.kernel == guest.release, (run.suite, run.kernel)
    assert run.status in ("ok", "fail"), run.status
    assert all(m.windows for sc in run.scenarios for m in sc.measurements)


def test_what_a_one_cpu_board_cannot_run_is_inconclusive(guest: Guest) -> None:
    """On the one-CPU guest noise and pi (a second CPU) and the build scenario (a C
    compiler) are cells that say why, not errors: the run ends normally, stored
    inconclusive with exit 5, the cyclic cell measured, /var/tmp there for the load."""
    done = guest.rtbench("run", str(UNMADE), "--target", guest.uri)
    assert done.returncode == 5, f"{guest.board.name}: {said(done)}"
    run = guest.latest_run()
    assert run.status == "inconclusive" and run.suite == "zoo-unmade", run.status
    cells = {(sc.name, m.name): m for sc in run.scenarios for m in sc.measurements}
    measured = cells[("idle", "cyclic-1ms")]
    assert measured.status == "ok" and measured.windows, (measured.status, measured.reason)
    for name in ("noise", "pi"):
        cell = cells[("idle", name)]
        assert cell.status == "inconclusive", (name, cell.status, cell.reason)
        assert cell.reason is not None and \
            cell.reason.startswith("needs 2 CPUs, the board has 1 ("), cell.reason
    for name in ("cyclic-1ms", "noise", "pi"):
        cell = cells[("build", name)]
        assert cell.status == "inconclusive", (name, cell.status, cell.reason)
        assert cell.reason is not None and cell.reason.startswith(
            "load build cannot run on this board: no C compiler"), cell.reason
    from rtbench.analysis.verdict import verdict_of

    verdict = verdict_of(run)
    assert verdict.headline.startswith("INCONCLUSIVE: 5 of 6 measurements"), verdict.headline
    assert len(verdict.inconclusive) == 5, verdict.inconclusive


def test_trace_names_fifoburst_first(guest: Guest) -> None:
    """A traced run next to fifoburst: `explain` ranks fifoburst first, and the board's
    own timer interrupt is never a cause."""
    done = guest.rtbench("run", str(SUITE), "--trace=on", "--target", guest.uri)
    assert done.returncode in (0, 1), f"{guest.board.name}: {said(done)}"
    record_traces(guest)
    explained = guest.rtbench("explain", "latest", "--json")
    assert explained.returncode == 0, explained.stderr
    cells = json.loads(explained.stdout)["cells"]
    causes = [c for cell in cells for c in cell["causes"]]
    assert causes, f"{guest.board.name}: no cause found ({explained.stdout[:2000]})"
    ranked = [(c["label"], c["spikes_main"], c["share_latency"]) for c in cells[0]["causes"]]
    assert "fifoburst" in ranked[0][0], (guest.board.name, ranked[:6])
    timer = guest.board.timer_irq
    own_timer = [c["label"] for c in causes
                 if c["kind"] == "irq" and c["label"].split()[-1:] == [timer]]
    assert own_timer == [], (guest.board.name, own_timer)


def record_traces(guest: Guest) -> None:
    """With RTBENCH_ZOO_RECORD=DIR: the traced run's spikes as
    DIR/recorded-BOARD-fifoburst.json, a fixture for the attribution tests (as in
    tests/host/data/trace/arch/, read by tests/host/test_trace_arch.py)."""
    into = os.environ.get("RTBENCH_ZOO_RECORD")
    if not into:
        return
    measured = guest.latest_run().scenarios[0].measurements[0]
    load = re.findall(r'command = "([^"]+)"', SUITE.read_text())[0]
    source = (f"rtbench run tests/boards/fifoburst.toml ({load}) --trace=on on the zoo board "
              f"{guest.board.name} (kernel {guest.release}, qemu TCG, serial console), "
              f"make test-boards; console='{boot_args(guest.board)}'")
    fixture = {"source": source, "traces": measured.traces,
               "trace_info": measured.trace_info}
    Path(into).mkdir(parents=True, exist_ok=True)
    (Path(into) / f"recorded-{guest.board.name}-fifoburst.json").write_text(
        json.dumps(fixture, separators=(",", ":")) + "\n")


def test_nothing_left_and_tracefs_as_it_was(guest: Guest) -> None:
    """After the runs: no rtbench job, load, fifoburst or rtprobe left on the board, and
    tracefs mounted (or not) and switched as before."""
    left = guest.shell("ls -d /tmp/rtbench/job-* 2>/dev/null | wc -l; "
                       "ps | grep -c '[f]ifoburst\\|[r]tprobe-\\|[r]tbench-job'")
    assert left.split() == ["0", "0"], left
    assert guest.shell(TRACEFS_STATE) == guest.tracefs_before


@pytest.mark.xdist_group("zoo-labgrid")
# not a part: a board the run did not pick (RTBENCH_ZOO_BOARDS), not a missing part
@pytest.mark.skipif("arm64" not in UNDER_TEST, reason=f"arm64 is not in {BOARDS_VARIABLE}")
def test_labgrid_environment_boots_and_measures_the_board(tmp_path: Path) -> None:
    """The zoo's labgrid.yaml for arm64 (the quickest board to boot): rtbench's
    labgrid-env target starts qemu through labgrid's QEMUDriver, waits for the boot,
    runs smoke on the console socket and switches the guest off afterwards."""
    import_part("labgrid")
    board = BOARDS["arm64"]
    require_board_parts(board)
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["PYTHONPATH"] = str(REPO)
    for name in ("RTBENCH_DB", "RTBENCH_PROBE"):
        env.pop(name, None)
    # the board's files are the guest fixture's too: held while qemu reads them
    with session_lock(f"zoo-{board.name}"):
        where = assemble(board, zoo_dir(), [])
        done = subprocess.run([sys.executable, "-m", "rtbench", "run", "smoke", "--scale",
                               "0.3", "--target", f"labgrid-env:{where}/labgrid.yaml"],
                              env=env, capture_output=True, text=True, timeout=500,
                              check=False, cwd=REPO)
    assert done.returncode in (0, 1), said(done)
    from rtbench.store import Store

    store = Store.open(f"sqlite:///{tmp_path}/data/rtbench/results.db")
    run = store.get_run(store.list_runs()[0].id)
    assert run.target == f"labgrid-env:{where}/labgrid.yaml:main"
    assert run.kernel == (where / "release").read_text().strip()
    assert run.status in ("ok", "fail")
    # the guest was switched off with the run (labgrid's qemu: its monitor on stdio; the
    # guest fixture's qemu of the same kernel has none)
    left = subprocess.run(["pgrep", "-f", f"qemu-system-aarch64 -kernel {where}/kernel .*-qmp"],
                          capture_output=True, text=True, check=False)
    assert left.stdout.strip() == "", left.stdout
