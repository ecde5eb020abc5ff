"""Checks on output paths, made before any work so nothing is written half."""

from __future__ import annotations

import os
from pathlib import Path

from rtbench import EXIT_USAGE
from rtbench.cli import fail


def check_writable(path: Path, suffixes: tuple[str, ...]) -> None:
    """Exit 2 unless path has one of the suffixes and its directory exists and is writable."""
    if path.suffix.lower() not in suffixes:
        fail(f"{path}: the file name must end in {' or '.join(suffixes)}", EXIT_USAGE)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        fail(f"{path}: directory {directory} does not exist; create it or choose another "
             "path", EXIT_USAGE)
    if not os.access(directory, os.W_OK | os.X_OK):
        fail(f"{path}: directory {directory} is not writable; choose another path",
             EXIT_USAGE)
    if path.is_dir():
        fail(f"{path} is a directory; give a file name", EXIT_USAGE)
