"""clock (LTP gtod_latency): its headline (docs/tests/clock.md)."""

from __future__ import annotations

from typing import Any


def headline(data: dict[str, Any]) -> str | None:
    """clock: mean read cost."""
    if data.get("read_cost_ns") is None:
        return None
    return f"read cost {float(data['read_cost_ns']):.1f} ns ({data.get('clock_source', '?')})"
