"""OpenMetrics text (Prometheus): latency histograms with `le` buckets, overruns, verdicts.

One histogram per series (`rtbench_latency_seconds`, labelled run, scenario, test,
series) with a bucket at the upper edge of every non-empty loglin7 bucket, plus
min/max gauges, an overruns counter and a verdict gauge per cell (1 pass, 0 fail).
A summary-only import has only the +Inf bucket: count and sum, no invented shape.
"""

from __future__ import annotations

from collections.abc import Mapping

from rtbench.bundle import RunDetail
from rtbench.interop._cells import cells
from rtbench.interop.base import Exporter
from rtbench.rtprobe import loglin7


def _label(value: object) -> str:
    """A label value escaped for the text format."""
    text = str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return "".join(ch for ch in text if ch.isprintable() or ch == "\\")


def _labels(pairs: Mapping[str, object]) -> str:
    """{k="v",...}."""
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in pairs.items()) + "}"


def _seconds(ns: float) -> str:
    """ns as seconds in the shortest exact-enough decimal."""
    return repr(ns / 1e9)


class OpenMetricsExporter(Exporter):
    """OpenMetrics / Prometheus text exposition."""

    name = "openmetrics"
    summary = "OpenMetrics text: latency histograms (le buckets), overruns, verdicts"
    suffix = ".prom"

    def export(self, run: RunDetail) -> bytes:
        """The run as OpenMetrics text ending in # EOF."""
        hist, mins, maxs, overruns, verdicts = [], [], [], [], []
        for cell in cells(run):
            m = cell.measurement
            base: dict[str, object] = {"run": run.uid or run.id, "host": run.hostname,
                    "scenario": cell.scenario.name, "test": m.name}
            verdicts.append(f"rtbench_verdict{_labels(base)} {1 if cell.passed else 0}")
            for series, _ in cell.per_series:
                labels: dict[str, object] = {**base, "series": series.label}
                cumulative = 0
                for index, count in series.hist:
                    cumulative += count
                    edge = int(loglin7.upper([index])[0])
                    hist.append(f"rtbench_latency_seconds_bucket"
                                f"{_labels({**labels, 'le': _seconds(edge)})} {cumulative}")
                hist.append(f"rtbench_latency_seconds_bucket"
                            f"{_labels({**labels, 'le': '+Inf'})} {series.count}")
                hist.append(f"rtbench_latency_seconds_count{_labels(labels)} {series.count}")
                hist.append(f"rtbench_latency_seconds_sum{_labels(labels)} "
                            f"{_seconds(series.sum_ns)}")
                if series.min_ns is not None:
                    mins.append(f"rtbench_latency_min_seconds{_labels(labels)} "
                                f"{_seconds(series.min_ns)}")
                if series.max_ns is not None:
                    maxs.append(f"rtbench_latency_max_seconds{_labels(labels)} "
                                f"{_seconds(series.max_ns)}")
                overruns.append(f"rtbench_overruns_total{_labels(labels)} {series.overruns}")
        out = ["# TYPE rtbench_latency_seconds histogram",
               "# UNIT rtbench_latency_seconds seconds",
               "# HELP rtbench_latency_seconds Wake-up latency of each series.", *hist,
               "# TYPE rtbench_latency_min_seconds gauge",
               "# UNIT rtbench_latency_min_seconds seconds", *mins,
               "# TYPE rtbench_latency_max_seconds gauge",
               "# UNIT rtbench_latency_max_seconds seconds", *maxs,
               "# TYPE rtbench_overruns counter",
               "# HELP rtbench_overruns Periods skipped because a wake-up came too late.",
               *overruns,
               "# TYPE rtbench_verdict gauge",
               "# HELP rtbench_verdict 1 when every verdict of the cell passed, else 0.",
               *verdicts, "# EOF"]
        return ("\n".join(out) + "\n").encode()
