"""hackbench: its headline."""

from __future__ import annotations

from typing import Any


def headline(data: dict[str, Any]) -> str | None:
    """hackbench: elapsed time and message rate."""
    if data.get("elapsed_ns") is None:
        return None
    text = f"time {float(data['elapsed_ns']) / 1e9:.3f} s"
    if data.get("messages_per_s") is not None:
        text += f", {float(data['messages_per_s']):,.0f} messages/s"
    return text
