"""Arch detection, checksums and the run lock of board targets, run through a local sh."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rtbench.targets._shell import (
    arch_from_facts,
    detect_arch,
    lock_command,
    probe_remote_path,
    remote_matches,
)
from rtbench.targets.base import CommandResult, TargetError

LE = bytes.fromhex("7f454c460101")
BE = bytes.fromhex("7f454c460102")


def local_run(command: str) -> CommandResult:
    """A board that is this machine's /bin/sh."""
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True,
                          timeout=30, check=False)
    return CommandResult(done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize(("machine", "elf", "features", "arch"), [
    ("x86_64", LE, "", "x86_64"),
    ("i686", LE, "", "i386"),
    ("aarch64", LE, "fp asimd", "aarch64"),
    ("armv7l", LE, "half thumb fastmult vfp edsp neon vfpv3 tls vfpd32", "armhf"),
    ("armv7l", LE, "half thumb fastmult vfp edsp", "armel"),      # no VFPv3
    ("armv6l", LE, "half thumb fastmult vfp edsp java tls", "armel"),
    ("armv5tejl", LE, "swp half thumb fastmult edsp java", "armel"),
    ("mips", BE, "", "mips"),
    ("mips", LE, "", "mipsel"),
    ("ppc", BE, "", "powerpc"),
    ("riscv64", LE, "", "riscv64"),
])
def test_arch_from_facts(machine: str, elf: bytes, features: str, arch: str) -> None:
    assert arch_from_facts(machine, elf, features) == arch


@pytest.mark.parametrize(("machine", "elf", "message"), [
    ("s390x", BE, "no probe for it"),
    ("armv7b", BE, "big-endian"),
    ("mips", b"", "byte order"),
])
def test_arch_without_a_probe_is_one_line(machine: str, elf: bytes, message: str) -> None:
    with pytest.raises(TargetError, match=message):
        arch_from_facts(machine, elf, "")


def test_detect_arch_through_a_shell() -> None:
    import platform

    expected = {"x86_64": "x86_64", "aarch64": "aarch64"}.get(platform.machine())
    if expected is None:
        pytest.skip("checked on x86_64 and aarch64 hosts")  # not a part: the host's CPU
    assert detect_arch(local_run) == expected


def test_checksum_and_probe_name(tmp_path: Path) -> None:
    local = tmp_path / "probe"
    local.write_bytes(b"\x7fELF" + bytes(range(256)))
    remote = tmp_path / "copy"
    remote.write_bytes(local.read_bytes())
    assert remote_matches(local_run, str(remote), local)
    remote.write_bytes(b"changed")
    assert not remote_matches(local_run, str(remote), local)
    assert not remote_matches(local_run, str(tmp_path / "missing"), local)
    name = probe_remote_path("/tmp/rtbench/", local)
    prefix = "/tmp/rtbench/rtprobe-"
    assert name.startswith(prefix) and len(name) == len(prefix) + 16


def test_lock_is_exclusive_and_clears_when_stale(tmp_path: Path) -> None:
    lock = str(tmp_path / "lock")
    # Its own session, as an ssh command has: the keeper ends its whole group.
    holder = subprocess.Popen(["/bin/sh", "-c", lock_command(lock)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline().strip() == "locked"
    second = local_run(lock_command(lock) + " </dev/null")
    assert second.returncode == 75 and second.stdout.startswith("busy ")
    holder.stdin.close()
    holder.wait(timeout=10)
    assert not Path(lock).exists()
    # A lock whose keeper died without cleaning up is taken over.
    Path(lock).mkdir()
    (Path(lock) / "pid").write_text("999999999\n")
    taken = local_run(lock_command(lock) + " </dev/null")
    assert taken.stdout.startswith("locked")
