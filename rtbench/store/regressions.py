"""The regression board's table (regressions): each stored run's checks against its
board's baseline, written in one transaction per run and read back by the server."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    String,
    and_,
    bindparam,
    delete,
    func,
    insert,
    literal_column,
    or_,
    select,
)

from rtbench.store import Store
from rtbench.store import schema as t
from rtbench.store.utc import as_utc

# a stored check's outcome: the decision model's state of an open regression (confirmed:
# it held over the kernel's runs; suspected: this run alone), else the run's decision
CONFIRMED = "confirmed"
SUSPECTED = "suspected"
OUTCOMES = (CONFIRMED, SUSPECTED, "inconclusive", "no regression")
# the listing's outcome "regression": both states of an open regression
REGRESSION_STATES = (CONFIRMED, SUSPECTED)
# runs whose cells are evidence: a finished run with measurements of its own (an
# inconclusive run's cells without samples decide nothing, its others count)
EVIDENCE_STATUSES = ("ok", "fail", "break", "inconclusive")


@dataclass(frozen=True)
class BoardRun:
    """A stored run of a board and suite, as the baseline choice needs it."""

    run_id: int
    kernel: str
    started_at: datetime
    tags: dict[str, str]
    simulated: bool


@dataclass
class RegressionRow:
    """One check as stored: a cell and metric of a run against its board's baseline."""

    run_id: int
    board: str
    suite: str
    kernel: str
    cell: str
    metric: str
    outcome: str
    reason: str
    baseline_kind: str
    baseline_kernel: str | None
    baseline_runs: list[int]
    baseline_value: float | None
    value: float | None
    rel: float | None
    started_at: datetime
    checked_at: datetime | None = None


def board_runs(store: Store, board: str, suite: str, *, simulated: bool | None = None,
               kernel: str | None = None, tag: str | None = None,
               newest: int | None = None, exclude: int | None = None,
               before: tuple[datetime, int] | None = None) -> list[BoardRun]:
    """The runs of board and suite that hold evidence, oldest first; only those simulated
    (or measured), on kernel, carrying the tag tag, other than run exclude, started
    before before (started_at, id), and the newest newest of them, where given."""
    with store.transaction(f"read the runs of board {board!r}") as conn:
        return read_board_runs(conn, board, suite, simulated=simulated, kernel=kernel,
                               tag=tag, newest=newest, exclude=exclude, before=before)


def read_board_runs(conn: Connection, board: str, suite: str, *,
                    simulated: bool | None = None, kernel: str | None = None,
                    tag: str | None = None, newest: int | None = None,
                    exclude: int | None = None,
                    before: tuple[datetime, int] | None = None) -> list[BoardRun]:
    """board_runs inside a transaction of the caller's (the check reads its inputs in
    one)."""
    query = _board_runs_query(simulated is not None, kernel is not None, tag is not None,
                              exclude is not None, before is not None, newest)
    params: dict[str, Any] = {"board": board, "suite": suite}
    if simulated is not None:
        params["simulated"] = simulated
    if kernel is not None:
        params["kernel"] = kernel
    if tag is not None:
        params["tag"] = json.dumps(tag)
    if exclude is not None:
        params["exclude"] = exclude
    if before is not None:
        params["before_at"], params["before_id"] = before
    rows = list(conn.execute(query, params).all())
    if newest is not None:
        rows.reverse()
    runs = [BoardRun(row.id, row.kernel, as_utc(row.started_at),
                     {str(k): str(v) for k, v in json.loads(row.tags or "{}").items()},
                     bool(row.simulated)) for row in rows]
    return runs if tag is None else [run for run in runs if tag in run.tags]


@functools.lru_cache(maxsize=64)
def _board_runs_query(simulated: bool, kernel: bool, tag: bool, exclude: bool,
                      before: bool, newest: int | None) -> Select[Any]:
    """read_board_runs' query for the filters given, with bound parameters (built once:
    building a query costs more than SQLite takes to run it)."""
    r = t.runs
    cond: list[ColumnElement[bool]] = [r.c.board == bindparam("board"),
                                       r.c.suite == bindparam("suite"),
                                       r.c.status.in_(EVIDENCE_STATUSES)]
    if simulated:
        cond.append(r.c.simulated == bindparam("simulated"))
    if kernel:
        cond.append(r.c.kernel == bindparam("kernel"))
    if tag:
        # tags are stored as JSON text: the key's quoted name is in it (checked exactly
        # by the caller)
        cond.append(r.c.tags.contains(bindparam("tag", type_=String)))
        # the same runs (no tag is in "{}"), found through the partial index ix_runs_tagged
        # (its condition written out as the index's, so both databases use it)
        cond.append(r.c.tags != literal_column("'{}'"))
    if exclude:
        cond.append(r.c.id != bindparam("exclude"))
    if before:
        at = bindparam("before_at", type_=r.c.started_at.type)
        cond.append(or_(r.c.started_at < at,
                        and_(r.c.started_at == at, r.c.id < bindparam("before_id"))))
    query = select(r.c.id, r.c.kernel, r.c.started_at, r.c.tags, r.c.simulated).where(*cond)
    if newest is not None:
        return query.order_by(r.c.started_at.desc(), r.c.id.desc()).limit(newest)
    return query.order_by(r.c.started_at, r.c.id)


def board_kernels(store: Store, board: str, suite: str, *, simulated: bool,
                  exclude: int | None = None) -> list[str]:
    """The kernels of board's and suite's runs that hold evidence (simulated or measured
    ones, other than run exclude), in the order each first appears."""
    with store.transaction(f"read the kernels of board {board!r}") as conn:
        return read_board_kernels(conn, board, suite, simulated=simulated, exclude=exclude)


def read_board_kernels(conn: Connection, board: str, suite: str, *, simulated: bool,
                       exclude: int | None = None) -> list[str]:
    """board_kernels inside a transaction of the caller's."""
    params: dict[str, Any] = {"board": board, "suite": suite, "simulated": simulated}
    if exclude is not None:
        params["exclude"] = exclude
    rows = conn.execute(_board_kernels_query(exclude is not None), params).all()
    return [str(row.kernel) for row in rows]


@functools.lru_cache(maxsize=4)
def _board_kernels_query(exclude: bool) -> Select[Any]:
    """read_board_kernels' query, with bound parameters (built once)."""
    r = t.runs
    cond: list[ColumnElement[bool]] = [r.c.board == bindparam("board"),
                                       r.c.suite == bindparam("suite"),
                                       r.c.status.in_(EVIDENCE_STATUSES),
                                       r.c.simulated == bindparam("simulated"),
                                       r.c.kernel != ""]
    if exclude:
        cond.append(r.c.id != bindparam("exclude"))
    return (select(r.c.kernel).where(*cond).group_by(r.c.kernel)
            .order_by(func.min(r.c.started_at), func.min(r.c.id)))


def replace_checks(store: Store, run_id: int, rows: list[RegressionRow]) -> None:
    """Store run_id's checks in place of the ones it had (one transaction)."""
    now = datetime.now(timezone.utc)
    values = [{"run_id": run_id, "board": row.board[:255], "suite": row.suite[:255],
               "kernel": row.kernel[:255], "cell": row.cell[:1024],
               "metric": row.metric[:32], "outcome": row.outcome,
               "reason": row.reason, "baseline_kind": row.baseline_kind,
               "baseline_kernel": None if row.baseline_kernel is None
               else row.baseline_kernel[:255],
               "baseline_runs": json.dumps(row.baseline_runs),
               "baseline_value": row.baseline_value, "value": row.value, "rel": row.rel,
               "started_at": row.started_at, "checked_at": now} for row in rows]
    with store.transaction(f"store the regression checks of run {run_id}") as conn:
        conn.execute(delete(t.regressions).where(t.regressions.c.run_id == run_id))
        if values:
            conn.execute(insert(t.regressions), values)


def _conditions(board: str | None, suite: str | None, since: datetime | None,
                outcome: str | None) -> list[ColumnElement[bool]]:
    """The WHERE terms of a listing."""
    g = t.regressions
    cond: list[ColumnElement[bool]] = []
    if board:
        cond.append(g.c.board == board)
    if suite:
        cond.append(g.c.suite == suite)
    if since is not None:
        cond.append(g.c.started_at >= since)
    if outcome == "regression":
        cond.append(g.c.outcome.in_(REGRESSION_STATES))
    elif outcome:
        cond.append(g.c.outcome == outcome)
    return cond


def list_checks(store: Store, *, board: str | None = None, suite: str | None = None,
                since: datetime | None = None, outcome: str | None = "regression",
                limit: int = 1000) -> list[RegressionRow]:
    """Stored checks matching, newest run first (outcome None: every outcome;
    "regression": confirmed and suspected)."""
    g = t.regressions
    with store.transaction("read the regression board") as conn:
        rows = conn.execute(select(g).where(*_conditions(board, suite, since, outcome))
                            .order_by(g.c.started_at.desc(), g.c.id).limit(limit)).all()
    return [_row(r) for r in rows]


def _row(r: Any) -> RegressionRow:
    """A database row as a RegressionRow."""
    return RegressionRow(
        run_id=r.run_id, board=r.board, suite=r.suite, kernel=r.kernel, cell=r.cell,
        metric=r.metric, outcome=r.outcome, reason=r.reason,
        baseline_kind=r.baseline_kind, baseline_kernel=r.baseline_kernel,
        baseline_runs=[int(x) for x in json.loads(r.baseline_runs or "[]")],
        baseline_value=r.baseline_value, value=r.value, rel=r.rel,
        started_at=as_utc(r.started_at), checked_at=as_utc(r.checked_at))


def outcome_counts(store: Store, *, board: str | None = None, suite: str | None = None,
                   since: datetime | None = None) -> dict[str, int]:
    """How many stored checks have each outcome."""
    g = t.regressions
    with store.transaction("count the regression checks") as conn:
        rows = conn.execute(select(g.c.outcome, func.count())
                            .where(*_conditions(board, suite, since, None))
                            .group_by(g.c.outcome)).all()
    return {str(o): int(n) for o, n in rows}


def cell_marks(store: Store, suite: str | None = None, board: str | None = None
               ) -> dict[tuple[str, str, str], str]:
    """The matrix's mark per (suite, board, kernel): "confirmed" where a run there holds
    a confirmed regression, else "suspected" where one holds a suspected one."""
    g = t.regressions
    with store.transaction("read the regression marks") as conn:
        rows = conn.execute(
            select(g.c.suite, g.c.board, g.c.kernel, g.c.outcome)
            .where(g.c.outcome.in_(REGRESSION_STATES),
                   *([g.c.suite == suite] if suite else []),
                   *([g.c.board == board] if board else []))
            .group_by(g.c.suite, g.c.board, g.c.kernel, g.c.outcome)).all()
    marks: dict[tuple[str, str, str], str] = {}
    for s, b, k, outcome in rows:
        if marks.get((s, b, k)) != CONFIRMED:
            marks[(s, b, k)] = str(outcome)
    return marks


def board_checks(store: Store, board: str, *, limit: int = 20000) -> list[RegressionRow]:
    """A board's stored checks of every outcome, newest run first (open_regressions'
    input)."""
    return list_checks(store, board=board, outcome=None, limit=limit)


@dataclass
class KeyCheck:
    """A stored check as open_regressions reads it (analysis/openregs.py)."""

    run_id: int
    board: str
    suite: str
    kernel: str
    cell: str
    metric: str
    outcome: str
    started_at: datetime
    baseline_kernel: str | None
    rel: float | None


def open_checks(store: Store, board: str) -> list[KeyCheck]:
    """The checks of board that say which regressions are open on it (the input of
    open_regressions, equal in its answer to every check of the board): of each suite,
    cell and metric that ever held a regression, its checks from the first that held
    one on; a key that never held one is never open, and its checks before that one
    change nothing.  Two queries, the second only where a regression was ever found."""
    with store.transaction(f"read the open regressions of board {board!r}") as conn:
        firsts = {(str(s), str(c), str(m)): as_utc(at) for s, c, m, at in conn.execute(
            _FIRST_REGRESSIONS, {"board": board}).all()}
        if not firsts:
            return []
        rows = conn.execute(_KEY_CHECKS, {"board": board,
                                          "since": min(firsts.values())}).all()
    out = []
    for r in rows:
        first = firsts.get((r.suite, r.cell, r.metric))
        started = as_utc(r.started_at)
        if first is not None and started >= first:
            out.append(KeyCheck(r.run_id, r.board, r.suite, r.kernel, r.cell, r.metric,
                                r.outcome, started, r.baseline_kernel, r.rel))
    return out


_G = t.regressions
# per key of a board: when it first held a regression (ix_regressions_board_outcome)
_FIRST_REGRESSIONS = (select(_G.c.suite, _G.c.cell, _G.c.metric, func.min(_G.c.started_at))
                      .where(_G.c.board == bindparam("board"),
                             _G.c.outcome.in_(REGRESSION_STATES))
                      .group_by(_G.c.suite, _G.c.cell, _G.c.metric))
# a board's checks since then, only the columns open_regressions reads
_KEY_CHECKS = (select(_G.c.run_id, _G.c.board, _G.c.suite, _G.c.kernel, _G.c.cell,
                      _G.c.metric, _G.c.outcome, _G.c.started_at, _G.c.baseline_kernel,
                      _G.c.rel)
               .where(_G.c.board == bindparam("board"),
                      _G.c.started_at >= bindparam("since", type_=_G.c.started_at.type)))


def run_ids(store: Store, *, board: str | None = None, suite: str | None = None
            ) -> list[int]:
    """The ids of the runs of board and suite that hold evidence, a board's and suite's
    runs together, oldest first (so a batch check finds each baseline still cached)."""
    r = t.runs
    cond: list[ColumnElement[bool]] = [r.c.status.in_(EVIDENCE_STATUSES)]
    if board:
        cond.append(r.c.board == board)
    if suite:
        cond.append(r.c.suite == suite)
    with store.transaction("list the runs to check") as conn:
        return [int(i) for i in conn.execute(
            select(r.c.id).where(*cond).order_by(r.c.board, r.c.suite, r.c.started_at,
                                                 r.c.id)).scalars()]


def checks_of_run(store: Store, run_id: int,
                  outcomes: tuple[str, ...] = ("regression",)) -> list[RegressionRow]:
    """The stored checks of one run with one of outcomes (a run page says what the
    regression board found in it)."""
    g = t.regressions
    with store.transaction(f"read the regression checks of run {run_id}") as conn:
        rows = conn.execute(select(g).where(g.c.run_id == run_id, g.c.outcome.in_(outcomes))
                            .order_by(g.c.cell, g.c.metric)).all()
    return [_row(r) for r in rows]
