"""The cell_groups summary: run_cells aggregated per board x kernel x suite x simulated x
emulated, as the matrix reads them (issue 33: the matrix and the boards list read this
instead of every run's cells).  Written in the transaction that inserts or deletes the
cells: each group touched is computed again from its run_cells rows, so the summary is
always the aggregate of what is stored.  On PostgreSQL the group's recomputation holds a
transaction-scoped advisory lock, so two writers of one group (READ COMMITTED) cannot
leave a summary without the other's cells.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, and_, case, delete, func, insert, literal, select, text, true

from rtbench.store import schema as t

# (board, kernel, suite, simulated): the groups a write touches
GroupKey = tuple[str, str, str, bool]


def group_aggregate(where: Any) -> Any:
    """SELECT of the cell_groups rows (column names as the table's) of the run_cells rows
    matching where, grouped per board, kernel, suite, simulated and the run's emulated."""
    c = t.run_cells.c
    has = c.threshold_ns.isnot(None)
    emulated = t.runs.c.emulated
    return (select(
        c.board, c.kernel, c.suite, c.simulated, emulated.label("emulated"),
        func.count(func.distinct(c.run_id)).label("runs"),
        func.max(c.run_id).label("newest_run_id"),
        func.max(c.max_ns).label("worst_max_ns"),
        func.max(c.p999_ns).label("worst_p999_ns"),
        func.sum(case((and_(has, c.max_ns > c.threshold_ns), 1), else_=0)).label("over_cells"),
        func.sum(case((and_(has, c.max_ns <= c.threshold_ns), 1), else_=0))
        .label("under_cells"),
        func.sum(case((and_(has, c.max_ns.is_(None)), 1), else_=0)).label("unknown_cells"),
        func.min(c.threshold_ns).label("threshold_ns"))
        .select_from(t.run_cells.join(t.runs, t.runs.c.id == c.run_id))
        .where(where)
        .group_by(c.board, c.kernel, c.suite, c.simulated, emulated))


def refresh_groups(conn: Connection, keys: Iterable[GroupKey]) -> None:
    """Compute the cell_groups rows of each group in keys again from run_cells, in conn's
    transaction (after the cells were written or deleted)."""
    g = t.cell_groups.c
    c = t.run_cells.c
    postgres = conn.dialect.name == "postgresql"
    for board, kernel, suite, simulated in sorted(set(keys)):
        if postgres:
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"),
                         {"key": f"cell_groups\x1f{board}\x1f{kernel}\x1f{suite}"})
        conn.execute(delete(t.cell_groups).where(
            g.board == board, g.kernel == kernel, g.suite == suite,
            g.simulated == literal(simulated)))
        conn.execute(insert(t.cell_groups).from_select(
            [col.name for col in t.cell_groups.columns],
            group_aggregate(and_(c.simulated == literal(simulated), c.board == board,
                                 c.kernel == kernel, c.suite == suite))))


def keys_of_runs(conn: Connection, run_ids: list[int]) -> set[GroupKey]:
    """The groups the cells of the runs run_ids belong to."""
    c = t.run_cells.c
    return {(str(r.board), str(r.kernel), str(r.suite), bool(r.simulated))
            for r in conn.execute(select(c.board, c.kernel, c.suite, c.simulated)
                                  .where(c.run_id.in_(run_ids)).distinct())}


def rebuild_groups(conn: Connection) -> None:
    """Fill cell_groups from every stored cell (empties it first)."""
    conn.execute(delete(t.cell_groups))
    conn.execute(insert(t.cell_groups).from_select(
        [col.name for col in t.cell_groups.columns], group_aggregate(true())))
