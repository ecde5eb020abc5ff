"""How a run's target is named in `ls` and `show` (light: `ls` imports it)."""

from __future__ import annotations


def fmt_target(target: str, tags: dict[str, str]) -> str:
    """Where a run ran (local, ssh://..., serial://..., labgrid:...), with the board's
    name when a fleet inventory gave one."""
    where = target or "unknown"
    board = tags.get("board")
    return f"{where} ({board})" if board and board != where else where
