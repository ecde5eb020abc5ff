"""Tables that never cut a number: the one table style of every command's output.

A FittedTable is a rich renderable.  At render time it measures itself against the
width it is given and takes the first of these that fits:
  1. one table, text columns wrapped (folding words longer than the column);
  2. one table with the long headers abbreviated, a legend under it;
  3. a record layout: one block per cell (a row whose key, first, column is set, with
     the rows after it whose key is empty), its head line the key and its verdict (the
     columns marked `verdict`), then one line per figure ("header: value"; a cell of
     several rows: one line per row, "sub-key: header value · header value"), so a
     cell's line can be grepped with its verdict in a CI log.
Number columns never wrap and never shrink, so every figure is printed whole at any
width.  Cells are rich Text, never markup, so names print as written.  Notes (a reason
that holds for every row) are printed once under the table, not in each row.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from rich import box as rich_box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from rtbench.report.console import ascii_text
from rtbench.report.text import for_terminal

Cell = str | Text
# The one table style of every command's output, and the same in ASCII (a rule of '-'
# under the header) for a terminal that cannot print '─'.
TABLE_BOX = rich_box.SIMPLE_HEAD
TABLE_BOX_ASCII = rich_box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)
# A text column is never squeezed below this many characters (longer words fold).
WRAP_MIN_WIDTH = 10
# A text column squeezed by a very narrow terminal still keeps this many characters.
NARROWEST = 4
# A word up to this long keeps its text column at least as wide (never folded).
LONG_WORD_WIDTH = 16


@dataclass(frozen=True)
class Column:
    """A column: its header, alignment, and whether its cells may wrap (text) or not."""

    header: str
    justify: str = "right"
    wrap: bool = False
    # a shorter header used when the table does not fit, explained in the legend
    abbrev: str | None = None
    # the column holds a verdict or status: the record layout puts it on the cell's
    # head line
    verdict: bool = False
    # put before the key on a record's head line ("run " before an id)
    record_prefix: str = ""


class FittedTable:
    """A table whose columns wrap onto further tables instead of being truncated."""

    def __init__(self, columns: Sequence[Column], rows: Sequence[Sequence[Cell]], *,
                 title: str | None = None, caption: str | None = None,
                 notes: Sequence[str] = ()) -> None:
        self.columns = list(columns)
        self.rows = [list(row) for row in rows]
        self.title = title
        self.caption = caption
        self.box = TABLE_BOX
        self.notes = list(notes)
        self.short = False
        self.ascii = False

    def header(self, index: int) -> str:
        """A column's header: when the table is shown short, its abbreviation, and in
        a number column broken at spaces to the width of its widest cell."""
        col = self.columns[index]
        if not self.short:
            return self._plain(col.header)
        text = self._plain(col.abbrev or col.header)
        if col.wrap:
            return text
        cells = [line for c in self._cells(index) for line in _text(c).plain.splitlines()]
        width = max([Text(line).cell_len for line in cells] + [1])
        return "\n".join(_break_words(text, width))

    def legend(self, indices: Sequence[int]) -> str | None:
        """'abbrev = header' for each abbreviated column among indices, or None."""
        if not self.short:
            return None
        parts = [f"{self.columns[i].abbrev} = {self.columns[i].header}" for i in indices
                 if self.columns[i].abbrev]
        return "; ".join(parts) or None

    def _plain(self, text: str) -> str:
        """text as it will be printed: ASCII on a terminal that cannot show more."""
        return ascii_text(text) if self.ascii else text

    def _cell(self, cell: Cell) -> Text:
        """A cell as the Text that will be printed."""
        text = _text(cell)
        if self.ascii:
            text = Text(ascii_text(text.plain), style=text.style)
        return text

    @property
    def row_count(self) -> int:
        """Number of data rows."""
        return len(self.rows)

    def widths(self, indices: Sequence[int], max_width: int | None) -> dict[int, int]:
        """Each column's width: number columns their widest cell; text columns their
        narrowest (_wrap_width) plus a share of the room left, up to their widest line.
        Set explicitly, so rich never shrinks a number column to fit."""
        out = {i: _widest(self.header(i), self._cells(i)) for i in indices}
        wrap = [i for i in indices if self.columns[i].wrap]
        want = {i: out[i] for i in wrap}
        for i in wrap:
            out[i] = self._wrap_width(i)
        spare = (max_width - self.min_width(indices)) if max_width is not None else 1 << 30
        # narrower than even that (a key column and one number): text folds further,
        # the widest text column first, down to NARROWEST; numbers stay whole
        while spare < 0:
            widest = max(wrap, key=lambda i: out[i], default=None)
            if widest is None or out[widest] <= NARROWEST:
                break
            out[widest] -= 1
            spare += 1
        while spare > 0:
            needy = [i for i in wrap if out[i] < want[i]]
            if not needy:
                break
            share = max(1, spare // len(needy))
            for i in needy:
                give = min(share, want[i] - out[i], spare)
                out[i] += give
                spare -= give
        return out

    def _table(self, indices: Sequence[int], title: str | None,
               caption: str | None, max_width: int | None = None) -> Table:
        """A rich Table of the given columns (the key column is always first), each
        column as wide as widths() says."""
        widths = self.widths(indices, max_width)
        # titles and captions carry names: Text, so never read as markup
        table = Table(title=None if title is None else Text(self._plain(for_terminal(title)),
                                                            style="table.title"),
                      title_justify="left",
                      caption=None if caption is None else Text(
                          self._plain(for_terminal(caption)), style="table.caption"),
                      caption_justify="left",
                      box=TABLE_BOX_ASCII if self.ascii else self.box, padding=(0, 1),
                      pad_edge=self.box not in (None, rich_box.SIMPLE_HEAD),
                      collapse_padding=self.box in (None, rich_box.SIMPLE_HEAD))
        for i in indices:
            col = self.columns[i]
            header = self.header(i)
            justify: Literal["left", "right"] = "left" if col.justify == "left" else "right"
            if col.wrap:
                table.add_column(header, justify=justify, overflow="fold", width=widths[i])
            else:
                table.add_column(header, justify=justify, no_wrap=True, width=widths[i])
        for row in self.rows:
            table.add_row(*[self._cell(row[i]) if i < len(row) else "" for i in indices])
        return table

    def _wrap_width(self, index: int) -> int:
        """The narrowest a text column is made: its longest word (up to
        LONG_WORD_WIDTH, longer ones fold), at least WRAP_MIN_WIDTH, at most its
        widest line."""
        cells = self._cells(index)
        words = [len(w) for c in cells for w in _text(c).plain.split()]
        word = min(max(words, default=0), LONG_WORD_WIDTH)
        return min(_widest(self.header(index), cells), max(WRAP_MIN_WIDTH, word))

    def _cells(self, index: int) -> list[Cell]:
        """The cells of one column."""
        return [self._cell(row[index]) for row in self.rows if index < len(row)]

    def min_width(self, indices: Sequence[int]) -> int:
        """The narrowest the columns can be shown: number columns whole, text columns
        down to WRAP_MIN_WIDTH (their words fold), plus borders and padding."""
        total = _overhead(self.box, len(indices))
        for i in indices:
            total += self._wrap_width(i) if self.columns[i].wrap else \
                _widest(self.header(i), self._cells(i))
        return total

    def fits(self, max_width: int) -> bool:
        """Whether the table fits max_width as one table (abbreviated if it must be)."""
        everything = list(range(len(self.columns)))
        return any(self._fits_as(short, everything, max_width) for short in (False, True))

    def _fits_as(self, short: bool, indices: list[int], max_width: int) -> bool:
        """Whether the columns fit with headers short (abbreviated) or not."""
        self.short = short
        return self.min_width(indices) <= max_width

    def chunks(self, console: Console, options: ConsoleOptions) -> list[list[int]]:
        """Column indices of each table: all in one when they fit (abbreviated if that
        is what it takes), else as many columns as fit per stacked table (used only
        for a table without rows; rows get the record layout)."""
        everything = list(range(len(self.columns)))
        self.short = False
        if self.min_width(everything) <= options.max_width:
            return [everything]
        self.short = True
        if self.min_width(everything) <= options.max_width:
            return [everything]
        rest = everything[1:]
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

    def _footer(self) -> list[Text]:
        """The legend and the notes said once under the table."""
        legend = self.legend(range(len(self.columns)))
        lines = [f"({legend})"] if legend else []
        lines += self.notes
        return [Text(self._plain(for_terminal(line)), style="table.caption") for line in lines]

    def blocks(self) -> list[list[list[Cell]]]:
        """The rows grouped per cell: a row with its key set starts a block, rows with
        an empty key belong to the block before them."""
        out: list[list[list[Cell]]] = []
        for row in self.rows:
            if not out or (row and _text(row[0]).plain.strip()):
                out.append([row])
            else:
                out[-1].append(row)
        return out

    def _value(self, row: Sequence[Cell], index: int) -> str:
        """One cell's text on one line (its lines joined by ' · ')."""
        if index >= len(row):
            return ""
        lines = [line.strip() for line in self._cell(row[index]).plain.splitlines()]
        return " · ".join(line for line in lines if line)

    def record_lines(self) -> list[tuple[int, str]]:
        """The record layout as (indent, text) lines: per cell its head line (key and
        verdicts), then one line per figure."""
        verdicts = [i for i, c in enumerate(self.columns) if c.verdict]
        out: list[tuple[int, str]] = []
        for block in self.blocks():
            said = []
            for row in block:
                for i in verdicts:
                    value = _NOTE_REF.sub("", self._value(row, i))
                    if value and value not in said:
                        said.append(value)
            head = self._plain(self.columns[0].record_prefix) + self._value(block[0], 0)
            out.append((0, head + (": " + ", ".join(said) if said else "")))
            if len(block) == 1:
                out += [(2, f"{self._plain(col.header)}: {self._value(block[0], i) or '-'}")
                        for i, col in enumerate(self.columns) if i and i not in verdicts]
                continue
            for row in block:  # a cell of several rows: one line per row
                parts = [f"{self._plain(self.columns[i].header)} {self._value(row, i)}"
                         for i in range(2, len(self.columns))
                         if self._value(row, i) not in ("", "-")]
                out.append((2, f"{self._value(row, 1)}: " + " · ".join(parts)))
        return out

    def _records(self) -> RenderResult:
        """The record layout: each line wrapped under its own text."""
        for indent, line in self.record_lines():
            grid = Table.grid()
            grid.add_column(no_wrap=True, width=indent)
            grid.add_column(overflow="fold")
            style = "bold" if indent == 0 else ""
            grid.add_row(Text(" " * indent), Text(for_terminal(line), style=style))
            if indent == 0:  # a head line starts at column 0, its wrapped lines under it
                grid = Table.grid()
                grid.add_column(overflow="fold")
                grid.add_row(Text(for_terminal(line), style=style))
            yield grid

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Render as one table, or, when too wide, as records (one block per cell)."""
        self.ascii = options.ascii_only
        if self.rows and not self.fits(options.max_width):
            self.short = False
            if self.title:
                yield Text(self._plain(for_terminal(self.title)), style="table.title")
            yield from self._records()
            if self.caption:
                yield Text(self._plain(for_terminal(self.caption)), style="table.caption")
            yield from self._footer()
            return
        chunks = self.chunks(console, options)
        if len(chunks) == 1:
            # the title spans the width, not only the table's (it would wrap early)
            if self.title:
                yield Text(self._plain(for_terminal(self.title)), style="table.title")
            yield self._table(chunks[0], None, self.caption, options.max_width)
            yield from self._footer()
            return
        # Stacked: title and caption span the width, not the (narrower) part tables.
        for n, indices in enumerate(chunks):
            if self.title:
                title = self.title if n == 0 else f"{self.title} (continued)"
                yield Text(self._plain(for_terminal(title)), style="table.title")
            yield self._table(indices, None, None, options.max_width)
        if self.caption:
            yield Text(self._plain(for_terminal(self.caption)), style="table.caption")
        yield from self._footer()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """As wide as the whole table, down to what its widest stacked part needs."""
        whole = Measurement.get(console, options, self._table(
            range(len(self.columns)), self.title, self.caption))
        return Measurement(min(whole.minimum, options.max_width), whole.maximum)


class NoteRefs:
    """Reasons said once under a table: a cell carries 'note N', the note its text."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def ref(self, text: str) -> str:
        """'note N' for text, numbering each distinct text once."""
        if text not in self.texts:
            self.texts.append(text)
        return f"note {self.texts.index(text) + 1}"

    def lines(self) -> list[str]:
        """'note N: text' for every note, in order."""
        return [f"note {i}: {text}" for i, text in enumerate(self.texts, 1)]


# "(note 2)" after a verdict: the head line names each verdict once, without its notes
_NOTE_REF = re.compile(r" \(note \d+\)")


@lru_cache(maxsize=64)
def _overhead(box: rich_box.Box | None, columns: int) -> int:
    """Columns of borders and padding a table of this box and column count adds to
    its cells, measured by rendering one."""
    table = Table(box=box, padding=(0, 1), pad_edge=box not in (None, rich_box.SIMPLE_HEAD),
                  collapse_padding=box in (None, rich_box.SIMPLE_HEAD), show_header=False)
    for _ in range(columns):
        table.add_column(no_wrap=True, min_width=1)
    table.add_row(*["x"] * columns)
    console = Console(width=10_000, record=True, file=io.StringIO(), color_system=None)
    console.print(table)
    lines = console.export_text().splitlines()
    return max((len(line) for line in lines), default=columns) - columns


def _break_words(text: str, width: int) -> list[str]:
    """text in lines of at most width characters, broken at spaces only (a longer
    word keeps a line of its own)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and Text(f"{lines[-1]} {word}").cell_len <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def _text(cell: Cell) -> Text:
    """A cell as rich Text (plain strings are never parsed as markup)."""
    return cell if isinstance(cell, Text) else Text(for_terminal(cell))


def _widest(header: str, cells: Sequence[Cell]) -> int:
    """The widest line among a header and cells."""
    lines: Iterator[str] = (line for c in cells for line in _text(c).plain.splitlines())
    heads = (Text(line).cell_len for line in header.splitlines() or [""])
    return max([*heads, *(Text(line).cell_len for line in lines)])
