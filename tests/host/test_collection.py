"""How the probe's collection went is stored and said: gaps (time rtprobe itself kept a
measuring thread from measuring), windows merged by a collector that fell behind, records
dropped for a host that read too slowly (rtbench/store/ingest.py, analysis/measurement.py;
docs/rtprobe.md, "The measuring thread waits on its clock only")."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rtbench.analysis.measurement import collection_notes
from rtbench.bundle import MeasurementDetail
from rtbench.rtprobe.wire.records import ProbeOutput
from rtbench.store.ingest import measurement_detail


def simulated_setup(probe_path: Path, setup: str) -> tuple[ProbeOutput, MeasurementDetail]:
    """A simulated 1-thread cyclic (1 s warm-up, 2 s) whose thread is ready `setup` after t0."""
    done = subprocess.run([str(probe_path), "cyclic", "--simulate",
                           f"1:const,lat=5us,setup={setup}", "--threads", "1", "--warmup", "1s",
                           "--duration", "2s", "--json"],
                          capture_output=True, text=True, check=True, timeout=30)
    output = ProbeOutput.from_lines(done.stdout.splitlines())
    return output, measurement_detail(output, name="m", test="cyclic", params={}, command=[],
                                      status="ok", thresholds_ns=[])


def test_a_late_thread_still_measures_the_duration_asked_for(probe_path: Path) -> None:
    # the thread is ready 1.5 s after t0: its warm-up and measured part start there, the
    # 1.5 s before are a gap of the warm-up, and it measures the whole 2 s
    output, detail = simulated_setup(probe_path, "1500ms")
    assert sum(w.gap_ns for w in output.windows if w.warmup) == 1_500_000_000
    assert sum(w.gap_ns for w in output.windows if not w.warmup) == 0
    assert min(w.start_ns for w in output.windows if not w.warmup) == 2_500_000_000
    assert detail.data["collection"]["series"] == [
        {"index": 0, "gaps": 0, "gap_ns": 0, "windows_merged": 0, "start_ns": 1_500_000_000}]
    assert detail.data["collection"]["dropped_records"] == 0
    series = detail.series[0]
    assert (series.count, series.overruns, series.max_ns) == (2000, 0, 5000)
    assert series.warmup["count"] == 1000 and series.warmup["gap_ns"] == 1_500_000_000
    per, whole = collection_notes(detail.data)
    assert per[0] == ["warm-up and measured part moved 1500.000 ms later: the measuring "
                      "thread's first deadline after its set-up (at most 5 s; set-up beyond "
                      "that is a gap)"]
    assert whole == []


def test_simulated_setup_past_the_bound_is_a_gap_not_latency(probe_path: Path) -> None:
    # ready 6.5 s after t0: the parts move by the 5 s bound only; the warm-up is all gap
    # and 0.5 s of the measured part too
    output, detail = simulated_setup(probe_path, "6500ms")
    assert sum(w.gap_ns for w in output.windows if w.warmup) == 6_000_000_000
    assert sum(w.gap_ns for w in output.windows if not w.warmup) == 500_000_000
    assert detail.data["collection"]["series"] == [
        {"index": 0, "gaps": 1, "gap_ns": 500_000_000, "windows_merged": 0,
         "start_ns": 5_000_000_000}]
    series = detail.series[0]
    # no sample and no overrun made of the gap: the 1500 deadlines after it only
    assert (series.count, series.overruns, series.max_ns) == (1500, 0, 5000)
    per, _ = collection_notes(detail.data)
    assert per[0][1] == ("not measured for 500.000 ms in 1 gap(s): time rtprobe itself held "
                         "the measuring thread (set-up, --break-on); not latency, not overruns")


def test_merged_and_dropped_detail_is_said() -> None:
    data = {"collection": {"series": [{"index": 1, "gaps": 0, "gap_ns": 0,
                                       "windows_merged": 3}],
                           "dropped_records": 5, "dropped_windows": 4,
                           "max_queued_bytes": 1 << 20, "queue_bytes": 1 << 20}}
    per, whole = collection_notes(data)
    assert list(per) == [1] and per[1][0].startswith("3 window(s) merged")
    assert whole[0].startswith("4 window record(s) dropped")
    assert whole[1].startswith("1 spike/trace record(s) dropped")


def test_a_probe_without_collection_figures_gives_no_notes() -> None:
    assert collection_notes({}) == ({}, [])
    assert collection_notes({"collection": "garbage"}) == ({}, [])
