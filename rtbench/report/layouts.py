"""Render a study layout (rtbench.analysis.layouts) for the terminal and for HTML."""

from __future__ import annotations

import html

from rich.console import Group, RenderableType
from rich.text import Text

from rtbench.analysis.layouts import Cell, Layout, LayoutTable
from rtbench.report.layout import Column, FittedTable


def fmt_cell(value: Cell) -> str:
    """A layout cell as text: microseconds with 1-3 decimals, counts whole, '-' for none."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value >= 100:
            return f"{value:,.1f}"
        if value >= 10:
            return f"{value:.2f}"
        return f"{value:.3f}"
    return value


def _plain(text: str) -> str:
    """Text from runs or files made safe for a terminal: no control characters."""
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def layout_renderable(layout: Layout) -> RenderableType:
    """The layout as rich tables with its sources and notes."""
    parts: list[RenderableType] = [Text(_plain(layout.title), style="bold")]
    for table in layout.tables:
        parts.append(_rich_table(table))
        for note in table.notes:
            parts.append(Text("  " + _plain(note)))
    for line in [*layout.sources, *layout.notes]:
        parts.append(Text(_plain(line)))
    return Group(*parts)


def _rich_table(table: LayoutTable) -> FittedTable:
    """One layout table in the table style of every command (numbers never cut)."""
    columns = [Column(_plain(column), "left" if i == 0 else "right", wrap=i == 0)
               for i, column in enumerate(table.columns)]
    rows: list[list[str | Text]] = [[_plain(fmt_cell(c)) for c in row] for row in table.rows]
    return FittedTable(columns, rows, title=_plain(table.title))


def layout_html(layout: Layout) -> str:
    """The layout as an HTML section (every string escaped)."""
    e = html.escape
    out = [f'<section class="layout" id="layout-{e(layout.name)}">',
           f"<h2>{e(layout.title)}</h2>"]
    for table in layout.tables:
        out.append(f"<h3>{e(table.title)}</h3><table><thead><tr>")
        out += [f"<th>{e(c)}</th>" for c in table.columns]
        out.append("</tr></thead><tbody>")
        for row in table.rows:
            out.append("<tr>" + "".join(f"<td>{e(fmt_cell(c))}</td>" for c in row) + "</tr>")
        out.append("</tbody></table>")
        out += [f'<p class="note">{e(n)}</p>' for n in table.notes]
    out += [f'<p class="source">{e(line)}</p>' for line in [*layout.sources, *layout.notes]]
    out.append("</section>")
    return "\n".join(out)
