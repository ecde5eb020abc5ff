"""Statistics of every measurement of a run: per series and all series merged (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


def _int(value: Any) -> int:
    """A stored counter as an int (0 when missing or not a number)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def collection_notes(data: dict[str, Any]) -> tuple[dict[int, list[str]], list[str]]:
    """Notes on how the probe collected a measurement (data["collection"], see
    docs/schema.md): per series index its late start, gaps and merged windows, and for the
    whole measurement the window records dropped on the way to the host."""
    collection = data.get("collection")
    if not isinstance(collection, dict):
        return {}, []
    per: dict[int, list[str]] = {}
    for entry in collection.get("series") or []:
        if not isinstance(entry, dict):
            continue
        notes = []
        start_ns = _int(entry.get("start_ns"))
        if start_ns:
            notes.append(f"warm-up and measured part moved {start_ns / 1e6:.3f} ms later: "
                         "the measuring thread's first deadline after its set-up "
                         "(at most 5 s; set-up beyond that is a gap)")
        gaps, gap_ns = _int(entry.get("gaps")), _int(entry.get("gap_ns"))
        if gaps:
            notes.append(f"not measured for {gap_ns / 1e6:.3f} ms in {gaps} gap(s): time "
                         "rtprobe itself held the measuring thread (set-up, --break-on); "
                         "not latency, not overruns")
        merged = _int(entry.get("windows_merged"))
        if merged:
            notes.append(f"{merged} window(s) merged into their neighbours: the probe's "
                         "collector fell behind; totals are complete, per-window detail "
                         "is coarser")
        if notes:
            per[_int(entry.get("index"))] = notes
    whole = []
    dropped = _int(collection.get("dropped_windows"))
    others = _int(collection.get("dropped_records")) - dropped
    if dropped:
        whole.append(f"{dropped} window record(s) dropped: the host read the probe's output "
                     "too slowly; totals and histograms are complete")
    if others > 0:
        whole.append(f"{others} spike/trace record(s) dropped: the host read the probe's "
                     "output too slowly")
    return per, whole


def run_stats(run: RunDetail) -> list[MeasurementStats]:
    """Statistics of every measurement of a run, in stored order."""
    out = []
    for scenario in run.scenarios:
        for m in scenario.measurements:
            per_notes, whole = collection_notes(m.data)
            per = []
            for s in m.series:
                st = stats_of_series(s, m.measured_ns)
                st.notes += per_notes.get(s.index, []) + whole
                per.append((s.label, st))
            out.append(MeasurementStats(
                scenario, m, per, merged_stats(m.series, m.measured_ns)))
    return out
