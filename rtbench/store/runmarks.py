"""What the run lists need for their markers (rtbench/report/run_markers.py): the scale,
whether a measurement holds trace records, and whether the run ran under CPU emulation.

Computed in the list's own query, for the listed rows only: `traced` is an EXISTS over
trace_info, `emulated` is the runs column of that name where the schema has one, else
(and where it is NULL) the stored sysinfo's `virtualization` read by a LIKE on its
compact JSON text (tcg or an emulator): no sysinfo is loaded into Python for a list.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    ColumnElement,
    Label,
    and_,
    case,
    exists,
    false,
    func,
    literal,
    literal_column,
    or_,
    select,
)

from rtbench.bundle import EMULATED_VIRTUALIZATION
from rtbench.store import schema as t

if TYPE_CHECKING:  # the store imports this module for its runs list
    from rtbench.store import Store

# how the stored sysinfo (compact JSON, store._dumps) names an emulated CPU
_EMULATED_SYSINFO = tuple(f'%"virtualization":"{prefix}%'
                          for prefix in EMULATED_VIRTUALIZATION)


def marker_columns() -> list[Label[Any]]:
    """The labelled expressions a runs list selects for its markers (scale, traced,
    emulated_column, emulated_sysinfo), over t.runs."""
    r = t.runs.c
    traced = exists(select(t.trace_info.c.measurement_id).select_from(
        t.trace_info.join(t.measurements,
                          t.measurements.c.id == t.trace_info.c.measurement_id)
        .join(t.scenarios, t.scenarios.c.id == t.measurements.c.scenario_id))
        .where(t.scenarios.c.run_id == r.id))
    column: ColumnElement[Any] = r["emulated"] if "emulated" in r else literal(None)
    like = or_(*(r.sysinfo.like(p) for p in _EMULATED_SYSINFO))
    # the sysinfo text is read only where the column does not say (marker_fields
    # reads it only then)
    by_sysinfo = case((and_(r["emulated"].is_(None), like) if "emulated" in r else like,
                       True), else_=false())
    return [r.scale.label("scale"), traced.label("traced"),
            column.label("emulated_column"), by_sysinfo.label("emulated_sysinfo")]


def marker_fields(row: Any) -> dict[str, Any]:
    """RunSummary's scale, traced and emulated from a row selected with marker_columns()."""
    emulated = row.emulated_column
    if emulated is None:
        emulated = bool(row.emulated_sysinfo)
    return {"scale": float(row.scale), "traced": bool(row.traced),
            "emulated": bool(emulated)}


def group_markers(store: Store, *, suite: str | None, boards: list[str] | None,
                  simulated: bool | None, emulated_included: bool = True
                  ) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Per (suite, board, kernel) of the matrix: what any of its runs carries, as a
    run-like dict for run_markers (scale: the smallest; traced, emulated, simulated: any
    run).  Small queries, each reading only the runs that carry a marker: the short
    ones (through the partial index ix_runs_short: its condition is written as a literal
    so that the planner can use it), the emulated ones (the `emulated` column where the
    schema has it and it is set, else a LIKE over sysinfo), the traced ones (driven from
    trace_info) and, when asked for, the simulated ones."""
    r = t.runs.c
    keep: list[ColumnElement[bool]] = []
    if suite is not None:
        keep.append(r.suite == suite)
    if boards is not None:
        keep.append(r.board.in_(boards))
    if simulated is not None:
        keep.append(r.simulated == simulated)
    found: dict[tuple[str, str, str], dict[str, Any]] = {}

    def entry(row: Any) -> dict[str, Any]:
        """The dict of row's (suite, board, kernel)."""
        return found.setdefault((row.suite, row.board, row.kernel), {})

    by_sysinfo = or_(*(r.sysinfo.like(p) for p in _EMULATED_SYSINFO))
    emulated = (or_(r["emulated"].is_(True), and_(r["emulated"].is_(None), by_sysinfo))
                if "emulated" in r else by_sysinfo)
    if not emulated_included:  # the matrix left emulated runs out: their marks too
        keep.append(~emulated)
    traced_runs = (select(t.scenarios.c.run_id).select_from(
        t.trace_info.join(t.measurements,
                          t.measurements.c.id == t.trace_info.c.measurement_id)
        .join(t.scenarios, t.scenarios.c.id == t.measurements.c.scenario_id)))
    with store.transaction("read the run markers of the matrix") as conn:
        for short in conn.execute(select(r.suite, r.board, r.kernel,
                                         func.min(r.scale).label("scale"))
                                  .where(r.scale < literal_column("1"), *keep)
                                  .group_by(r.suite, r.board, r.kernel)):
            entry(short)["scale"] = float(short.scale)
        flagged: list[tuple[str, ColumnElement[bool]]] = [("traced", r.id.in_(traced_runs))]
        if emulated_included:
            flagged.insert(0, ("emulated", emulated))
        if simulated is not False:
            flagged.append(("simulated", r.simulated.is_(True)))
        for marker, condition in flagged:
            for row in conn.execute(select(r.suite, r.board, r.kernel)
                                    .where(condition, *keep)
                                    .group_by(r.suite, r.board, r.kernel)):
                entry(row)[marker] = True
    return found


def board_run_marks(store: Store, board: str | None = None, run_id: int | None = None,
                    since: datetime | None = None) -> dict[int, dict[str, Any]]:
    """Per run of board (started at since or later: the runs a page lists) or the one
    run run_id that carries a marker: a run-like dict for run_markers (scale, traced,
    emulated, simulated); runs without one are left out."""
    r = t.runs.c
    where = [r.board == board] if run_id is None else [r.id == run_id]
    if since is not None:
        where.append(r.started_at >= since)
    with store.transaction("read the run markers") as conn:
        rows = conn.execute(select(r.id, r.simulated, *marker_columns()).where(*where)).all()
    out: dict[int, dict[str, Any]] = {}
    for row in rows:
        fields = {**marker_fields(row), "simulated": bool(row.simulated)}
        if fields["scale"] < 1 or fields["traced"] or fields["emulated"] or fields["simulated"]:
            out[int(row.id)] = fields
    return out
