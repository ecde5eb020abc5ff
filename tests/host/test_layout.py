"""FittedTable: one table when it fits, abbreviated headers with a legend next, stacked
last; numbers never cut; notes said once under the table."""

from __future__ import annotations

import io

from rich.cells import cell_len
from rich.console import Console

from rtbench.report.layout import Column, FittedTable, NoteRefs

ROWS = [["busy-loop / cyclic interval=1ms mode=abs", "111,600.0", "-2,673.1", "12,345"],
        ["idle / cyclic", "4.096", "+0.904", "0"]]
COLUMNS = [Column("cell", "left", wrap=True), Column("baseline", abbrev="base"),
           Column("difference", abbrev="diff"), Column("overruns", abbrev="ovr")]


def render(table: FittedTable, width: int) -> str:
    """The table as plain text, width columns wide."""
    console = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    console.print(table)
    return console.export_text()


def test_fits_whole_without_a_legend_when_wide() -> None:
    text = render(FittedTable(COLUMNS, ROWS, title="t"), 120)
    assert "difference" in text and "(" not in text and "continued" not in text


def test_abbreviates_with_a_legend_before_stacking() -> None:
    text = render(FittedTable(COLUMNS, ROWS, title="t"), 44)
    assert "continued" not in text
    assert "(base = baseline; diff = difference; ovr = overruns)" in " ".join(text.split())
    for line in text.splitlines():
        assert cell_len(line.rstrip()) <= 44


def test_stacks_when_nothing_else_fits_and_keeps_numbers_whole() -> None:
    for width in (24, 30, 36):
        text = render(FittedTable(COLUMNS, ROWS, title="t"), width)
        for figure in ("111,600.0", "-2,673.1", "12,345", "+0.904"):
            assert figure in text, (width, text)
        assert "…" not in text


def test_notes_are_said_once_under_the_table() -> None:
    notes = NoteRefs()
    rows = [[f"cell {i}", f"not estimated ({notes.ref('run too short: 15 windows')})"]
            for i in range(10)]
    text = render(FittedTable([Column("cell", "left"), Column("estimate", "left", True)],
                              rows, notes=notes.lines()), 80)
    assert text.count("run too short") == 1 and text.count("(note 1)") == 10
