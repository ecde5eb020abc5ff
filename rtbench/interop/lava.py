"""LAVA: `lava-test-case NAME --result pass|fail [--measurement V --units us]` lines.

Run inside a lava-test-shell (integrations/lava/), each line records one result, so
a LAVA job keeps every figure and not just pass/fail.  The verdict is the cell's line
(`SCENARIO.TEST --result fail` when a verdict failed or it could not run); a figure
(min, avg, percentiles, max, overruns) is a reading, recorded `--result pass` with its
measurement whatever the verdict, so a failed cell shows one failure, not ten.  Names hold only
[A-Za-z0-9_.-]; a figure the data cannot give (a summary-only import's
percentiles) is left out rather than invented.
"""

from __future__ import annotations

from rtbench.bundle import RunDetail
from rtbench.interop._cells import cells, figures, safe_name
from rtbench.interop.base import Exporter


class LavaExporter(Exporter):
    """lava-test-case lines for lava-test-shell."""

    name = "lava"
    summary = "lava-test-case lines (a verdict per cell, a measurement per figure)"
    suffix = ".sh"

    def export(self, run: RunDetail) -> bytes:
        """The run as a shell script of lava-test-case calls."""
        lines = ["#!/bin/sh", f"# rtbench run {run.id} ({run.suite}) on {safe_name(run.hostname)}"]
        for cell in cells(run):
            m = cell.measurement
            base = safe_name(cell.scenario.name, m.name)
            result = "pass" if cell.passed else "fail"
            lines.append(f"lava-test-case {base} --result {result}")
            for series, stats in cell.per_series:
                for figure, value in figures(stats):
                    if value is None:
                        continue
                    lines.append(f"lava-test-case {base}.{safe_name(series.label)}.{figure}"
                                 f" --result pass --measurement {value:.3f} --units us")
                lines.append(f"lava-test-case {base}.{safe_name(series.label)}.overruns"
                             f" --result pass --measurement {stats.overruns} --units count")
        return ("\n".join(lines) + "\n").encode()
