"""Extra marks on matrix cells (the seam for the regression board).

`cell_marks()` answers, per (board, kernel, suite), short labels shown in the matrix
cell and its JSON ("regression" ...).  Nothing marks cells yet: the regression board
of issue 26 fills this from its own table; until then every cell has none.
"""

from __future__ import annotations

from rtbench.store import Store


def cell_marks(store: Store, *, suite: str | None = None, board: str | None = None
               ) -> dict[tuple[str, str, str], list[str]]:
    """Labels per (board, kernel, suite) for the matrix; empty until a source exists."""
    del store, suite, board  # no source of marks yet (see the module's docstring)
    return {}
