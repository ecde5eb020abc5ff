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


def test_records_when_nothing_else_fits_and_keeps_numbers_whole() -> None:
    for width in (24, 30, 36):
        text = render(FittedTable(COLUMNS, ROWS, title="t"), width)
        for figure in ("111,600.0", "-2,673.1", "12,345", "+0.904"):
            assert figure in text, (width, text)
        assert "…" not in text and "continued" not in text
        for line in text.splitlines():
            assert cell_len(line.rstrip()) <= width


def test_record_layout_puts_each_cells_verdict_on_its_line() -> None:
    # issue 37: a continued table separated each row from its verdict
    columns = [Column("cell", "left", wrap=True, record_prefix="cell "),
               Column("status", "left", verdict=True), Column("samples"), Column("max")]
    rows = [["idle / cyclic-1ms", "ok", "1,000", "5.000"],
            ["hogs / cyclic-1ms", "fail", "2,000", "111,600.0"]]
    wide = render(FittedTable(columns, rows), 120)
    assert "samples" in wide.splitlines()[1] and "cell idle" not in wide  # a table
    text = render(FittedTable(columns, rows, caption="times in µs"), 20)
    assert [line.rstrip() for line in text.splitlines()] == [
        "cell idle /", "cyclic-1ms: ok", "  samples: 1,000", "  max: 5.000",
        "cell hogs /", "cyclic-1ms: fail", "  samples: 2,000", "  max: 111,600.0",
        "times in µs"]


def test_record_layout_of_a_cell_of_several_rows() -> None:
    columns = [Column("cell", "left", wrap=True), Column("metric", "left"),
               Column("baseline"), Column("run"), Column("verdict", "left", verdict=True)]
    rows = [["idle / cyclic", "p99", "4.128", "4.096", "worse (note 1)"],
            ["", "max", "30.10", "32.11", "no interval"],
            ["", "overruns", "0", "0", ""]]
    lines = [line.rstrip() for line in render(FittedTable(columns, rows), 30).splitlines()]
    assert lines == ["idle / cyclic: worse, no", "interval",
                     "  p99: baseline 4.128 · run", "  4.096 · verdict worse (note",
                     "  1)", "  max: baseline 30.10 · run", "  32.11 · verdict no interval",
                     "  overruns: baseline 0 · run 0"]


def test_notes_are_said_once_under_the_table() -> None:
    notes = NoteRefs()
    rows = [[f"cell {i}", f"not estimated ({notes.ref('run too short: 15 windows')})"]
            for i in range(10)]
    text = render(FittedTable([Column("cell", "left"), Column("estimate", "left", True)],
                              rows, notes=notes.lines()), 80)
    assert text.count("run too short") == 1 and text.count("(note 1)") == 10
