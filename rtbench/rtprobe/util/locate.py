"""Find the rtprobe binary the local target runs, and read what it offers (describe)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from rtbench.core.boundedrun import CommandTimeout, OutputTooLarge, run_bounded

PACKAGE_DIR = Path(__file__).resolve().parents[2]
PACKAGED_PROBE = PACKAGE_DIR / "_bin" / "rtprobe"
CHECKOUT_PROBE = PACKAGE_DIR.parent / "probe" / "build" / "rtprobe"


class ProbeNotFound(Exception):
    """No usable rtprobe; the message is one line saying what to do (exit 3)."""


class ProbeDescribeError(ProbeNotFound):
    """`rtprobe describe --json` failed: no usable rtprobe; one line (exit 3)."""


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


def probe_describe(probe: Path) -> str:
    """Return what `rtprobe describe --json` prints (its tests, loads and options).

    Suite parsing uses the local probe's catalogue; a run checks the target's own
    (rtprobe.catalogue.target_catalogue through the target's run_probe).
    """
    try:
        code, out, _ = run_bounded([str(probe), "describe", "--json"], 30,
                                   f"{probe} describe --json")
    except OutputTooLarge as exc:
        raise ProbeDescribeError(f"{exc}: is it rtprobe?") from None
    except (OSError, CommandTimeout) as exc:
        raise ProbeDescribeError(f"{probe} describe --json: cannot run it ({exc})") from None
    if code != 0:
        raise ProbeDescribeError(
            f"{probe} describe --json failed (exit {code}): this rtprobe is "
            "older than rtbench; rebuild it (make -C probe) or reinstall rtbench")
    return out.decode("utf-8", errors="replace")
