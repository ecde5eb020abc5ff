"""The lab views as plain data: the board x kernel matrix, the boards list and a
board's history, read from the per-run summaries (run_cells) only.  The pages and the
JSON API both build on these."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rtbench.analysis.boards import CellHistory, MatrixTable, histories, matrix_tables
from rtbench.analysis.kernelver import kernel_sort_key
from rtbench.analysis.openregs import OpenRegression, open_regressions
from rtbench.report.run_markers import run_markers
from rtbench.store import Store
from rtbench.store.boards import board_list, board_names, matrix_groups
from rtbench.store.cells import RT_POLICIES
from rtbench.store.queries import RunFilter, list_runs_page
from rtbench.store.regressions import marked_checks, open_checks
from rtbench.store.runmarks import group_markers

# how many cell rows of a board's history are drawn at most (the newest)
HISTORY_LIMIT = 5000
# how many of a board's newest runs (a year of nightly runs) its history page and API
# draw unless asked for all
HISTORY_RUNS = 365
# how many of the drawn runs each cell's table on the board page lists (the newest)
# unless asked for all: the plot above it holds every drawn run, each with its tooltip
TABLE_ROWS = 30


# boards per page of the matrix
MATRIX_BOARDS = 100


@dataclass
class MatrixPage:
    """One page of the matrix: its tables and where it lies among all boards."""

    tables: list[MatrixTable]
    page: int
    pages: int
    boards: int  # boards in all pages
    per_page: int
    # per (suite, board, kernel): the markers its runs carry (report/run_markers.py)
    run_marks: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)


SPANS = ("runs", "nights")  # the matrix's figures over the last N runs or nights


def span_text(span: str | None, last: int) -> str:
    """What the matrix's figures are taken over, in words."""
    if span == "runs":
        return f"the last {last}"
    if span == "nights":
        return f"the last {last} nights' (before the newest run)"
    return "every"


def matrix(store: Store, *, suite: str | None, board: str | None,
           simulated: bool, page: int = 1, per_page: int = MATRIX_BOARDS,
           emulated: bool = False, span: str | None = None, last: int = 7) -> MatrixPage:
    """One page of the matrix tables, per_page boards (real runs only unless simulated;
    runs measured under CPU emulation only when emulated); span: the figures of every run
    (None, worst ever), of each cell's last `last` runs ("runs") or of the last `last`
    nights ("nights")."""
    from rtbench.server.views.marks import cell_marks

    sim = None if simulated else False
    if board is not None:
        names, total = [board], 1
    else:
        names, total = board_names(store, suite=suite, simulated=sim, page=page,
                                   per_page=per_page, emulated=emulated)
    groups = matrix_groups(store, suite=suite, board=board, simulated=sim, boards=names,
                           emulated=emulated, last_runs=last if span == "runs" else None,
                           last_nights=last if span == "nights" else None)
    marked = group_markers(store, suite=suite, boards=names, simulated=sim,
                           emulated_included=emulated)
    return MatrixPage(tables=matrix_tables(groups, cell_marks(store, suite=suite,
                                                              board=board)),
                      page=page, pages=max(1, -(-total // per_page)), boards=total,
                      per_page=per_page,
                      run_marks={key: run_markers(runs) for key, runs in marked.items()})


def matrix_json(found: MatrixPage, simulated: bool, emulated: bool = False
                ) -> dict[str, Any]:
    """The matrix as JSON."""
    return {"simulated_included": simulated, "emulated_included": emulated,
            "page": found.page, "pages": found.pages,
            "boards": found.boards, "suites": [{
        "suite": tb.suite, "boards": tb.boards, "kernels": tb.kernels,
        "cells": [{
            "board": c.board, "kernel": c.kernel, "runs": c.runs,
            "newest_run_id": c.newest_run_id, "worst_max_ns": c.worst_max_ns,
            "worst_p99_9_ns": c.worst_p999_ns, "threshold_ns": c.threshold_ns,
            "state": c.state, "why": c.why, "previous_kernel": c.previous_kernel,
            "delta_max_ns": c.delta_max_ns,
            "delta_pct": None if c.delta_pct is None else round(c.delta_pct, 1),
            "marks": c.marks, "markers": found.run_marks.get((tb.suite, b, k), [])}
            for (b, k), c in sorted(tb.cells.items(),
                                    key=lambda kv: (kv[0][0], kernel_sort_key(kv[0][1])))]}
        for tb in found.tables]}


def boards_json(store: Store, simulated: bool) -> list[dict[str, Any]]:
    """Every board with its runs, suites, kernels (version order) and newest run."""
    return [{"board": b.board, "runs": b.runs, "suites": b.suites,
             "kernels": sorted(b.kernels, key=kernel_sort_key),
             "last_run_at": b.last_run_at.isoformat(), "last_kernel": b.last_kernel}
            for b in board_list(store, simulated=None if simulated else False)]


def board_histories(store: Store, board: str, *, suite: str | None, simulated: bool,
                    all_policies: bool, newest_runs: int | None = HISTORY_RUNS
                    ) -> list[CellHistory]:
    """A board's cells over time (simulated and non-real-time runs only when asked), of
    its newest_runs newest runs (None: every run, at most HISTORY_LIMIT cell rows)."""
    rows = store.cell_rows(board=board, suite=suite,
                           simulated=None if simulated else False,
                           rt_only=not all_policies, newest_runs=newest_runs)
    if len(rows) > HISTORY_LIMIT:
        rows = rows[-HISTORY_LIMIT:]
    return histories(rows)


# outcomes of the regression board drawn on a history (the stored "regression" today; a
# suspected/confirmed state where the board gives one)
MARKED_OUTCOMES = ("regression", "confirmed", "suspected")


def regression_marks(store: Store, board: str, suite: str | None,
                     since: datetime | None = None
                     ) -> dict[tuple[str, str], list[tuple[int, str]]]:
    """Per (suite, scenario): (run id, state) of each run of board (started at since or
    later: the oldest run a history draws) that the regression board flagged there,
    newest run first (state: confirmed or suspected)."""
    marks: dict[tuple[str, str], list[tuple[int, str]]] = {}
    seen: set[tuple[str, str, int, str]] = set()
    for run_id, row_suite, cell, state in marked_checks(store, board, suite, since):
        scenario = cell.split(" / ")[0]
        if (row_suite, scenario, run_id, state) not in seen:
            seen.add((row_suite, scenario, run_id, state))
            marks.setdefault((row_suite, scenario), []).append((run_id, state))
    return marks


def oldest_drawn(found: list[CellHistory], newest: int | None = None) -> datetime | None:
    """When the oldest run drawn on any of the histories found started, or the oldest
    of the newest runs of each (None: none)."""
    return min((h.points[-newest:][0].started_at if newest else h.points[0].started_at
                for h in found if h.points), default=None)


def marks_for(h: CellHistory, marks: dict[tuple[str, str], list[tuple[int, str]]]
              ) -> list[tuple[int, str]]:
    """The regression marks that belong on the history h (its suite and scenario)."""
    return marks.get((h.suite, h.cell.split(" / ")[0]), [])


def board_known(store: Store, board: str) -> bool:
    """Whether any run of board is stored (simulated or not)."""
    return list_runs_page(store, RunFilter(board=board), 1, 1).total > 0


def history_runs(text: str) -> int | None:
    """The runs= of a history request: a count of newest runs, or None for 'all'."""
    return None if text == "all" else int(text)


def history_json(board: str, found: list[CellHistory], newest_runs: int | None = None
                 ) -> dict[str, Any]:
    """A board's history as JSON (newest_runs: how many newest runs were asked for,
    None: all)."""
    return {"board": board, "rt_policies": list(RT_POLICIES), "newest_runs": newest_runs,
            "cells": [{
        "suite": h.suite, "cell": h.cell, "thresholds_ns": h.thresholds_ns,
        "kernel_changes": [{"at": at.isoformat(), "kernel": k}
                           for at, k in h.kernel_changes],
        "runs": [{"run_id": p.run_id, "started_at": p.started_at.isoformat(),
                  "kernel": p.kernel, "max_ns": p.max_ns, "p99_9_ns": p.p999_ns,
                  "exceedances_per_hour": None if p.exceedance_rate_per_hour is None
                  else round(p.exceedance_rate_per_hour, 3),
                  "simulated": p.simulated, "policy": p.policy} for p in h.points]}
        for h in found]}


def board_regressions(store: Store, board: str, suite: str | None = None
                      ) -> list[OpenRegression]:
    """The regressions open on board (of suite, when given): confirmed first."""
    found = [r for r in open_regressions(open_checks(store, board))
             if suite is None or r.suite == suite]
    return sorted(found, key=lambda r: (r.state != "confirmed", r.suite, r.cell, r.metric))


def open_regressions_json(found: list[OpenRegression]) -> list[dict[str, Any]]:
    """Open regressions as JSON."""
    return [{"board": r.board, "suite": r.suite, "cell": r.cell, "metric": r.metric,
             "kernel": r.kernel, "state": r.state, "first_run": r.first_run,
             "first_seen": r.first_seen.isoformat(), "confirmed_run": r.confirmed_run,
             "runs": list(r.runs), "newest_run": r.newest_run} for r in found]
