"""noise (oslat/hwlat): its headline (docs/tests/noise.md)."""

from __future__ import annotations

from typing import Any

from rtbench.kinds._text import dict_items, us_text


def headline(data: dict[str, Any]) -> str | None:
    """noise: time stolen and gaps over all CPUs."""
    cpus = dict_items(data.get("cpus"))
    if not cpus:
        return None
    stolen = sum(int(c.get("stolen_ns") or 0) for c in cpus)
    busy = sum(int(c.get("busy_ns") or 0) for c in cpus)
    gaps = sum(int(c.get("gaps") or 0) for c in cpus)
    share = f"{100.0 * stolen / busy:.3f} % of " if busy else ""
    return f"stolen {us_text(stolen)} µs ({share}busy time), {gaps:,} gaps"
