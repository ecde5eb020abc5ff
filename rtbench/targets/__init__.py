"""Targets: where rtprobe and the loads run (local now; ssh and serial later).

A target spawns processes that die with rtbench, reads files such as /proc/stat, and
runs short commands.  The runner only talks to this interface.
"""

from rtbench.targets.local import LocalTarget, TargetError

__all__ = ["LocalTarget", "TargetError"]
