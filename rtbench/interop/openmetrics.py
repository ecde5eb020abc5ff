"""OpenMetrics and Prometheus text of one run, and of the stored history.

Labels follow rtbench/interop/cellmetrics.py (`board, kernel, suite, scenario, test,
series`, as /metrics): no run id, so the same figure has the same name in every run.
`prometheus` writes one line per figure (min, mean, percentiles, max, samples,
overruns, the cell's verdict) as Prometheus text 0.0.4 -- what GitLab's metrics report
and a Pushgateway read, and what compares from run to run.  `openmetrics` writes the same
figures as OpenMetrics 1.0 (`# UNIT`, `# EOF`) plus the latency histogram of each
series (`rtbench_latency_seconds`, a bucket at the upper edge of every non-empty
loglin7 bucket; a summary-only import has only the +Inf bucket: count and sum, no
invented shape).  `openmetrics-history` is not a per-run format: rtbench export
--format openmetrics-history writes every stored run's summaries stamped with its start
(history_text), which `promtool tsdb create-blocks-from openmetrics` backfills.
`GET /metrics` serves latest_text: the newest summary of every cell, written here too.
"""

from __future__ import annotations

from collections.abc import Iterable

from rtbench.bundle import RunDetail, board_of
from rtbench.interop._cells import cells
from rtbench.interop._exposition import OPENMETRICS_TYPE, PROMETHEUS_TYPE, Family, render
from rtbench.interop.base import Exporter
from rtbench.interop.cellmetrics import history_rows, row_families, run_families, series_labels
from rtbench.rtprobe.wire import loglin7
from rtbench.store.cells import CellRow

HISTORY_FORMAT = "openmetrics-history"


def _seconds(ns: float) -> float:
    """ns in seconds."""
    return ns / 1e9


def histogram_family(run: RunDetail) -> Family:
    """The latency histogram of every series of the run (cumulative le buckets)."""
    hist = Family("rtbench_latency_seconds", "histogram",
                  "Wake-up latency of each series.", "seconds")
    board = run.board or board_of(run.target, run.hostname)
    for cell in cells(run):
        for series, _ in cell.per_series:
            labels = series_labels(board, run.kernel, run.suite, cell.scenario.name,
                                   cell.measurement.name, series.label)
            cumulative = 0
            for index, count in series.hist:
                cumulative += count
                edge = int(loglin7.upper([index])[0])
                hist.add({**labels, "le": repr(_seconds(edge))}, cumulative, "_bucket")
            hist.add({**labels, "le": "+Inf"}, series.count, "_bucket")
            hist.add(labels, series.count, "_count")
            hist.add(labels, _seconds(series.sum_ns), "_sum")
    return hist


def latest_text(rows: Iterable[CellRow], openmetrics: bool) -> tuple[str, str]:
    """The newest cell summaries of every board x suite (`GET /metrics`) as Prometheus
    text 0.0.4, or OpenMetrics 1.0: the text and its media type."""
    text = render(row_families(rows), openmetrics)
    return text, OPENMETRICS_TYPE if openmetrics else PROMETHEUS_TYPE


def history_text(rows: Iterable[CellRow]) -> str:
    """Stored cell summaries (oldest first) as OpenMetrics 1.0 with a timestamp on each
    sample: one sample per run and figure, at the run's start."""
    return render(row_families(history_rows(rows), stamped=True), openmetrics=True)


class OpenMetricsExporter(Exporter):
    """OpenMetrics 1.0 text exposition."""

    name = "openmetrics"
    summary = "OpenMetrics text: one line per figure, and the latency histograms"
    suffix = ".prom"

    def export(self, run: RunDetail) -> bytes:
        """The run as OpenMetrics text ending in # EOF."""
        return render([*run_families(run), histogram_family(run)],
                      openmetrics=True).encode()


class PrometheusExporter(Exporter):
    """Prometheus text format 0.0.4 (GitLab metrics reports, Pushgateway)."""

    name = "prometheus"
    summary = ("Prometheus text 0.0.4, one line per figure: GitLab's metrics report, "
               "a Pushgateway")
    suffix = ".prom"

    def export(self, run: RunDetail) -> bytes:
        """The run's figures as Prometheus text, names that compare across runs."""
        return render(run_families(run), openmetrics=False).encode()
