"""The table of runs a delete or prune would remove (or removed)."""

from __future__ import annotations

from rtbench.bundle import RunSummary
from rtbench.commands._common import make_console


def print_runs(runs: list[RunSummary], title: str) -> None:
    """runs as a table (id, start, host, suite, kernel, status, tags) under title."""
    from rtbench.report.layout import Column, FittedTable
    from rtbench.report.text import for_terminal

    columns = [Column("id"), Column("started (UTC)", "left"), Column("host", "left", True),
               Column("suite", "left", True), Column("kernel", "left", True),
               Column("status", "left"), Column("tags", "left", True)]
    rows = [[str(r.id), r.started_at.strftime("%Y-%m-%d %H:%M:%S"), for_terminal(r.hostname),
             for_terminal(r.suite), for_terminal(r.kernel), r.status,
             for_terminal(" ".join(f"{k}={v}" for k, v in sorted(r.tags.items())))]
            for r in runs]
    make_console().print(FittedTable(columns, rows, title=title))
