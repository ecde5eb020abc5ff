"""periodic (LTP sched_latency): its headline (docs/tests/periodic.md)."""

from __future__ import annotations

from typing import Any

from rtbench.kinds._text import dict_items, us_text


def headline(data: dict[str, Any]) -> str | None:
    """periodic: failed iterations, missed periods, worst start latency."""
    if data.get("failed_iterations") is None:
        return None
    starts = [int(t["start_latency_ns"]) for t in dict_items(data.get("threads"))
              if t.get("start_latency_ns") is not None]
    text = (f"{int(data['failed_iterations']):,} failed iterations, "
            f"{int(data.get('missed_periods') or 0):,} missed periods")
    if starts:
        text += f", start latency {us_text(max(starts))} µs"
    return text
