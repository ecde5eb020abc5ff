"""What is pushed to a board: a stripped copy of the probe, and the host's own probe
when it can serve a board (static, built for the board's arch).

Stripping empties the sections no program header loads (symbols, debug information) in
a copy cached by content under the probe cache; the original file is never touched.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from rtbench.rtprobe.build import cache_root
from rtbench.rtprobe.elf import ProbeArchError, is_built_for, is_static
from rtbench.rtprobe.util.elftrim import ElfLayoutError, trim_unloaded
from rtbench.rtprobe.util.locate import ProbeNotFound, locate_probe


def stripped(path: Path) -> Path:
    """A copy of path without what no loaded segment holds, cached by content; path
    itself when it has nothing to drop or is no ELF file (OSError when unreadable)."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:16]
    copy = cache_root() / "stripped" / digest / "rtprobe"
    if copy.is_file():
        return copy
    copy.parent.mkdir(parents=True, exist_ok=True)
    # a temp name of its own: a fleet's boards strip the same probe in threads of one
    # process at the same moment, other rtbench processes too
    fd, name = tempfile.mkstemp(prefix=".rtprobe.", dir=copy.parent)
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        temp.chmod(0o755)
        trim_unloaded(temp)
    except ElfLayoutError:
        temp.unlink()
        return path
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    temp.replace(copy)
    return copy


def native_static_probe(arch: str) -> Path | None:
    """The host's located rtprobe (the wheel's, RTBENCH_PROBE's, the checkout's or on
    PATH) when it is a static binary for arch, else None."""
    try:
        local = locate_probe()
        return local if is_built_for(local, arch) and is_static(local) else None
    except (ProbeNotFound, ProbeArchError, OSError):
        return None
