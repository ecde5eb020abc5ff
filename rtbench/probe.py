"""Find the rtprobe binary the local target runs (the target asks it what it supports)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PACKAGED_PROBE = PACKAGE_DIR / "_bin" / "rtprobe"
CHECKOUT_PROBE = PACKAGE_DIR.parent / "probe" / "build" / "rtprobe"


class ProbeNotFound(Exception):
    """No usable rtprobe; the message is one line saying what to do (exit 3)."""


def _usable(path: Path) -> bool:
    """True when path is an executable regular file."""
    return path.is_file() and os.access(path, os.X_OK)


def locate_probe(option: str | None = None) -> Path:
    """Return rtprobe: --probe, RTBENCH_PROBE, packaged, source checkout, then PATH."""
    if option:
        path = Path(option)
        if not _usable(path):
            raise ProbeNotFound(
                f"--probe {option}: not an executable file; give the path of rtprobe")
        return path
    env = os.environ.get("RTBENCH_PROBE")
    if env:
        path = Path(env)
        if not _usable(path):
            raise ProbeNotFound(
                f"RTBENCH_PROBE={env}: not an executable file; fix or unset RTBENCH_PROBE"
            )
        return path
    for candidate in (PACKAGED_PROBE, CHECKOUT_PROBE):
        if _usable(candidate):
            return candidate
    found = shutil.which("rtprobe")
    if found:
        return Path(found)
    raise ProbeNotFound(
        "rtprobe not found: build it with `make -C probe`, reinstall rtbench, "
        "or pass --probe PATH / set RTBENCH_PROBE"
    )

