"""The newest run's summary of every board x suite x cell (for `GET /metrics`).

One query over run_cells: per (board, suite, scenario, measurement, series label) the
row of the run that started last (ties: the higher run id), ranked in SQL with
row_number() (SQLite 3.25+, PostgreSQL), so no histogram is read and no older row
crosses the wire.  Simulated runs are left out unless asked for.
"""

from __future__ import annotations

from sqlalchemy import func, select

from rtbench.store import Store
from rtbench.store import schema as t
from rtbench.store.cells import CellRow, row_of


def latest_cells(store: Store, simulated: bool = False) -> list[CellRow]:
    """The newest row of each board x suite x cell (real runs; simulated ones when
    simulated is True), ordered by board, suite and cell."""
    c = t.run_cells.c
    rank = func.row_number().over(
        partition_by=(c.board, c.suite, c.scenario, c.measurement, c.series_label),
        order_by=(c.started_at.desc(), c.run_id.desc(), c.id.desc())).label("rank")
    ranked = select(t.run_cells, rank).where(c.simulated.is_(simulated)).subquery()
    query = (select(ranked).where(ranked.c.rank == 1)
             .order_by(ranked.c.board, ranked.c.suite, ranked.c.scenario,
                       ranked.c.measurement, ranked.c.series_label))
    with store.transaction("read the newest cell summaries") as conn:
        return [row_of(r) for r in conn.execute(query)]
