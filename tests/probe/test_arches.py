"""Every arch's Zig-built board rtprobe runs under qemu-user, writes schema-valid records,
fits its size bound, and reads as the native build (help, describe, messages).

A plain `make test` leaves this module to CI (CI_ONLY in tests/conftest.py): a cold Zig
cache builds each arch's C library first, about 60 CPU-seconds an arch here, a tenth of a
newcomer's whole run (docs/testing.md).  CI (RTBENCH_TEST_ALL=1) and `make test-arches`
run it; in CI (CI=true), where ziglang comes with the dev extra, a missing ziglang fails
these tests instead of skipping.  Which arches: RTBENCH_TEST_ARCHES, "all" (CI and `make
test-arches`: the nine) or a comma list; unset, all with RTBENCH_TEST_ALL=1, else this
host's arch alone (pytest run on this file).  A foreign arch under qemu-user stays in
make test through tests/probe/test_cross.py (the aarch64 cross build with gcc).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from probe_support import parse_ndjson, validate_records

from rtbench.rtprobe.build import ARCHES, build_probe, zig_available
from rtbench.rtprobe.elf import ELF_IDENTITY, ProbeArchError, check_probe_arch
from rtbench.rtprobe.provider import ProbeProvider
from rtbench.targets._board import BoardTarget, asks_simulation
from rtbench.targets.base import CommandResult, ProbeProcess
from tests.parts import require_part

# A short real run that needs no privileges (no RT policy, no locked memory, no PM QoS).
QUIET_RUN = ["--interval", "200us", "--threads", "1", "--warmup", "0", "--policy", "other",
             "--no-mlock", "--no-pmqos"]

# Cross builds and qemu-user: the slow real-part tests (make test runs them, test-fast not).
# the first test pays for the builds: nine arches after a probe change on a busy machine
# took more than the suite's 10 minutes a test
pytestmark = [pytest.mark.cross, pytest.mark.timeout(1800)]

# What `uname -m` says under each arch's qemu-user.
MACHINE = {"x86_64": "x86_64", "i386": "i686", "aarch64": "aarch64", "armhf": "armv7l",
           "armel": "armv5tel", "mips": "mips", "mipsel": "mips", "powerpc": "ppc",
           "ppc64le": "ppc64le", "riscv64": "riscv64"}


ARCHES_VARIABLE = "RTBENCH_TEST_ARCHES"


def selected_arches(value: str | None, machine: str) -> list[str]:
    """The arches to build and run: value as RTBENCH_TEST_ARCHES holds it ("all", a comma
    list, or unset: the host's arch by `uname -m`, x86_64 on a machine Zig builds no
    probe for), in ARCHES' order; ValueError naming an unknown arch."""
    if value is not None and value.strip() == "all":
        return list(ARCHES)
    if value is not None and value.strip():
        names = {name.strip() for name in value.split(",") if name.strip()}
    else:
        host = next((arch for arch, uname in MACHINE.items() if uname == machine), None)
        names = {host or "x86_64"}
    unknown = sorted(names - set(ARCHES))
    if unknown:
        raise ValueError(f"{ARCHES_VARIABLE}: unknown arch {unknown[0]!r} (known: all, "
                         f"{', '.join(ARCHES)})")
    return [arch for arch in ARCHES if arch in names]


def arches_asked(environ: Mapping[str, str]) -> str | None:
    """What the environment asks for: RTBENCH_TEST_ARCHES, else "all" where
    RTBENCH_TEST_ALL=1 (.ci/run: everything a plain make test leaves to CI), else None."""
    return environ.get(ARCHES_VARIABLE) or (
        "all" if environ.get("RTBENCH_TEST_ALL") == "1" else None)


TEST_ARCHES = selected_arches(arches_asked(os.environ), platform.machine())


def require_zig() -> None:
    """Skip without Zig's C compiler, except in CI, where its absence is a failure."""
    if zig_available():
        return
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but the ziglang package is missing: install the dev extra "
                    "(pip install -e '.[dev]'); board builds are never skipped in CI")
    require_part("zig", "needs the ziglang package (pip install ziglang)")


@pytest.fixture(scope="session")
def arch_probes() -> dict[str, Path]:
    """The selected arches' board probes (TEST_ARCHES), built once, side by side (cached
    across sessions)."""
    require_zig()
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        built = pool.map(lambda name: build_probe(name, jobs=1), TEST_ARCHES)
        return dict(zip(TEST_ARCHES, built, strict=True))


def runner_prefix(arch: str) -> list[str]:
    """How to run a binary of arch here: directly on its own CPU, else qemu-user."""
    if arch == "x86_64" and platform.machine() == "x86_64":
        return []
    qemu = ARCHES[arch].qemu
    if shutil.which(qemu) is None:
        require_part("qemu-user", f"{qemu} missing (apt-get install qemu-user-static)")
    cpu = {"armhf": ["-cpu", "cortex-a7"], "armel": ["-cpu", "arm926"]}.get(arch, [])
    return [qemu, *cpu]


@pytest.mark.parametrize("arch", TEST_ARCHES)
def test_arch_probe_runs_under_qemu(arch: str, arch_probes: dict[str, Path],
                                    validator: jsonschema.protocols.Validator) -> None:
    binary = arch_probes[arch]
    size = binary.stat().st_size
    print(f"{arch}: {size} bytes ({size / 1024:.1f} KiB, bound "
          f"{ARCHES[arch].size_limit // 1024} KiB)")
    check_probe_arch(binary, arch)
    prefix = runner_prefix(arch)
    info = subprocess.run([*prefix, str(binary), "sysinfo"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert info.returncode == 0, info.stderr
    # The schema's start record holds sysinfo as an object; check the facts it must give.
    facts = json.loads(info.stdout)
    assert facts["uname"]["machine"] == MACHINE[arch]
    assert isinstance(facts["preempt_rt"], bool)
    run = subprocess.run([*prefix, str(binary), "cyclic", *QUIET_RUN, "--loops", "300"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    records = parse_ndjson(run.stdout)
    validate_records(records, validator)
    assert records[0]["sysinfo"]["uname"]["machine"] == MACHINE[arch]
    assert records[0]["simulated"] is False
    result = records[-1]
    assert result["type"] == "result" and result["status"] == "ok"
    assert all(s["count"] == 300 for s in result["series"])


def test_board_build_refuses_simulate(arch_probes: dict[str, Path], rtprobe: Path) -> None:
    """--simulate is compiled out of the board builds: one line naming it, exit 2 (usage),
    while the native build of the same sources still simulates."""
    args = ["cyclic", "--simulate", "1", "--loops", "10"]
    for arch in arch_probes:
        run = subprocess.run([*runner_prefix(arch), str(arch_probes[arch]), *args],
                             capture_output=True, text=True, timeout=60, check=False)
        assert run.returncode == 2, f"{arch}: {run.stderr}"
        assert run.stdout == ""
        assert run.stderr.count("\n") == 1 and "--simulate '1'" in run.stderr, arch
        assert "board build" in run.stderr and "native build" in run.stderr, arch
    native = subprocess.run([str(rtprobe), *args], capture_output=True, text=True,
                            timeout=60, check=False)
    assert native.returncode == 0, native.stderr
    assert parse_ndjson(native.stdout)[0]["simulated"] is True


def test_real_sleep_loop_on_every_arch(arch_probes: dict[str, Path]) -> None:
    """Not simulated: each arch's sleep path (a direct trap on x86_64, aarch64 and riscv64,
    the C library's time64 clock_nanosleep on the 32-bit arches) waits for every deadline
    and never wakes before it (no early sample), in both sleeping modes."""
    loops, interval_s = 60, 0.002
    for arch, binary in arch_probes.items():
        for mode in ("abs", "rel"):
            start = time.monotonic()
            run = subprocess.run([*runner_prefix(arch), str(binary), "cyclic", "--mode", mode,
                                  "--loops", str(loops), "--interval", "2ms", "--warmup", "0",
                                  "--threads", "1", "--policy", "other", "--no-mlock",
                                  "--no-pmqos"],
                                 capture_output=True, text=True, timeout=120, check=False)
            elapsed = time.monotonic() - start
            assert run.returncode == 0, f"{arch} {mode}: {run.stderr}"
            result = parse_ndjson(run.stdout)[-1]
            assert result["status"] == "ok", f"{arch} {mode}"
            series = result["series"][0]
            assert series["count"] == loops and series["early"] == 0, f"{arch} {mode}"
            # The last sample is due (loops - 1) periods after the first: it really slept.
            assert elapsed >= (loops - 1) * interval_s, f"{arch} {mode}: {elapsed:.3f} s"


def test_describe_is_the_same_on_every_arch(arch_probes: dict[str, Path], rtprobe: Path) -> None:
    """The board builds pack their help texts and leave the simulation out: what
    `describe --json` prints (every option's help, defaults, rates, --simulate included)
    is still byte for byte what the native build prints."""
    native = subprocess.run([str(rtprobe), "describe", "--json"], capture_output=True,
                            timeout=30, check=True).stdout
    for arch, binary in arch_probes.items():
        board = subprocess.run([*runner_prefix(arch), str(binary), "describe", "--json"],
                               capture_output=True, timeout=60, check=False)
        assert board.returncode == 0, f"{arch}: {board.stderr!r}"
        assert board.stdout == native, arch


def run_both(native: Path, board: Path, args: list[str], timeout_s: float
             ) -> tuple[subprocess.CompletedProcess[bytes], subprocess.CompletedProcess[bytes]]:
    """Run args with the native build and then with a board build; both results."""
    runs = [subprocess.run([str(binary), *args], capture_output=True, timeout=timeout_s,
                           check=False) for binary in (native, board)]
    return runs[0], runs[1]


@pytest.mark.skipif(platform.machine() != "x86_64" or "x86_64" not in TEST_ARCHES,
                    # not a part: the host's CPU, the arches chosen
                    reason="runs the x86_64 build natively")
def test_packed_help_reads_as_the_native_help(arch_probes: dict[str, Path],
                                              rtprobe: Path) -> None:
    """Every --help text of the x86_64 board build (packed help texts) is the native
    build's."""
    catalogue = json.loads(subprocess.run([str(rtprobe), "describe", "--json"],
                                          capture_output=True, timeout=30,
                                          check=True).stdout)
    commands = [["--help"], ["sysinfo", "--help"], ["describe", "--help"]]
    commands += [[test["name"], "--help"] for test in catalogue["tests"]]
    commands += [["load", load["name"], "--help"] for load in catalogue["loads"]]
    for args in commands:
        native, board = run_both(rtprobe, arch_probes["x86_64"], args, 30)
        assert (board.returncode, board.stdout) == (native.returncode, native.stdout), args
        assert len(native.stdout) > 100, args


# Command lines whose messages go through rtprobe's printf (and help texts, unpacked).
MESSAGE_COMMANDS = [
    ["cyclic", "--bogus"], ["cyclic", "--interval"], ["cyclic", "--json=1"],
    ["cyclic", "--interval", "0"], ["cyclic", "--threads", "100000"], ["load", "cpu"],
    ["load", "bogus"], ["hackbench", "-g", "0"], ["sysinfo", "--bogus"],
    ["noise", "--loops", "5"], ["pi", "--hogs", "-1"], ["describe", "--bogus"],
    ["cyclic", "--dur", "1s"], ["wakeup", "--mechanism", "bogus"],
]


@pytest.mark.skipif(platform.machine() != "x86_64" or "x86_64" not in TEST_ARCHES,
                    # not a part: the host's CPU, the arches chosen
                    reason="runs the x86_64 build natively")
def test_board_messages_read_as_the_native_ones(arch_probes: dict[str, Path],
                                                rtprobe: Path) -> None:
    """The board build's messages are the native build's, byte for byte."""
    for args in MESSAGE_COMMANDS:
        native, board = run_both(rtprobe, arch_probes["x86_64"], args, 60)
        assert (board.returncode, board.stderr) == (native.returncode, native.stderr), args
        assert native.stderr, args


def test_foreign_binary_is_refused(arch_probes: dict[str, Path]) -> None:
    for arch, binary in arch_probes.items():
        for other in ELF_IDENTITY:
            if ELF_IDENTITY[other] == ELF_IDENTITY[arch]:
                continue
            with pytest.raises(ProbeArchError, match=f"not built for the target's arch {other}"):
                check_probe_arch(binary, other)


def test_second_build_comes_from_the_cache(arch_probes: dict[str, Path]) -> None:
    arch = "riscv64" if "riscv64" in arch_probes else TEST_ARCHES[-1]
    before = arch_probes[arch].stat().st_mtime_ns
    assert build_probe(arch) == arch_probes[arch]
    assert arch_probes[arch].stat().st_mtime_ns == before


def test_arch_selection() -> None:
    """make test builds the host's arch alone; 'all' (CI) the nine."""
    assert selected_arches(None, "x86_64") == ["x86_64"]
    assert selected_arches("", "aarch64") == ["aarch64"]
    assert selected_arches(None, "riscv64") == ["riscv64"]
    assert selected_arches(None, "sparc64") == ["x86_64"]
    assert selected_arches("all", "x86_64") == list(ARCHES)
    assert selected_arches("mips, armel", "x86_64") == ["armel", "mips"]
    with pytest.raises(ValueError, match="unknown arch 'sparc'"):
        selected_arches("sparc", "x86_64")
    # RTBENCH_TEST_ALL=1 (CI) asks for all of them unless RTBENCH_TEST_ARCHES names some
    assert arches_asked({}) is None
    assert arches_asked({"RTBENCH_TEST_ALL": "1"}) == "all"
    assert arches_asked({"RTBENCH_TEST_ALL": "1", ARCHES_VARIABLE: "mips"}) == "mips"
    assert arches_asked({"RTBENCH_TEST_ALL": "0"}) is None


@pytest.mark.parametrize("arch", TEST_ARCHES)
def test_probe_fits_its_size_bound(arch: str, arch_probes: dict[str, Path]) -> None:
    """<= 210 KiB stripped and static; 285 KiB for MIPS32 and PowerPC (4-byte code)."""
    size, limit = arch_probes[arch].stat().st_size, ARCHES[arch].size_limit
    assert limit == (285 if arch in ("mips", "mipsel", "powerpc", "ppc64le") else 210) * 1024
    assert size <= limit, f"{arch}: {size / 1024:.1f} KiB, bound {limit // 1024} KiB"


def test_missing_zig_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ziglang: a failure when CI=true, a skip elsewhere."""
    monkeypatch.setattr(sys.modules[__name__], "zig_available", lambda: False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="ziglang"):
        require_zig()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        require_zig()


@pytest.mark.parametrize(("args", "asks"), [
    (["cyclic", "--simulate", "1"], True), (["cyclic", "--simulate=1:const"], True),
    (["cyclic", "--loops", "5"], False), (["load", "cmd", "--", "--simulate"], False),
    ([], False),
])
def test_simulated_command_lines_are_recognised(args: list[str], asks: bool) -> None:
    """What makes a board target start the full build: --simulate among the options."""
    assert asks_simulation(args) is asks


class FakeProbes:
    """A probe provider whose builds are made-up paths naming what was asked for."""

    def __init__(self, given: Path | None = None) -> None:
        self.given = given

    def host_probe(self) -> Path:
        """Never called: a board has no host probe."""
        raise AssertionError("no host probe here")

    def probe_for(self, arch: str, progress: object = None, *,
                  simulation: bool = False, small: bool = False) -> Path:
        """--probe if given, else the board or the simulation build of arch."""
        if self.given is not None:
            return self.given
        return Path(f"/cache/{arch}-{'simulation' if simulation else 'board'}")


class PickingBoard(BoardTarget):
    """A board target whose pushes are recorded, not done."""

    name = "fake"
    pushed: list[str]

    def __init__(self, given: Path | None) -> None:
        super().__init__(provider=FakeProbes(given), remote_dir="/tmp/rtb")
        self.pushed = []
        self._arch = "mips"
        self._remote_probe = "/tmp/rtb/rtprobe-board"

    def _pushed(self, local: Path, arch: str) -> str:
        """Record the push; the remote name the real one would give."""
        assert arch == "mips"
        self.pushed.append(local.name)
        return f"/tmp/rtb/rtprobe-{local.name}"

    def run(self, command: str, timeout_s: float = 30.0) -> CommandResult:
        """Never called: the test runs nothing on the board."""
        raise AssertionError("no command runs here")

    def _send_file(self, data: bytes, remote: str) -> None:
        """Never called: pushes are recorded by _pushed."""
        raise AssertionError("no file is sent here")

    def _start_remote(self, command: str) -> ProbeProcess:
        """Never called: the test starts no process."""
        raise AssertionError("no process starts here")

    @classmethod
    def from_uri(cls, uri: str, *, provider: ProbeProvider | None = None,
                 options: dict[str, Any] | None = None) -> PickingBoard:
        """Never called: made directly."""
        raise AssertionError("not opened from a URI")


def test_board_target_pushes_the_full_build_for_simulated_runs_only() -> None:
    board = PickingBoard(given=None)
    assert board._probe_path(["cyclic", "--loops", "5"]) == "/tmp/rtb/rtprobe-board"
    assert board.pushed == []
    for _ in range(2):   # pushed once, then reused
        assert board._probe_path(["cyclic", "--simulate", "1"]) == \
            "/tmp/rtb/rtprobe-mips-simulation"
    assert board.pushed == ["mips-simulation"]
    assert board._probe_path(["sysinfo"]) == "/tmp/rtb/rtprobe-board"
    # --probe: the provider gives the user's binary for simulated runs too
    given = PickingBoard(given=Path("/mine/rtprobe"))
    assert given._probe_path(["cyclic", "--simulate", "1"]) == "/tmp/rtb/rtprobe-rtprobe"
    assert given.pushed == ["rtprobe"]
