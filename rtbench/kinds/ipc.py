"""ipc: the headline of --bandwidth (its latency mode has a series) (docs/tests/ipc.md)."""

from __future__ import annotations

from typing import Any

from rtbench.kinds._text import dict_items


def headline(data: dict[str, Any]) -> str | None:
    """ipc: bandwidth per measuring thread."""
    entries = dict_items(data.get("bandwidth"))
    if not entries:
        return None
    transport = data.get("transport", "pipe")
    parts = []
    for entry in entries:
        chunk = entry.get("chunk_bytes")
        where = f" cpu{entry['cpu']}" if entry.get("cpu") is not None and len(entries) > 1 \
            else ""
        size = f", {int(chunk) // 1024} KiB chunks" if isinstance(chunk, int) else ""
        parts.append(f"{float(entry['mb_per_s']):.0f} MB/s{where}{size}")
    return f"{transport} bandwidth " + "; ".join(parts)
