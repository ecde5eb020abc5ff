"""The published reference results shipped with rtbench (read-only runs, `ref:NAME`).

The CSVs in data/ are copies of the project's reference files, comment lines and all;
rtbench.analysis.reference turns them into ReferenceRun objects.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from rtbench.analysis.reference import ReferenceRun, build_all


def _read(name: str) -> str:
    """The text of one packaged data file."""
    return (resources.files("rtbench.reference") / "data" / name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def reference_runs() -> tuple[ReferenceRun, ...]:
    """Every reference run, in the order of the files."""
    return tuple(build_all(_read))


def reference_run(name: str) -> ReferenceRun | None:
    """The reference run called name (without 'ref:'), or None."""
    for run in reference_runs():
        if run.name == name:
            return run
    return None
