"""Turn a ProbeOutput into a MeasurementDetail of the run bundle (pure; no database access).

The runner stores what rtprobe printed through this and Store.add_measurement_detail,
the same insert path Store.add_bundle uses for imported runs.  With a result record
the probe's own totals are used.  Without one (the probe died or was killed) the
totals are rebuilt from the finished windows, so nothing measured is lost: measured
windows give the statistics, warm-up windows the warm-up summary.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from rtbench.bundle import MeasurementDetail, SeriesDetail
from rtbench.rtprobe.wire import loglin7 as hist
from rtbench.rtprobe.wire.records import ProbeOutput, ResultRecord, WindowRecord


def _merge_windows(wins: list[WindowRecord]) -> list[tuple[int, int]]:
    """The windows' histograms added bucket by bucket, as sparse pairs."""
    if not wins:
        return []
    arrays = [w.hist_arrays() for w in wins]
    indices, counts = hist.merge((np.concatenate([a[0] for a in arrays]),
                                  np.concatenate([a[1] for a in arrays])))
    return [(int(i), int(c)) for i, c in zip(indices, counts, strict=True)]


def _window_summary(wins: list[WindowRecord]) -> dict[str, Any]:
    """count/min/max/sum/overruns of a set of windows."""
    mins = [w.min_ns for w in wins if w.min_ns is not None]
    maxs = [w.max_ns for w in wins if w.max_ns is not None]
    return {
        "count": sum(w.count for w in wins),
        "min_ns": min(mins) if mins else None,
        "max_ns": max(maxs) if maxs else None,
        "sum_ns": sum(w.sum_ns for w in wins),
        "overruns": sum(w.overruns for w in wins),
    }


def _labels(output: ProbeOutput) -> dict[int, dict[str, Any]]:
    """Series descriptions from the start record, by index."""
    if output.start is None:
        return {}
    return {int(s.get("index", i)): s
            for i, s in enumerate(output.start.series)}


def _from_result(output: ProbeOutput,
                 thresholds_ns: list[int]) -> list[dict[str, Any]]:
    """Rows from the result record's per-series totals."""
    assert output.result is not None
    rows = []
    for s in output.result.series:
        exceed = [(int(e["threshold_ns"]), int(e["count"]))
                  for e in s.get("exceed", [])]
        worst = [(int(w["t_ns"]), int(w["latency_ns"]))
                 for w in s.get("worst", [])]
        rows.append({
            "series_index": int(s["index"]),
            "label": str(s.get("label", f"series{s['index']}")),
            "cpu": s.get("cpu"),
            "count": int(s["count"]),
            "min_ns": s.get("min_ns"),
            "max_ns": s.get("max_ns"),
            "sum_ns": int(s["sum_ns"]),
            "overruns": int(s.get("overruns", 0)),
            "early": int(s.get("early", 0)),
            "exceed": exceed or [(th, 0) for th in thresholds_ns],
            "worst": worst,
            "warmup": s.get("warmup") or {},
            "hist": list(s.get("hist", [])),
            "spikes_dropped": int(s.get("spikes_dropped") or 0),
            "raw_dropped": int(s.get("raw_dropped") or 0),
            "error": s.get("error"),
        })
    return rows


def _from_windows(output: ProbeOutput,
                  thresholds_ns: list[int]) -> list[dict[str, Any]]:
    """Rows rebuilt from the windows of a run that has no result record."""
    labels = _labels(output)
    by_series: dict[int, list[WindowRecord]] = defaultdict(list)
    for w in output.windows:
        by_series[w.series].append(w)
    for index in labels:
        by_series.setdefault(index, [])
    spikes: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for sp in output.spikes:
        spikes[sp.series].append((sp.t_ns, sp.latency_ns))
    rows = []
    for index in sorted(by_series):
        wins = by_series[index]
        measured = [w for w in wins if not w.warmup]
        summary = _window_summary(measured)
        exceed = []
        for i, th in enumerate(thresholds_ns):
            exceed.append((int(th), sum(w.exceed[i] for w in measured
                                        if i < len(w.exceed))))
        desc = labels.get(index, {})
        warm = [w for w in wins if w.warmup]
        rows.append({
            "series_index": index,
            "label": str(desc.get("label", f"series{index}")),
            "cpu": desc.get("cpu"),
            "count": summary["count"],
            "min_ns": summary["min_ns"],
            "max_ns": summary["max_ns"],
            "sum_ns": summary["sum_ns"],
            "overruns": summary["overruns"],
            "early": sum(w.early for w in measured),
            "exceed": exceed,
            # only spikes seen so far: a lower bound on the worst list
            "worst": sorted(spikes[index], key=lambda p: -p[1])[:64],
            "warmup": _window_summary(warm) if warm else {},
            "hist": _merge_windows(measured),
            "spikes_dropped": 0,
            "raw_dropped": 0,
            "error": None,
        })
    return rows


def series_rows(output: ProbeOutput,
                thresholds_ns: list[int]) -> list[dict[str, Any]]:
    """One row per latency series, histogram included under 'hist'."""
    if output.result is not None:
        return _from_result(output, thresholds_ns)
    return _from_windows(output, thresholds_ns)


def _series_detail(row: dict[str, Any]) -> SeriesDetail:
    """A series row as the bundle's SeriesDetail."""
    return SeriesDetail(
        index=int(row["series_index"]), label=row["label"], cpu=row["cpu"],
        count=row["count"], min_ns=row["min_ns"], max_ns=row["max_ns"],
        sum_ns=row["sum_ns"], overruns=row["overruns"], early=row["early"],
        exceed=[(int(a), int(b)) for a, b in row["exceed"]],
        worst=[(int(a), int(b)) for a, b in row["worst"]],
        warmup=row["warmup"], hist=[(int(i), int(c)) for i, c in row["hist"]],
        spikes_dropped=row["spikes_dropped"], raw_dropped=row["raw_dropped"],
        error=row["error"])


def _collection_series(entry: dict[str, Any]) -> dict[str, int]:
    """One series of _collection: its gaps, merged windows and late start."""
    out = {"index": int(entry["index"]), "gaps": int(entry.get("gaps") or 0),
           "gap_ns": int(entry.get("gap_ns") or 0),
           "windows_merged": int(entry.get("windows_merged") or 0)}
    if entry.get("start_ns"):
        out["start_ns"] = int(entry["start_ns"])
    return out


def _collection(result: ResultRecord) -> dict[str, Any] | None:
    """How the probe's collection went (docs/schema.md): per series the gaps (time the
    probe itself kept its measuring thread from measuring), the windows merged
    because the collector fell behind and, for a thread late to start, how far its
    warm-up and measured part moved ("start_ns", only when they did); the window
    records dropped because the host read too slowly.  None from a probe that
    reports none of it."""
    output = result.raw.get("output")
    per = [_collection_series(s) for s in result.series
           if "gaps" in s or "windows_merged" in s]
    if not per and not isinstance(output, dict):
        return None
    out = output if isinstance(output, dict) else {}
    return {"series": per,
            "dropped_records": int(out.get("dropped_records") or 0),
            "dropped_windows": int(out.get("dropped_windows") or 0),
            "max_queued_bytes": int(out.get("max_queued_bytes") or 0),
            "queue_bytes": int(out.get("queue_bytes") or 0)}


def _data_with_footprint(result: ResultRecord | None) -> dict[str, Any]:
    """The result's data, with the probe's footprint (binary size, peak and locked
    memory; see docs/schema.md) under "footprint" when the probe reported one, and
    how its collection went under "collection" (_collection)."""
    if result is None:
        return {}
    data = dict(result.data)
    footprint = result.raw.get("footprint")
    if isinstance(footprint, dict):
        data["footprint"] = footprint
    collection = _collection(result)
    if collection is not None:
        data["collection"] = collection
    return data


def measurement_detail(output: ProbeOutput, *, name: str, test: str,
                       params: dict[str, Any], command: list[str], status: str,
                       thresholds_ns: list[int]) -> MeasurementDetail:
    """Everything one rtprobe run printed, as a measurement of the run bundle (id 0)."""
    start = output.start
    result = output.result
    start_raw = dict(start.raw) if start else {}
    start_raw.pop("sysinfo", None)
    return MeasurementDetail(
        id=0, name=name, test=test, params=params, command=command, status=status,
        exit_code=result.exit_code if result else None,
        reason=result.reason if result else None,
        thresholds_ns=[int(x) for x in thresholds_ns],
        simulated=bool(start.simulated if start else False),
        probe_version=start.version if start else "",
        t0_unix_ns=start.t0_unix_ns if start else None,
        measured_ns=result.measured_ns if result else None,
        elapsed_ns=result.elapsed_ns if result else None,
        verdicts=result.verdicts if result else [],
        data=_data_with_footprint(result),
        start=start_raw,
        series=[_series_detail(r) for r in series_rows(output, thresholds_ns)],
        windows=output.windows, spikes=output.spikes,
        traces=list(output.traces), trace_info=output.trace_summary)
