"""OpenMetrics text (Prometheus): latency histograms with `le` buckets, overruns, verdicts.

One histogram per series (`rtbench_latency_seconds`, labelled run, host, kernel,
scenario, test, series) with a bucket at the upper edge of every non-empty loglin7
bucket, plus min/max gauges, an overruns counter and a verdict gauge per cell (1 pass,
0 fail).  A summary-only import has only the +Inf bucket: count and sum, no invented
shape.  `openmetrics` writes OpenMetrics 1.0 (`# TYPE rtbench_overruns counter` over
`rtbench_overruns_total`, `# EOF`); `prometheus` writes the same figures as Prometheus
text 0.0.4, whose TYPE line names `rtbench_overruns_total` (for a Pushgateway or
GitLab's metrics report, which read that format).
"""

from __future__ import annotations

from rtbench.bundle import RunDetail
from rtbench.interop._cells import cells
from rtbench.interop._exposition import Family, render
from rtbench.interop.base import Exporter
from rtbench.rtprobe import loglin7


def _seconds(ns: float) -> float:
    """ns in seconds."""
    return ns / 1e9


def run_families(run: RunDetail) -> list[Family]:
    """The run's metric families (histograms, min, max, overruns, verdicts)."""
    hist = Family("rtbench_latency_seconds", "histogram",
                  "Wake-up latency of each series.", "seconds")
    mins = Family("rtbench_latency_min_seconds", "gauge",
                  "Smallest wake-up latency of each series.", "seconds")
    maxs = Family("rtbench_latency_max_seconds", "gauge",
                  "Largest wake-up latency of each series.", "seconds")
    overruns = Family("rtbench_overruns", "counter",
                      "Periods skipped because a wake-up came too late.")
    verdicts = Family("rtbench_verdict", "gauge",
                      "1 when every verdict of the cell passed, else 0.")
    for cell in cells(run):
        m = cell.measurement
        base: dict[str, object] = {"run": run.uid or run.id, "host": run.hostname,
                                   "kernel": run.kernel, "scenario": cell.scenario.name,
                                   "test": m.name}
        verdicts.add(base, 1 if cell.passed else 0)
        for series, _ in cell.per_series:
            labels: dict[str, object] = {**base, "series": series.label}
            cumulative = 0
            for index, count in series.hist:
                cumulative += count
                edge = int(loglin7.upper([index])[0])
                hist.add({**labels, "le": repr(_seconds(edge))}, cumulative, "_bucket")
            hist.add({**labels, "le": "+Inf"}, series.count, "_bucket")
            hist.add(labels, series.count, "_count")
            hist.add(labels, _seconds(series.sum_ns), "_sum")
            if series.min_ns is not None:
                mins.add(labels, _seconds(series.min_ns))
            if series.max_ns is not None:
                maxs.add(labels, _seconds(series.max_ns))
            overruns.add(labels, series.overruns)
    return [hist, mins, maxs, overruns, verdicts]


class OpenMetricsExporter(Exporter):
    """OpenMetrics 1.0 text exposition."""

    name = "openmetrics"
    summary = "OpenMetrics text: latency histograms (le buckets), overruns, verdicts"
    suffix = ".prom"

    def export(self, run: RunDetail) -> bytes:
        """The run as OpenMetrics text ending in # EOF."""
        return render(run_families(run), openmetrics=True).encode()


class PrometheusExporter(Exporter):
    """Prometheus text format 0.0.4 (Pushgateway, GitLab metrics reports)."""

    name = "prometheus"
    summary = ("Prometheus text 0.0.4: the openmetrics figures for a Pushgateway or "
               "GitLab's metrics report")
    suffix = ".prom"

    def export(self, run: RunDetail) -> bytes:
        """The run as Prometheus text (TYPE lines name the samples)."""
        return render(run_families(run), openmetrics=False).encode()
