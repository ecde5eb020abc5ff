"""A test's result `data` as flat key/value rows, for `show` and the report.

Tests without a latency series (ctx, ipc --bandwidth, hackbench) keep every figure in
the result record's `data`; the others add facts there (read cost, time stolen, missed
events...).  Its one-line headline and a kind's own table (ctx's lmbench table) come
from the kind registry (rtbench/kinds: `KindRegistry.headline()`, `.table()`); this
module turns the rest into key/value rows.  Anything unexpected gives plain key/value
rows, never an exception.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

MAX_ROWS = 80
MAX_LIST_ITEMS = 12


def _scalar(value: Any) -> str:
    """One value as text: floats with 4 significant digits."""
    if isinstance(value, bool) or value is None:
        return str(value).lower() if isinstance(value, bool) else "null"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _flatten(prefix: str, value: Any, out: list[tuple[str, str]]) -> None:
    """Append key/value rows for value under prefix (depth first)."""
    if isinstance(value, dict):
        if not value:
            out.append((prefix, "{}"))
        for key, item in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), item, out)
    elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        for i, item in enumerate(value):
            _flatten(f"{prefix}[{i}]", item, out)
    elif isinstance(value, list):
        items = [_scalar(v) for v in value[:MAX_LIST_ITEMS]]
        more = f", ... ({len(value)} in all)" if len(value) > MAX_LIST_ITEMS else ""
        out.append((prefix, ", ".join(items) + more))
    else:
        out.append((prefix, _scalar(value)))


def key_values(data: dict[str, Any] | None,
               skip: Iterable[str] = ()) -> list[tuple[str, str]]:
    """data as (dotted key, value) rows, top-level keys in skip left out, at most MAX_ROWS."""
    if not isinstance(data, dict):
        return []
    left_out = set(skip)
    rows: list[tuple[str, str]] = []
    for key, value in data.items():
        if key not in left_out:
            _flatten(str(key), value, rows)
    if len(rows) > MAX_ROWS:
        rows = rows[:MAX_ROWS] + [("...", f"{len(rows) - MAX_ROWS} more rows not shown")]
    return rows
