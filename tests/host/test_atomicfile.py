"""rtbench.util.atomicfile: whole files or none, devices written in place, the umask followed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rtbench.util.atomicfile import write_atomic


def test_a_file_is_replaced_whole_and_follows_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "r.html"
    path.write_text("old")
    old = os.umask(0o077)
    try:
        write_atomic(path, b"new")
    finally:
        os.umask(old)
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


def test_a_failed_writer_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "r.svg"
    path.write_text("old")

    def broken(out: object) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        write_atomic(path, broken)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.svg"]


def test_dev_null_stays_a_device() -> None:
    before = os.stat("/dev/null")
    write_atomic(Path("/dev/null"), b"x" * 100)
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
