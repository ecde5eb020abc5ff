"""Extra marks on matrix cells: the regression board's findings.

`cell_marks()` answers, per (board, kernel, suite), short labels shown in the matrix
cell and its JSON: "regression" where a check of a run of that board and kernel found
one against the board's baseline (rtbench/store/regressions.py).  Checks that could not
decide stay on /regressions (`outcome=inconclusive`); the matrix cell's own state already
says when its threshold cannot be judged.
"""

from __future__ import annotations

from rtbench.store import Store
from rtbench.store.regressions import cell_marks as regression_marks


def cell_marks(store: Store, *, suite: str | None = None, board: str | None = None
               ) -> dict[tuple[str, str, str], list[str]]:
    """Labels per (board, kernel, suite) for the matrix: ["regression"] where one was found."""
    marks: dict[tuple[str, str, str], list[str]] = {}
    for (cell_suite, cell_board, kernel), outcome in regression_marks(store, suite).items():
        if outcome == "regression" and (board is None or cell_board == board):
            marks[(cell_board, kernel, cell_suite)] = ["regression"]
    return marks
