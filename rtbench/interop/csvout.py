"""CSV: one row per cell and thread (series), figures in microseconds.

Empty fields are figures the data cannot give (percentiles of a summary-only
import, or of too few samples).
"""

from __future__ import annotations

import csv
import io

from rtbench.bundle import RunDetail
from rtbench.interop._cells import cells
from rtbench.interop.base import Exporter

PERCENTILES = ("p50", "p90", "p99", "p99.9", "p99.99", "p99.999")
COLUMNS = ("run", "uid", "host", "kernel", "scenario", "test", "kind", "series", "cpu",
           "status", "samples", "min_us", "avg_us", *(f"{p}_us" for p in PERCENTILES),
           "max_us", "overruns", "summary_only")


def _us(ns: float | None) -> str:
    """ns as us with 3 decimals, or ""."""
    return "" if ns is None else f"{ns / 1000:.3f}"


class CsvExporter(Exporter):
    """A CSV table of every series."""

    name = "csv"
    summary = "CSV: one row per cell and thread (us)"
    suffix = ".csv"

    def export(self, run: RunDetail) -> bytes:
        """The run as CSV text with a header row."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(COLUMNS)
        for cell in cells(run):
            m = cell.measurement
            for series, stats in cell.per_series:
                writer.writerow([
                    run.id, run.uid, run.hostname, run.kernel, cell.scenario.name, m.name,
                    m.test, series.label, "" if series.cpu is None else series.cpu,
                    m.status, stats.samples, _us(stats.min_ns), _us(stats.mean_ns),
                    *(_us(stats.percentiles.get(p)) for p in PERCENTILES),
                    _us(stats.max_ns), stats.overruns, int(cell.summary_only)])
        return buffer.getvalue().encode()
