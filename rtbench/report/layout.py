"""Tables that never cut a number: too wide for the terminal, they wrap their columns.

A FittedTable is a rich renderable.  At render time it measures itself against the
width it is given; when every column fits it is one table, otherwise its columns are
split over several tables stacked one below the other, each repeating the key (first)
column.  Number columns never wrap and never shrink, so every figure is printed whole
at any width; text columns wrap (folding words longer than the column) instead of
ending in an ellipsis.  Cells are rich Text, never markup, so names print as written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from rich import box as rich_box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from rtbench.report.text import for_terminal

Cell = str | Text
# A text column is never squeezed below this many characters (longer words fold).
WRAP_MIN_WIDTH = 12


@dataclass(frozen=True)
class Column:
    """A column: its header, alignment, and whether its cells may wrap (text) or not."""

    header: str
    justify: str = "right"
    wrap: bool = False


class FittedTable:
    """A table whose columns wrap onto further tables instead of being truncated."""

    def __init__(self, columns: Sequence[Column], rows: Sequence[Sequence[Cell]], *,
                 title: str | None = None, caption: str | None = None,
                 box: rich_box.Box | None = rich_box.SIMPLE_HEAD) -> None:
        self.columns = list(columns)
        self.rows = [list(row) for row in rows]
        self.title = title
        self.caption = caption
        self.box = box

    @property
    def row_count(self) -> int:
        """Number of data rows."""
        return len(self.rows)

    def _table(self, indices: Sequence[int], title: str | None,
               caption: str | None) -> Table:
        """A rich Table of the given columns (the key column is always first)."""
        # titles and captions carry names: Text, so never read as markup
        table = Table(title=None if title is None else Text(for_terminal(title),
                                                            style="table.title"),
                      title_justify="left",
                      caption=None if caption is None else Text(for_terminal(caption),
                                                                style="table.caption"),
                      caption_justify="left", box=self.box, padding=(0, 1),
                      pad_edge=self.box not in (None, rich_box.SIMPLE_HEAD),
                      collapse_padding=True)
        for i in indices:
            col = self.columns[i]
            justify: Literal["left", "right"] = "left" if col.justify == "left" else "right"
            if col.wrap:
                table.add_column(col.header, justify=justify, overflow="fold",
                                 min_width=min(WRAP_MIN_WIDTH,
                                               _widest(col.header, self._cells(i))))
            else:
                table.add_column(col.header, justify=justify, no_wrap=True,
                                 min_width=_widest(col.header, self._cells(i)))
        for row in self.rows:
            table.add_row(*[_text(row[i]) if i < len(row) else "" for i in indices])
        return table

    def _cells(self, index: int) -> list[Cell]:
        """The cells of one column."""
        return [row[index] for row in self.rows if index < len(row)]

    def min_width(self, indices: Sequence[int]) -> int:
        """The narrowest the columns can be shown: number columns whole, text columns
        down to WRAP_MIN_WIDTH (their words fold), plus borders and padding."""
        total = 1
        for i in indices:
            widest = _widest(self.columns[i].header, self._cells(i))
            total += (min(WRAP_MIN_WIDTH, widest) if self.columns[i].wrap else widest) + 3
        return total

    def chunks(self, console: Console, options: ConsoleOptions) -> list[list[int]]:
        """Column indices of each stacked table: as many columns as fit per table."""
        rest = list(range(1, len(self.columns)))
        if not rest:
            return [[0]]
        out: list[list[int]] = []
        while rest:
            take = 1
            while take < len(rest) and \
                    self.min_width([0, *rest[:take + 1]]) <= options.max_width:
                take += 1
            out.append([0, *rest[:take]])
            rest = rest[take:]
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Render as one table, or as several stacked ones when too wide."""
        chunks = self.chunks(console, options)
        if len(chunks) == 1:
            yield self._table(chunks[0], self.title, self.caption)
            return
        # Stacked: title and caption span the width, not the (narrower) part tables.
        for n, indices in enumerate(chunks):
            if self.title:
                title = self.title if n == 0 else f"{self.title} (continued)"
                yield Text(for_terminal(title), style="table.title")
            yield self._table(indices, None, None)
        if self.caption:
            yield Text(for_terminal(self.caption), style="table.caption")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """As wide as the whole table, down to what its widest stacked part needs."""
        whole = Measurement.get(console, options, self._table(
            range(len(self.columns)), self.title, self.caption))
        return Measurement(min(whole.minimum, options.max_width), whole.maximum)


def _text(cell: Cell) -> Text:
    """A cell as rich Text (plain strings are never parsed as markup)."""
    return cell if isinstance(cell, Text) else Text(for_terminal(cell))


def _widest(header: str, cells: Sequence[Cell]) -> int:
    """The widest line among a header and cells."""
    lines: Iterator[str] = (line for c in cells for line in _text(c).plain.splitlines())
    return max([Text(header).cell_len, *(Text(line).cell_len for line in lines)])
