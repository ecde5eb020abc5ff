"""Targets: where rtprobe and the loads run (only `local` so far).

The interface is rtbench.targets.base (Target, ProbeProcess, open_target); each other
module here may define one kind of target, found by its URI scheme.
"""

from rtbench.targets.base import (
    ProbeProcess,
    Target,
    TargetError,
    TargetLost,
    TargetUsageError,
    open_target,
)
from rtbench.targets.local import LocalTarget

__all__ = ["LocalTarget", "ProbeProcess", "Target", "TargetError", "TargetLost",
           "TargetUsageError", "open_target"]
