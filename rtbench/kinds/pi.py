"""pi (priority inheritance): its headline (docs/tests/pi.md)."""

from __future__ import annotations

from typing import Any

from rtbench.kinds._text import us_text


def headline(data: dict[str, Any]) -> str | None:
    """pi: worst and mean wait beyond the hold time, against the limit."""
    if data.get("max_excess_ns") is None:
        return None
    mode = "inheritance" if data.get("pi") else "no inheritance (--no-pi)"
    text = (f"{mode}: worst excess {us_text(data['max_excess_ns'])} µs, "
            f"mean {us_text(data.get('mean_excess_ns') or 0)} µs")
    if data.get("limit_ns") is not None:
        text += f" (limit {us_text(data['limit_ns'])} µs)"
    return text
