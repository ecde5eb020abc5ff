"""Read queries over run_cells for the lab pages: the board x kernel matrix groups, the
boards list and a board's combined histogram.  Aggregation happens in SQL on the
per-run summaries, never on histograms (but for the one combined histogram asked for).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, select, true

from rtbench.store import Store
from rtbench.store import schema as t
from rtbench.store.utc import as_utc


@dataclass
class MatrixGroup:
    """The run_cells of one board, kernel and suite, aggregated."""

    board: str
    kernel: str
    suite: str
    runs: int
    newest_run_id: int
    worst_max_ns: int | None
    worst_p999_ns: int | None
    over: int  # cell rows whose max is above their smallest threshold
    under: int  # cell rows with a threshold and a max at or below it
    unknown: int  # cell rows with a threshold but no max (no samples)
    threshold_ns: int | None  # the smallest threshold among them


@dataclass
class BoardSummary:
    """One line of the boards list."""

    board: str
    runs: int
    suites: list[str]
    kernels: list[str]
    last_run_at: datetime
    last_kernel: str


def _where(board: str | None, suite: str | None, simulated: bool | None,
           emulated: bool = True) -> ColumnElement[bool]:
    """The common WHERE of these queries (emulated: False leaves out runs measured under
    CPU emulation)."""
    c = t.run_cells.c
    cond: list[ColumnElement[bool]] = []
    if simulated is not None:
        cond.append(c.simulated == simulated)
    if not emulated:
        cond.append(c.run_id.not_in(select(t.runs.c.id).where(t.runs.c.emulated.is_(True))))
    if board is not None:
        cond.append(c.board == board)
    if suite is not None:
        cond.append(c.suite == suite)
    return and_(true(), *cond)


def _group_where(board: str | None, suite: str | None, simulated: bool | None,
                 emulated: bool) -> ColumnElement[bool]:
    """_where() over the cell_groups summary (rtbench/store/cellgroups.py)."""
    g = t.cell_groups.c
    cond: list[ColumnElement[bool]] = []
    if simulated is not None:
        cond.append(g.simulated == simulated)
    if not emulated:
        cond.append(g.emulated.is_(False))
    if board is not None:
        cond.append(g.board == board)
    if suite is not None:
        cond.append(g.suite == suite)
    return and_(true(), *cond)


def board_names(store: Store, *, suite: str | None = None, simulated: bool | None = False,
                page: int = 1, per_page: int = 100, emulated: bool = True
                ) -> tuple[list[str], int]:
    """One page of the boards with matching run cells (sorted), and how many there are
    (emulated: False leaves out emulated runs); read from the cell_groups summary."""
    c = t.cell_groups.c
    where = _group_where(None, suite, simulated, emulated)
    with store.transaction("list boards") as conn:
        total = int(conn.execute(select(func.count(func.distinct(c.board))).where(where))
                    .scalar_one())
        names = [str(b) for (b,) in conn.execute(
            select(c.board).where(where).group_by(c.board).order_by(c.board)
            .limit(per_page).offset((page - 1) * per_page))]
    return names, total


def matrix_groups(store: Store, *, suite: str | None = None, board: str | None = None,
                  simulated: bool | None = False, boards: list[str] | None = None,
                  emulated: bool = True, last_runs: int | None = None,
                  last_nights: int | None = None) -> list[MatrixGroup]:
    """One group per (board, kernel, suite) of the matching run cells (boards: only
    these; emulated: False leaves out emulated runs); last_runs: only each group's newest
    last_runs runs; last_nights: only the runs started within last_nights days of the
    newest matching run.  Without last_runs and last_nights the groups are read from the
    cell_groups summary (the same figures, kept at insert), else from run_cells."""
    if last_runs is None and last_nights is None:
        return _summary_groups(store, suite=suite, board=board, simulated=simulated,
                               boards=boards, emulated=emulated)
    c = t.run_cells.c
    source: Any = t.run_cells
    if last_runs is not None:
        rank = func.dense_rank().over(partition_by=(c.board, c.kernel, c.suite),
                                      order_by=(c.started_at.desc(), c.run_id.desc()))
        inner = select(t.run_cells, rank.label("rank")).where(
            _where(board, suite, simulated, emulated))
        if boards is not None:
            inner = inner.where(c.board.in_(boards))
        ranked = inner.subquery("ranked")
        source = select(ranked).where(ranked.c.rank <= last_runs).subquery("recent")
        c = source.c
    has = c.threshold_ns.isnot(None)
    query = (select(
        c.board, c.kernel, c.suite, func.count(func.distinct(c.run_id)).label("runs"),
        func.max(c.run_id).label("newest"), func.max(c.max_ns).label("worst"),
        func.max(c.p999_ns).label("p999"),
        func.sum(case((and_(has, c.max_ns > c.threshold_ns), 1), else_=0)).label("over"),
        func.sum(case((and_(has, c.max_ns <= c.threshold_ns), 1), else_=0)).label("under"),
        func.sum(case((and_(has, c.max_ns.is_(None)), 1), else_=0)).label("unknown"),
        func.min(c.threshold_ns).label("threshold"))
        .select_from(source)
        .group_by(c.board, c.kernel, c.suite))
    if last_runs is None:
        query = query.where(_where(board, suite, simulated, emulated))
        if boards is not None:
            query = query.where(c.board.in_(boards))
    with store.transaction("build the matrix") as conn:
        if last_nights is not None:
            rc = t.run_cells.c
            newest = conn.execute(select(func.max(rc.started_at)).where(
                _where(board, suite, simulated, emulated))).scalar()
            if newest is not None:
                query = query.where(c.started_at >= newest - timedelta(days=last_nights))
        return [_matrix_group(r) for r in conn.execute(query)]


def _summary_groups(store: Store, *, suite: str | None, board: str | None,
                    simulated: bool | None, boards: list[str] | None,
                    emulated: bool) -> list[MatrixGroup]:
    """matrix_groups() over every run, from the cell_groups summary: its rows of one
    board, kernel and suite (one per simulated x emulated) combined."""
    g = t.cell_groups.c
    query = (select(g.board, g.kernel, g.suite, func.sum(g.runs).label("runs"),
                    func.max(g.newest_run_id).label("newest"),
                    func.max(g.worst_max_ns).label("worst"),
                    func.max(g.worst_p999_ns).label("p999"),
                    func.sum(g.over_cells).label("over"),
                    func.sum(g.under_cells).label("under"),
                    func.sum(g.unknown_cells).label("unknown"),
                    func.min(g.threshold_ns).label("threshold"))
             .where(_group_where(board, suite, simulated, emulated))
             .group_by(g.board, g.kernel, g.suite))
    if boards is not None:
        query = query.where(g.board.in_(boards))
    with store.transaction("build the matrix") as conn:
        return [_matrix_group(r) for r in conn.execute(query)]


def _matrix_group(r: Any) -> MatrixGroup:
    """A MatrixGroup from a row of the matrix's aggregate query (columns as labelled there)."""
    return MatrixGroup(board=r.board, kernel=r.kernel, suite=r.suite, runs=int(r.runs),
                       newest_run_id=int(r.newest), worst_max_ns=_int(r.worst),
                       worst_p999_ns=_int(r.p999), over=int(r.over or 0),
                       under=int(r.under or 0), unknown=int(r.unknown or 0),
                       threshold_ns=_int(r.threshold))


def _int(value: object) -> int | None:
    """An aggregate as int (None stays None)."""
    return None if value is None else int(value)  # type: ignore[call-overload]


def board_list(store: Store, *, simulated: bool | None = False) -> list[BoardSummary]:
    """Every board with stored cells: runs, suites, kernels and its newest run."""
    c = t.run_cells.c
    where = _where(None, None, simulated)
    with store.transaction("list boards") as conn:
        totals = conn.execute(
            select(c.board, func.count(func.distinct(c.run_id)).label("runs"),
                   func.max(c.started_at).label("last"))
            .where(where).group_by(c.board).order_by(c.board)).all()
        pairs = conn.execute(select(c.board, c.suite, c.kernel,
                                    func.max(c.started_at).label("last"))
                             .where(where).group_by(c.board, c.suite, c.kernel)).all()
    suites: dict[str, set[str]] = {}
    kernels: dict[str, set[str]] = {}
    newest: dict[str, tuple[datetime, str]] = {}
    for r in pairs:
        suites.setdefault(r.board, set()).add(r.suite)
        kernels.setdefault(r.board, set()).add(r.kernel)
        when = as_utc(r.last)
        if r.board not in newest or when > newest[r.board][0]:
            newest[r.board] = (when, r.kernel)
    return [BoardSummary(board=r.board, runs=int(r.runs), suites=sorted(suites[r.board]),
                         kernels=sorted(kernels[r.board]), last_run_at=as_utc(r.last),
                         last_kernel=newest[r.board][1])
            for r in totals]


def board_histogram(store: Store, board: str, *, suite: str | None = None, last: int = 10,
                    simulated: bool | None = False) -> tuple[list[int], list[tuple[int, int]]]:
    """The last `last` runs of board (newest first) and their latency histograms merged
    over every series (sparse loglin7 pairs)."""
    c = t.run_cells.c
    with store.transaction("read a board's histograms") as conn:
        run_ids = [int(r[0]) for r in conn.execute(
            select(c.run_id).where(_where(board, suite, simulated)).group_by(c.run_id)
            .order_by(func.max(c.started_at).desc(), c.run_id.desc()).limit(last))]
        if not run_ids:
            return [], []
        h = t.hist_buckets.c
        rows = conn.execute(
            select(h.bucket, func.sum(h.count))
            .select_from(t.hist_buckets.join(
                t.measurements, t.measurements.c.id == h.measurement_id)
                .join(t.scenarios, t.scenarios.c.id == t.measurements.c.scenario_id))
            .where(t.scenarios.c.run_id.in_(run_ids))
            .group_by(h.bucket).order_by(h.bucket)).all()
    return run_ids, [(int(b), int(n)) for b, n in rows]
