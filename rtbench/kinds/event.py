"""event: its headline (docs/tests/event.md)."""

from __future__ import annotations

from typing import Any


def headline(data: dict[str, Any]) -> str | None:
    """event: events handled and missed."""
    if data.get("handled") is None:
        return None
    return (f"{data.get('kind', 'event')}: {int(data['handled']):,} handled, "
            f"{int(data.get('missed') or 0):,} missed")
