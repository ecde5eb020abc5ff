"""The width tables are laid out for: `rtbench --width N`, else COLUMNS, else the
terminal's, else 80 columns (output to a pipe or file).  No imports beyond os, so the CLI
can set it before any command (or rich) is loaded."""

from __future__ import annotations

import os

DEFAULT_WIDTH = 80
MIN_WIDTH = 40

_width_option: int | None = None


def set_width(columns: int | None) -> None:
    """Remember `--width` for every console made after this (None: not given)."""
    global _width_option
    _width_option = columns


def chosen_width(is_terminal: bool, terminal_width: int) -> int:
    """The width to lay out for: --width, COLUMNS, the terminal's, else 80."""
    if _width_option is not None:
        return max(MIN_WIDTH, _width_option)
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    return terminal_width if is_terminal else DEFAULT_WIDTH
