"""The newest run's summaries of every board x suite (for `GET /metrics`).

Per (board, suite) the run that started last, and every cell row of it: one query over
run_cells whose grouping reads only the index (simulated, board, suite, started_at)
(migration 0004_ops) and whose join, driven from those groups, seeks the same index on
all four columns, so no histogram and no older row is read.  Two runs of a board x
suite that started at the same instant: the higher run id wins.  A cell the newest run
did not measure is not reported (it is no longer current).  Simulated runs are left out
unless asked for.
"""

from __future__ import annotations

from sqlalchemy import and_, func, select

from rtbench.store import Store
from rtbench.store import schema as t
from rtbench.store.cells import CellRow, row_of


def latest_cells(store: Store, simulated: bool = False) -> list[CellRow]:
    """The cell rows of the newest run of each board x suite (real runs; simulated ones
    when simulated is True), ordered by board, suite and cell."""
    c = t.run_cells.c
    newest = (select(c.simulated, c.board, c.suite, func.max(c.started_at).label("newest"))
              .where(c.simulated.is_(simulated))
              .group_by(c.simulated, c.board, c.suite).subquery())
    # driven from the (board, suite) groups, joined on all four index columns: with the
    # filter on the outer run_cells instead, SQLite scanned every row of the table and
    # probed the groups (1.1 s for 100,000 rows), rather than seeking each group's rows
    query = (select(t.run_cells).select_from(newest)
             .join(t.run_cells, and_(c.simulated == newest.c.simulated,
                                     c.board == newest.c.board,
                                     c.suite == newest.c.suite,
                                     c.started_at == newest.c.newest))
             .order_by(c.board, c.suite, c.scenario, c.measurement, c.series_label))
    with store.transaction("read the newest cell summaries") as conn:
        rows = [row_of(r) for r in conn.execute(query)]
    last_run: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row.board, row.suite)
        last_run[key] = max(last_run.get(key, row.run_id), row.run_id)
    return [r for r in rows if r.run_id == last_run[(r.board, r.suite)]]
