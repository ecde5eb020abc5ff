"""Extra marks on matrix cells: the regression board's findings.

`cell_marks()` answers, per (board, kernel, suite), short labels shown in the matrix
cell and its JSON: "confirmed regression" where a run of that board and kernel holds a
confirmed regression against the board's baseline (rtbench/analysis/runmodel.py, stored
by rtbench/store/regressions.py), else "suspected regression" (shown lighter) where one
holds a suspected one.  Checks that could not decide stay on /regressions
(`outcome=inconclusive`); the matrix cell's own state already says when its threshold
cannot be judged.
"""

from __future__ import annotations

from rtbench.store import Store
from rtbench.store.regressions import cell_marks as regression_marks

CONFIRMED_MARK = "confirmed regression"
SUSPECTED_MARK = "suspected regression"


def cell_marks(store: Store, *, suite: str | None = None, board: str | None = None
               ) -> dict[tuple[str, str, str], list[str]]:
    """Labels per (board, kernel, suite) for the matrix: a confirmed or suspected
    regression where a run there holds one."""
    marks: dict[tuple[str, str, str], list[str]] = {}
    for (cell_suite, cell_board, kernel), state in regression_marks(store, suite,
                                                                    board).items():
        marks[(cell_board, kernel, cell_suite)] = [
            CONFIRMED_MARK if state == "confirmed" else SUSPECTED_MARK]
    return marks
