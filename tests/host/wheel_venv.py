"""rtbench as a plain install: a wheel built from this checkout (`pip wheel .`), installed
(not editable) into a fresh venv that shares only the dev venv's dependencies.

The fresh venv sees the dev venv's site-packages through a path file, so no package is
downloaded; path files there are not read, so this checkout's editable rtbench stays out
and `import rtbench` finds the wheel's copy.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.session_lock import session_lock

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class WheelVenv:
    """The wheel file and the venv it is installed in."""

    wheel: Path
    venv: Path

    @property
    def python(self) -> Path:
        """The venv's interpreter."""
        return self.venv / "bin" / "python"

    @property
    def rtbench(self) -> Path:
        """The venv's rtbench script."""
        return self.venv / "bin" / "rtbench"

    def names(self) -> list[str]:
        """The files the wheel holds."""
        with zipfile.ZipFile(self.wheel) as archive:
            return archive.namelist()


def _run(argv: list[str], timeout_s: float = 600, cwd: Path | None = None) -> None:
    """Run a build step; a failure shows its output."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                          check=False, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}: exit {done.returncode}\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def sdist_names(workdir: Path) -> list[str]:
    """The files of the sdist built from this checkout (`setup.py sdist`), without the
    leading rtbench-VERSION/."""
    dist = workdir / "sdist"
    _run([sys.executable, "setup.py", "-q", "sdist", "-d", str(dist)], cwd=REPO)
    (archive,) = dist.glob("rtbench-*.tar.gz")
    with tarfile.open(archive) as tar:
        return [name.split("/", 1)[1] for name in tar.getnames() if "/" in name]


def build_wheel_venv(workdir: Path) -> WheelVenv:
    """Build the wheel into workdir/dist and install it into workdir/venv."""
    dist = workdir / "dist"
    # the wheel build runs `make -C probe` in this checkout: one worker at a time
    with session_lock("probe-make"):
        _run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w",
              str(dist)])
    (wheel,) = dist.glob("rtbench-*.whl")
    venv = workdir / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)])
    purelib = Path(sysconfig.get_paths()["purelib"])
    fresh = Path(subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; "
         "print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    (fresh / "dev_dependencies.pth").write_text(f"{purelib}\n")
    _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
          "--no-deps", "--no-index", "-q", str(wheel)])
    return WheelVenv(wheel, venv)
