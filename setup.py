"""Build step: compile probe/ with make and ship rtprobe, its sources and the suites.

Everything else lives in pyproject.toml.  `pip install .` builds a platform wheel holding
rtbench/_bin/rtprobe, rtbench/_suites/*.toml and rtbench/_probe/ (the probe's sources,
Makefile, port files and help generators, from which `rtbench probe build` and the board
targets build probes for other arches); `pip install -e .` only builds probe/ (the source checkout's
probe/, its build/rtprobe and suites/ are then found directly).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent


class BuildWithProbe(build_py):  # type: ignore[misc]
    """build_py that also runs `make -C probe` and copies the binary and suites."""

    def run(self) -> None:
        super().run()
        probe_dir = ROOT / "probe"
        try:
            subprocess.run(["make", "-C", str(probe_dir)], check=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            raise SystemExit(
                f"rtbench: building probe/ with make failed ({exc}); "
                "install gcc and make, then retry"
            ) from exc
        if getattr(self, "editable_mode", False):
            return
        bin_dir = Path(self.build_lib) / "rtbench" / "_bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.shipped_probe(probe_dir), bin_dir / "rtprobe")
        (bin_dir / "rtprobe").chmod(0o755)
        suites_dir = Path(self.build_lib) / "rtbench" / "_suites"
        suites_dir.mkdir(parents=True, exist_ok=True)
        for suite in sorted((ROOT / "suites").glob("*.toml")):
            shutil.copy2(suite, suites_dir / suite.name)
        self.copy_probe_sources(probe_dir, Path(self.build_lib) / "rtbench" / "_probe")

    @staticmethod
    def copy_probe_sources(probe_dir: Path, dest: Path) -> None:
        """What a board build needs from probe/: src/, port/, tools/ (the help header's
        generators) and the Makefile."""
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for sub in ("src", "port", "tools"):
            shutil.copytree(probe_dir / sub, dest / sub,
                            ignore=shutil.ignore_patterns("*.o", "__pycache__"))
        shutil.copy2(probe_dir / "Makefile", dest / "Makefile")

    @staticmethod
    def shipped_probe(probe_dir: Path) -> Path:
        """The static build when the toolchain can link one, else the dynamic one.

        The shipped binary is the one copied to boards, and under mlockall a static
        binary keeps only the C library code it uses resident (about half the memory
        of the dynamic build, see BENCHMARKS.md).
        """
        static = subprocess.run(["make", "-C", str(probe_dir), "STATIC=1", "BUILD=build/static"],
                                check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if static.returncode == 0:
            return probe_dir / "build" / "static" / "rtprobe"
        return probe_dir / "build" / "rtprobe"


class BinaryDistribution(Distribution):
    """The wheel carries a native binary, so it is platform specific."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildWithProbe}, distclass=BinaryDistribution)
