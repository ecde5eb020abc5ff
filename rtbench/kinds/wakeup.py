"""wakeup: its headline (docs/tests/wakeup.md)."""

from __future__ import annotations

from typing import Any

from rtbench.kinds._text import dict_items


def headline(data: dict[str, Any]) -> str | None:
    """wakeup: the mechanisms measured."""
    names = [str(m.get("mechanism")) for m in dict_items(data.get("mechanisms")) if m.get("ran")]
    return "mechanisms " + ", ".join(names) if names else None
