"""ctx (lmbench lat_ctx): its headline and its lmbench-shaped table (docs/tests/ctx.md)."""

from __future__ import annotations

from typing import Any

from rtbench.kinds._text import dict_items, us_text

TABLE_CAPTION = "per-switch time in µs, overhead subtracted, median of the repetitions"
TABLE_STAR = "flagged: <= 0"


def headline(data: dict[str, Any]) -> str | None:
    """ctx: range of per-switch times and of overheads."""
    cells = dict_items(data.get("cells"))
    values = [float(c["per_switch_ns"]) for c in cells if c.get("per_switch_ns") is not None]
    if not values:
        return None
    text = (f"per switch {us_text(min(values))}-{us_text(max(values))} µs in {len(values)} "
            "cells")
    overheads = [float(o["overhead_ns"]) for o in dict_items(data.get("overheads"))
                 if o.get("overhead_ns") is not None]
    if overheads:
        text += f" (overhead {us_text(min(overheads))}-{us_text(max(overheads))} µs)"
    flagged = sum(1 for c in cells if c.get("flagged"))
    if flagged:
        text += f", {flagged} flagged <= 0"
    return text


def table(data: dict[str, Any]) -> tuple[list[str], list[list[str]]] | None:
    """ctx's lmbench-shaped table: one row per working-set size, microseconds.

    Columns: size, the overhead subtracted at that size, then the per-switch time for
    each process count ("*" marks a cell flagged as <= 0).  None when data has no cells;
    raises on data of an unexpected shape (the registry turns that into None).
    """
    cells = dict_items(data.get("cells"))
    if not cells:
        return None
    sizes = sorted({int(c["size_kib"]) for c in cells})
    counts = sorted({int(c["processes"]) for c in cells})
    overhead = {int(o["size_kib"]): o.get("overhead_ns")
                for o in dict_items(data.get("overheads"))}
    value = {(int(c["size_kib"]), int(c["processes"])): c for c in cells}
    headers = ["size KiB", "overhead µs"] + [f"{n} procs" for n in counts]
    rows = []
    for size in sizes:
        row = [str(size), "-" if overhead.get(size) is None else us_text(overhead[size])]
        for n in counts:
            cell = value.get((size, n))
            if cell is None or cell.get("per_switch_ns") is None:
                row.append("-")
            else:
                row.append(us_text(cell["per_switch_ns"]) + ("*" if cell.get("flagged")
                                                            else ""))
        rows.append(row)
    return headers, rows
