"""Targets: where rtprobe and the loads run: this machine (local), a board over ssh or
a serial console, or a board reserved through labgrid.

The interface is rtbench.targets.base (Target, ProbeProcess, open_target); each other
public module here defines one kind of target, found by its URI scheme (local.py,
ssh.py, serial.py, labgrid.py); modules starting with `_` are their shared parts.
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
