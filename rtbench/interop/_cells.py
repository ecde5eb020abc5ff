"""What every exporter walks: the cells of a run (scenario x test) and their figures."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from rtbench.analysis.stats import LatencyStats, merged_stats, stats_of_series
from rtbench.bundle import (
    NOT_STARTED,
    MeasurementDetail,
    RunDetail,
    ScenarioDetail,
    SeriesDetail,
)

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class Cell:
    """One measurement of a run with the statistics of each series and of all."""

    scenario: ScenarioDetail
    measurement: MeasurementDetail
    per_series: list[tuple[SeriesDetail, LatencyStats]]
    merged: LatencyStats | None

    @property
    def name(self) -> str:
        """"scenario/test" as users see it."""
        return f"{self.scenario.name}/{self.measurement.name}"

    @property
    def passed(self) -> bool:
        """No failed verdict and a status of ok."""
        return self.measurement.status == "ok" and all(
            bool(v.get("pass", True)) for v in self.measurement.verdicts
            if isinstance(v, dict))

    @property
    def errored(self) -> bool:
        """The measurement could not run (error, lost, abandoned, not started)."""
        return self.measurement.status in ("error", "lost", "abandoned", NOT_STARTED)

    @property
    def summary_only(self) -> bool:
        """An import with no distribution: percentiles are unknown, not zero."""
        return bool(self.measurement.data.get("summary_only"))


def cells(run: RunDetail) -> Iterator[Cell]:
    """Every cell of the run, in stored order."""
    for scenario in run.scenarios:
        for m in scenario.measurements:
            per = [(s, stats_of_series(s, m.measured_ns)) for s in m.series]
            yield Cell(scenario, m, per, merged_stats(m.series, m.measured_ns))


def safe_name(*parts: str) -> str:
    """parts joined by "." with anything but [A-Za-z0-9_.-] replaced by "_"."""
    return ".".join(_UNSAFE.sub("_", p).strip("_.") or "x" for p in parts)


def figures(stats: LatencyStats) -> list[tuple[str, float | None]]:
    """(name, value in us) of the figures a CI engine keeps: min, avg, percentiles, max."""
    out: list[tuple[str, float | None]] = [
        ("min", None if stats.min_ns is None else stats.min_ns / 1000),
        ("avg", None if stats.mean_ns is None else stats.mean_ns / 1000)]
    for label, value in stats.percentiles.items():
        out.append((label, None if value is None else value / 1000))
    out.append(("max", None if stats.max_ns is None else stats.max_ns / 1000))
    return out
