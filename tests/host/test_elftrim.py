"""rtbench.rtprobe.util.elftrim: unloaded sections emptied, the program unchanged and
still running."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rtbench.rtprobe.util.elftrim import ElfLayoutError, trim_unloaded
from rtbench.rtprobe.util.locate import locate_probe
from tests.parts import needs_part


def loaded_bytes(path: Path) -> bytes:
    """The bytes the program headers load (what `objcopy -O binary` would keep)."""
    done = subprocess.run(["readelf", "-lW", str(path)], capture_output=True, text=True,
                          check=True)
    data = path.read_bytes()
    out = b""
    for line in done.stdout.splitlines():
        words = line.split()
        if words[:1] == ["LOAD"]:
            offset, size = int(words[1], 16), int(words[4], 16)
            out += data[offset:offset + size]
    return out


@needs_part("binutils", shutil.which("readelf") is None, "needs binutils' readelf")
def test_trim_keeps_the_program_and_drops_the_rest(tmp_path: Path) -> None:
    copy = tmp_path / "rtprobe"
    shutil.copy(locate_probe(), copy)   # a native build: symbols and debug info
    before = copy.stat().st_size
    saved = trim_unloaded(copy)
    assert saved > 0 and copy.stat().st_size == before - saved
    # Only the ELF header's section-table fields (within its first 64 bytes) change.
    assert loaded_bytes(copy)[64:] == loaded_bytes(locate_probe())[64:]
    sections = subprocess.run(["readelf", "-SW", str(copy)], capture_output=True, text=True,
                              check=True).stdout
    assert ".shstrtab" in sections
    done = subprocess.run([str(copy), "sysinfo"], capture_output=True, text=True, timeout=30,
                          check=False)
    assert done.returncode == 0 and '"uname"' in done.stdout
    assert trim_unloaded(copy) == 0     # nothing left to drop


def test_trim_refuses_what_is_not_elf(tmp_path: Path) -> None:
    text = tmp_path / "script"
    text.write_text("#!/bin/sh\n")
    with pytest.raises(ElfLayoutError, match="not an ELF file"):
        trim_unloaded(text)
