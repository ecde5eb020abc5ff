"""Result data in words and tables (rtbench.report.resultdata, and the kinds' headlines and
tables through the kind registry, rtbench.kinds): shapes from docs/tests/*.md."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rtbench.kinds import packaged
from rtbench.report.resultdata import MAX_ROWS, key_values

KINDS = packaged()
HEADLINES = sorted(KINDS.kinds)


def headline(test: str, data: Any) -> str | None:
    """A kind's headline, through the registry."""
    return KINDS.headline(test, data)


def ctx_table(data: Any) -> tuple[list[str], list[list[str]]] | None:
    """ctx's table, through the registry, as (headers, rows)."""
    table = KINDS.table("ctx", data)
    return None if table is None else (table.headers, table.rows)


def table_keys(test: str) -> tuple[str, ...]:
    """The data keys a kind's table shows."""
    return KINDS.table_keys(test)

CTX = {
    "unit": "ns",
    "overheads": [{"size_kib": 0, "overhead_ns": 683, "repetitions": [726, 683, 682]},
                  {"size_kib": 16, "overhead_ns": 1298, "repetitions": [1298, 1288, 1306]}],
    "cells": [
        {"size_kib": 0, "processes": 2, "per_switch_ns": 15821, "overhead_ns": 683,
         "hops": 1000, "flagged": False, "repetitions": [15600, 15821, 15997]},
        {"size_kib": 0, "processes": 4, "per_switch_ns": 14840, "overhead_ns": 683,
         "hops": 1000, "flagged": False, "repetitions": [15437, 14840, 14551]},
        {"size_kib": 16, "processes": 2, "per_switch_ns": -12, "overhead_ns": 1298,
         "hops": 1000, "flagged": True, "repetitions": [1, -12, -20]},
    ],
}


def test_ctx_table_is_lmbench_shaped() -> None:
    table = ctx_table(CTX)
    assert table is not None
    headers, rows = table
    assert headers == ["size KiB", "overhead µs", "2 procs", "4 procs"]
    assert rows == [["0", "0.68", "15.82", "14.84"], ["16", "1.30", "-0.01*", "-"]]
    assert headline("ctx", CTX) == (
        "per switch -0.01-15.82 µs in 3 cells (overhead 0.68-1.30 µs), 1 flagged <= 0")
    assert ctx_table({"cells": []}) is None and ctx_table(None) is None
    assert dict(key_values(CTX, table_keys("ctx"))) == {"unit": "ns"}


def test_headlines_of_each_kind() -> None:
    assert headline("ipc", {"transport": "pipe", "mode": "bandwidth", "bandwidth": [
        {"cpu": 0, "chunk_bytes": 65536, "mb_per_s": 4189.86}]}) == \
        "pipe bandwidth 4190 MB/s, 64 KiB chunks"
    assert headline("ipc", {"transport": "pipe", "mode": "latency"}) is None
    assert headline("hackbench", {"elapsed_ns": 97705753, "messages_per_s": 409392.5}) == \
        "time 0.098 s, 409,392 messages/s"
    assert headline("pi", {"pi": False, "max_excess_ns": 20075, "mean_excess_ns": 18783,
                           "limit_ns": 2000000}) == (
        "no inheritance (--no-pi): worst excess 20.07 µs, mean 18.78 µs (limit 2000.00 µs)")
    assert headline("event", {"kind": "self", "handled": 1000, "missed": 3}) == \
        "self: 1,000 handled, 3 missed"
    assert headline("noise", {"cpus": [{"busy_ns": 10**9, "stolen_ns": 9017609,
                                        "gaps": 552}]}) == \
        "stolen 9017.61 µs (0.902 % of busy time), 552 gaps"
    assert headline("clock", {"clock_source": "monotonic", "read_cost_ns": 24.25}) == \
        "read cost 24.2 ns (monotonic)"
    assert headline("periodic", {"failed_iterations": 2, "missed_periods": 0, "threads": [
        {"start_latency_ns": 24022}]}) == \
        "2 failed iterations, 0 missed periods, start latency 24.02 µs"
    assert headline("wakeup", {"mechanisms": [{"mechanism": "pipe", "ran": True},
                                              {"mechanism": "sem", "ran": False}]}) == \
        "mechanisms pipe"
    assert headline("cyclic", {"x": 1}) is None


def test_key_values_flatten() -> None:
    data = {"a": {"b": 1.23456, "c": [1, 2, 3]}, "d": [{"e": True}, {"e": None}], "f": {}}
    assert key_values(data) == [("a.b", "1.235"), ("a.c", "1, 2, 3"), ("d[0].e", "true"),
                                ("d[1].e", "null"), ("f", "{}")]
    long = key_values({"xs": list(range(30))})
    assert long[0][1].endswith("... (30 in all)")
    many = key_values({f"k{i}": i for i in range(200)})
    assert len(many) == MAX_ROWS + 1 and many[-1][0] == "..."


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20)


@settings(deadline=None, max_examples=200)
@given(st.dictionaries(st.sampled_from(["cells", "overheads", "bandwidth", "cpus", "threads",
                                        "mechanisms", "elapsed_ns", "handled", "max_excess_ns",
                                        "read_cost_ns", "failed_iterations", "other"]),
                       JSON, max_size=6))
def test_never_raises_on_odd_data(data: dict[str, Any]) -> None:
    for test in HEADLINES:
        result = headline(test, data)
        assert result is None or isinstance(result, str)
    table = ctx_table(data)
    assert table is None or len(table[1]) >= 1
    for key, value in key_values(data):
        assert isinstance(key, str) and isinstance(value, str)


CELL_KEYS = st.sampled_from(["size_kib", "processes", "per_switch_ns", "overhead_ns",
                             "flagged"])


@settings(deadline=None, max_examples=200)
@given(st.lists(st.dictionaries(CELL_KEYS, JSON, max_size=5), max_size=4),
       st.lists(st.dictionaries(CELL_KEYS, JSON, max_size=3), max_size=3))
def test_ctx_never_raises_on_odd_cells(cells: list[dict[str, Any]],
                                       overheads: list[dict[str, Any]]) -> None:
    data = {"cells": cells, "overheads": overheads}
    table = ctx_table(data)
    assert table is None or all(len(row) == len(table[0]) for row in table[1])
    assert headline("ctx", data) is None or isinstance(headline("ctx", data), str)
