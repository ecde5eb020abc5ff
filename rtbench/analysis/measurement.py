"""Statistics of every measurement of a run: per series and all series merged (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass

from rtbench.analysis.stats import LatencyStats, merged_stats, stats_of_series
from rtbench.bundle import MeasurementDetail, RunDetail, ScenarioDetail


@dataclass
class MeasurementStats:
    """A measurement with the statistics of each series and of all merged."""

    scenario: ScenarioDetail
    measurement: MeasurementDetail
    per_series: list[tuple[str, LatencyStats]]
    merged: LatencyStats | None

    def table_rows(self) -> list[tuple[str, LatencyStats]]:
        """(label, stats) per series, then "all" (merged) when there are several."""
        rows = list(self.per_series)
        if self.merged is not None and len(rows) > 1:
            rows.append(("all", self.merged))
        return rows


def run_stats(run: RunDetail) -> list[MeasurementStats]:
    """Statistics of every measurement of a run, in stored order."""
    out = []
    for scenario in run.scenarios:
        for m in scenario.measurements:
            per = [(s.label, stats_of_series(s, m.measured_ns))
                   for s in m.series]
            out.append(MeasurementStats(
                scenario, m, per, merged_stats(m.series, m.measured_ns)))
    return out
