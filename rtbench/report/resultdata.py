"""A test's result `data` in words and tables, for the run log, `show` and the report.

Tests without a latency series (ctx, ipc --bandwidth, hackbench) keep every figure in
the result record's `data`; the others add facts there (read cost, time stolen, missed
events...).  These pure functions turn that data into a one-line headline, ctx's
lmbench-shaped table (working-set sizes with their overhead x process counts) and flat
key/value rows.  Shapes are those of docs/tests/*.md; anything unexpected gives None or
plain key/value rows, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

MAX_ROWS = 80
MAX_LIST_ITEMS = 12


def _us(ns: Any) -> str:
    """Nanoseconds as microseconds with 2 decimals (lmbench's precision)."""
    return f"{float(ns) / 1000:.2f}"


def _dicts(value: Any) -> list[dict[str, Any]]:
    """The dict items of a list (anything else: empty)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _ctx(data: dict[str, Any]) -> str | None:
    """ctx: range of per-switch times and of overheads."""
    cells = _dicts(data.get("cells"))
    values = [float(c["per_switch_ns"]) for c in cells if c.get("per_switch_ns") is not None]
    if not values:
        return None
    text = (f"per switch {_us(min(values))}-{_us(max(values))} µs in {len(values)} cells")
    overheads = [float(o["overhead_ns"]) for o in _dicts(data.get("overheads"))
                 if o.get("overhead_ns") is not None]
    if overheads:
        text += f" (overhead {_us(min(overheads))}-{_us(max(overheads))} µs)"
    flagged = sum(1 for c in cells if c.get("flagged"))
    if flagged:
        text += f", {flagged} flagged <= 0"
    return text


def _ipc(data: dict[str, Any]) -> str | None:
    """ipc: bandwidth per measuring thread (latency mode has a series)."""
    entries = _dicts(data.get("bandwidth"))
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


def _hackbench(data: dict[str, Any]) -> str | None:
    """hackbench: elapsed time and message rate."""
    if data.get("elapsed_ns") is None:
        return None
    text = f"time {float(data['elapsed_ns']) / 1e9:.3f} s"
    if data.get("messages_per_s") is not None:
        text += f", {float(data['messages_per_s']):,.0f} messages/s"
    return text


def _clock(data: dict[str, Any]) -> str | None:
    """clock: mean read cost."""
    if data.get("read_cost_ns") is None:
        return None
    return f"read cost {float(data['read_cost_ns']):.1f} ns ({data.get('clock_source', '?')})"


def _noise(data: dict[str, Any]) -> str | None:
    """noise: time stolen and gaps over all CPUs."""
    cpus = _dicts(data.get("cpus"))
    if not cpus:
        return None
    stolen = sum(int(c.get("stolen_ns") or 0) for c in cpus)
    busy = sum(int(c.get("busy_ns") or 0) for c in cpus)
    gaps = sum(int(c.get("gaps") or 0) for c in cpus)
    share = f"{100.0 * stolen / busy:.3f} % of " if busy else ""
    return f"stolen {_us(stolen)} µs ({share}busy time), {gaps:,} gaps"


def _pi(data: dict[str, Any]) -> str | None:
    """pi: worst and mean wait beyond the hold time, against the limit."""
    if data.get("max_excess_ns") is None:
        return None
    mode = "inheritance" if data.get("pi") else "no inheritance (--no-pi)"
    text = (f"{mode}: worst excess {_us(data['max_excess_ns'])} µs, "
            f"mean {_us(data.get('mean_excess_ns') or 0)} µs")
    if data.get("limit_ns") is not None:
        text += f" (limit {_us(data['limit_ns'])} µs)"
    return text


def _event(data: dict[str, Any]) -> str | None:
    """event: events handled and missed."""
    if data.get("handled") is None:
        return None
    return (f"{data.get('kind', 'event')}: {int(data['handled']):,} handled, "
            f"{int(data.get('missed') or 0):,} missed")


def _periodic(data: dict[str, Any]) -> str | None:
    """periodic: failed iterations, missed periods, worst start latency."""
    if data.get("failed_iterations") is None:
        return None
    starts = [int(t["start_latency_ns"]) for t in _dicts(data.get("threads"))
              if t.get("start_latency_ns") is not None]
    text = (f"{int(data['failed_iterations']):,} failed iterations, "
            f"{int(data.get('missed_periods') or 0):,} missed periods")
    if starts:
        text += f", start latency {_us(max(starts))} µs"
    return text


def _wakeup(data: dict[str, Any]) -> str | None:
    """wakeup: the mechanisms measured."""
    names = [str(m.get("mechanism")) for m in _dicts(data.get("mechanisms")) if m.get("ran")]
    return "mechanisms " + ", ".join(names) if names else None


HEADLINES: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "ctx": _ctx, "ipc": _ipc, "hackbench": _hackbench, "clock": _clock, "noise": _noise,
    "pi": _pi, "event": _event, "periodic": _periodic, "wakeup": _wakeup,
}


def headline(test: str, data: dict[str, Any] | None) -> str | None:
    """The key figures of a test's data in one line (None if there are none)."""
    func = HEADLINES.get(test)
    if func is None or not isinstance(data, dict):
        return None
    try:
        return func(data)
    except (KeyError, TypeError, ValueError, ArithmeticError):
        return None


def ctx_table(data: dict[str, Any] | None) -> tuple[list[str], list[list[str]]] | None:
    """ctx's lmbench-shaped table: one row per working-set size, microseconds.

    Columns: size, the overhead subtracted at that size, then the per-switch time for
    each process count ("*" marks a cell flagged as <= 0).  None when data has no cells.
    """
    if not isinstance(data, dict):
        return None
    try:
        return _ctx_rows(data)
    except (KeyError, TypeError, ValueError, ArithmeticError):
        return None


def _ctx_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]] | None:
    """ctx_table's work; raises on data of an unexpected shape."""
    cells = _dicts(data.get("cells"))
    if not cells:
        return None
    sizes = sorted({int(c["size_kib"]) for c in cells})
    counts = sorted({int(c["processes"]) for c in cells})
    overhead = {int(o["size_kib"]): o.get("overhead_ns")
                for o in _dicts(data.get("overheads"))}
    value = {(int(c["size_kib"]), int(c["processes"])): c for c in cells}
    headers = ["size KiB", "overhead µs"] + [f"{n} procs" for n in counts]
    rows = []
    for size in sizes:
        row = [str(size), "-" if overhead.get(size) is None else _us(overhead[size])]
        for n in counts:
            cell = value.get((size, n))
            if cell is None or cell.get("per_switch_ns") is None:
                row.append("-")
            else:
                row.append(_us(cell["per_switch_ns"]) + ("*" if cell.get("flagged") else ""))
        rows.append(row)
    return headers, rows


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


def table_keys(test: str) -> tuple[str, ...]:
    """Top-level data keys a test's table already shows (left out of key/value rows)."""
    return ("cells", "overheads") if test == "ctx" else ()
