"""Every build called static is static: no ELF interpreter, and it runs in an empty root.

Also: a cross or musl build goes to its own directory under probe/build/ and leaves the
native probe/build/rtprobe (the one the installed rtbench runs) as it was.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest
from probe_support import REPO, parse_ndjson

from tests.parts import needs_part
from tests.session_lock import session_lock

PROBE = REPO / "probe"
PT_INTERP = 3


def program_header_types(path: Path) -> list[int]:
    """The p_type of every ELF program header of path (32- or 64-bit, either endianness)."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF", f"{path} is not an ELF file"
    wide = data[4] == 2
    order = "<" if data[5] == 1 else ">"
    if wide:
        phoff, = struct.unpack_from(order + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 0x36)
    else:
        phoff, = struct.unpack_from(order + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 0x2A)
    return [struct.unpack_from(order + "I", data, phoff + i * phentsize)[0]
            for i in range(phnum)]


def make(*args: str) -> None:
    """Run make -C probe ARGS, warning-free (one pytest worker at a time)."""
    with session_lock("probe-make"):
        done = subprocess.run(["make", "-C", str(PROBE), *args], capture_output=True,
                              text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "warning" not in done.stderr, done.stderr[-2000:]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def runs_in_empty_root(binary: Path) -> None:
    """Copy binary alone into an empty directory, chroot there and run `sysinfo`."""
    with tempfile.TemporaryDirectory(prefix="rtprobe-chroot-") as root:
        shutil.copy2(binary, Path(root) / "rtprobe")
        done = subprocess.run(["chroot", root, "/rtprobe", "sysinfo"], capture_output=True,
                              text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "uname" in parse_ndjson(done.stdout)[0]


needs_root = needs_part("root", os.geteuid() != 0 or shutil.which("chroot") is None,
                        "chroot needs root")


def test_elf_reader_sees_the_interpreter_of_a_dynamic_build(rtprobe: Path) -> None:
    # the default build is dynamic: the check below would catch a missing -static
    assert PT_INTERP in program_header_types(rtprobe)


@needs_root
def test_static_build_is_static_and_runs_in_an_empty_root(rtprobe: Path) -> None:
    make("STATIC=1", "BUILD=build/static")
    binary = PROBE / "build" / "static" / "rtprobe"
    assert PT_INTERP not in program_header_types(binary)
    runs_in_empty_root(binary)


@needs_root
@needs_part("musl", shutil.which("musl-gcc") is None, "musl-tools missing")
def test_musl_build_is_static_runs_in_an_empty_root_and_keeps_the_native_one(
        rtprobe: Path) -> None:
    before = digest(rtprobe)
    make("musl")
    binary = PROBE / "build" / "musl" / "rtprobe"
    assert PT_INTERP not in program_header_types(binary)
    runs_in_empty_root(binary)
    assert digest(rtprobe) == before


@pytest.mark.cross
@needs_part("cross-gcc", shutil.which("aarch64-linux-gnu-gcc") is None,
            "aarch64 cross compiler missing")
def test_cross_build_goes_to_its_own_directory(rtprobe: Path) -> None:
    before = digest(rtprobe)
    make("STATIC=1", "CROSS_COMPILE=aarch64-linux-gnu-")
    binary = PROBE / "build" / "aarch64-linux-gnu" / "rtprobe"
    assert PT_INTERP not in program_header_types(binary)
    assert digest(rtprobe) == before
