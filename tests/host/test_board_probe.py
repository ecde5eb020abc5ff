"""Which probe a board gets from a plain install, stripped before it is pushed, and the
live lines of the slow steps (tests/host/test_target_ssh.py measures a board from a wheel)."""

from __future__ import annotations

import io
import struct
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rtbench.rtprobe import build as probebuild
from rtbench.rtprobe import pushable
from rtbench.rtprobe.elf import is_static
from rtbench.rtprobe.provider import Probes, ProbeUnavailable
from rtbench.rtprobe.pushable import stripped
from rtbench.targets import progress
from rtbench.targets._shell import arch_from_facts
from rtbench.targets.base import TargetError
from rtbench.targets.progress import Forwarded, Progress, Silent


def fake_elf(path: Path, with_interp: bool) -> Path:
    """A 64-bit little-endian x86_64 ELF header and one program header (PT_INTERP or
    PT_LOAD), no sections: enough for the arch and static checks."""
    header = b"\x7fELF" + bytes([2, 1, 1, 3]) + bytes(8)
    header += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0x400000, 64, 0, 0, 64, 56, 1, 64,
                          0, 0)
    phdr = struct.pack("<IIQQQQQQ", 3 if with_interp else 1, 4, 0, 0, 0, 120, 120, 8)
    path.write_bytes(header + phdr)
    path.chmod(0o755)
    return path


def test_is_static(tmp_path: Path, probe_path: Path) -> None:
    assert is_static(fake_elf(tmp_path / "static", with_interp=False))
    assert not is_static(fake_elf(tmp_path / "dynamic", with_interp=True))
    assert not is_static(probe_path)           # make -C probe links dynamically
    (tmp_path / "text").write_text("#!/bin/sh\n")
    assert not is_static(tmp_path / "text")


def test_pushed_probe_is_stripped_and_still_runs(tmp_path: Path, probe_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    copy = stripped(probe_path)
    assert copy != probe_path and copy.stat().st_size < probe_path.stat().st_size
    done = subprocess.run([str(copy), "--version"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and done.stdout.strip()
    assert stripped(probe_path) == copy        # cached by content
    (tmp_path / "script").write_text("#!/bin/sh\n")
    assert stripped(tmp_path / "script") == tmp_path / "script"  # not ELF: as it is


def test_boards_of_a_fleet_strip_the_same_probe_at_once(tmp_path: Path, probe_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A fleet's boards open in threads of one process: eight strip the same probe at the
    same moment into one cache entry, and each gets the whole stripped copy (once, the
    threads' temp files shared one name, and a board failed with "cannot read or copy
    it")."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    start = threading.Barrier(8)

    def strip_at_once(_: int) -> bytes:
        start.wait()
        return stripped(probe_path).read_bytes()

    for attempt in range(5):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / f"cache{attempt}"))
        with ThreadPoolExecutor(8) as pool:
            copies = list(pool.map(strip_at_once, range(8)))
        assert len(set(copies)) == 1 and len(copies[0]) < probe_path.stat().st_size
        left = [p.name for p in (tmp_path / f"cache{attempt}").rglob("*") if p.is_file()]
        assert left == ["rtprobe"], left


def test_native_static_probe_serves_its_own_arch_only(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel's static probe serves a board of its arch with no Zig; another arch
    without the cross extra is one line naming it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    native = fake_elf(tmp_path / "rtprobe", with_interp=False)
    monkeypatch.setenv("RTBENCH_PROBE", str(native))
    monkeypatch.setattr(probebuild, "zig_available", lambda: False)
    assert Probes().probe_for("x86_64", Silent()) == native
    with pytest.raises(ProbeUnavailable) as caught:
        Probes().probe_for("aarch64", Silent())
    message = str(caught.value)
    assert "\n" not in message and "aarch64" in message
    assert "pip install 'rtbench[cross]'" in message
    # a dynamic native probe is not pushed: it needs the host's C library
    monkeypatch.setenv("RTBENCH_PROBE", str(fake_elf(tmp_path / "dyn", with_interp=True)))
    assert pushable.native_static_probe("x86_64") is None
    with pytest.raises(ProbeUnavailable, match=r"rtbench\[cross\]"):
        Probes().probe_for("x86_64", Silent())


def test_a_slow_line_gets_the_board_build_not_the_native_probe(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: a serial push sent the 1 MiB native probe (81 s) where the board build
    (a fifth of it) could be had: asked for small, a board of the host's arch gets the
    Zig build even with the static native probe there; without Zig, the native one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    native = fake_elf(tmp_path / "rtprobe", with_interp=False)
    monkeypatch.setenv("RTBENCH_PROBE", str(native))
    board_build = tmp_path / "board-rtprobe"
    built: list[str] = []

    def build(arch: str, simulation: bool = False) -> Path:
        built.append(arch)
        return board_build

    monkeypatch.setattr(probebuild, "build_probe", build)
    monkeypatch.setattr(probebuild, "zig_available", lambda: True)
    assert Probes().probe_for("x86_64", Silent()) == native
    assert Probes().probe_for("x86_64", Silent(), small=True) == board_build
    assert built == ["x86_64"]
    monkeypatch.setattr(probebuild, "zig_available", lambda: False)
    assert Probes().probe_for("x86_64", Silent(), small=True) == native


def test_serial_target_asks_for_the_small_probe() -> None:
    """The serial target (and labgrid's serial transport, its subclass) asks for it; ssh
    does not (a fast link)."""
    from rtbench.targets.serial import SerialTarget
    from rtbench.targets.ssh import SshTarget

    assert SerialTarget.wants_small_probe and not SshTarget.wants_small_probe


def test_probe_build_without_sources_says_to_reinstall(tmp_path: Path) -> None:
    with pytest.raises(probebuild.ProbeBuildError, match="reinstall it"):
        probebuild.build_probe("aarch64", source=tmp_path)


def test_board_arch_without_a_probe_is_one_line() -> None:
    with pytest.raises(TargetError, match="rtbench has no probe for it") as caught:
        arch_from_facts("sparc64", b"\x7fELF\x02\x02", "")
    assert "\n" not in str(caught.value)


def test_progress_in_a_log_is_one_line_per_step(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    shown = Progress("serial:///dev/ttyS0", stream=out, interactive=False)
    shown.start("quick step")
    shown.update("at once")
    shown.done("done")                      # over before SHOW_AFTER_S: never shown
    shown.start("pushing rtprobe (400 KiB) \x1b[31mred\x1b[0m")
    for n in range(5):
        clock[0] += 1.0
        shown.update(f"{n}/400 KiB")
    shown.done("sent")
    # control characters never reach the log
    assert out.getvalue().splitlines() == [
        "serial:///dev/ttyS0: pushing rtprobe (400 KiB) [31mred[0m ..."]


def test_progress_on_a_terminal_is_one_live_line(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    shown = Progress("board", stream=out, interactive=True)
    shown.start("waiting for the board's shell")
    shown.update("1 s")                     # too soon: nothing yet
    assert out.getvalue() == ""
    for seconds in (2, 2.2, 3):             # 2.2: within UPDATE_PERIOD_S, not shown
        clock[0] = 100.0 + seconds
        shown.update(f"{seconds:g} s")
    shown.done("answered after 4 s")
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("answered after 4 s\n")
    assert text.count("\r") == 3 and "board: waiting for the board's shell: 3 s" in text
    assert "2.2 s" not in text


def test_ticking_shows_the_seconds_of_a_silent_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "UPDATE_PERIOD_S", 0.05)
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.1)
    out = io.StringIO()
    shown = Progress("rtbench probe build", stream=out, interactive=True)
    with shown.ticking("aarch64 (1/1): building with Zig"):
        time.sleep(0.4)
    text = out.getvalue()
    assert text.count("\r") >= 3 and text.endswith("done in 0 s\n")
    said: list[str] = []
    with pytest.raises(RuntimeError), Forwarded(said.append).ticking("building"):
        time.sleep(0.3)
        raise RuntimeError("make failed")
    assert said == ["building ..."]
