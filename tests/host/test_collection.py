"""How the probe's collection went is stored and said: gaps (time rtprobe itself kept a
measuring thread from measuring), windows merged by a collector that fell behind, records
dropped for a host that read too slowly (rtbench/store/ingest.py, analysis/measurement.py;
docs/rtprobe.md, "The measuring thread waits on its clock only")."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rtbench.analysis.measurement import collection_notes
from rtbench.rtprobe.records import ProbeOutput
from rtbench.store.ingest import measurement_detail


def test_simulated_setup_gap_is_stored_as_a_gap_not_as_latency(probe_path: Path) -> None:
    # each thread is ready 1.5 s after t0: 1 s of warm-up and 0.5 s of measured time pass
    done = subprocess.run([str(probe_path), "cyclic", "--simulate",
                           "1:const,lat=5us,setup=1500ms", "--threads", "1", "--warmup", "1s",
                           "--duration", "2s", "--json"],
                          capture_output=True, text=True, check=True, timeout=30)
    output = ProbeOutput.from_lines(done.stdout.splitlines())
    assert sum(w.gap_ns for w in output.windows if w.warmup) == 1_000_000_000
    assert sum(w.gap_ns for w in output.windows if not w.warmup) == 500_000_000
    detail = measurement_detail(output, name="m", test="cyclic", params={}, command=[],
                                status="ok", thresholds_ns=[])
    collection = detail.data["collection"]
    assert collection["series"] == [{"index": 0, "gaps": 1, "gap_ns": 500_000_000,
                                     "windows_merged": 0}]
    assert collection["dropped_records"] == 0
    series = detail.series[0]
    # no sample and no overrun made of the gap: the 1500 deadlines after it only
    assert (series.count, series.overruns, series.max_ns) == (1500, 0, 5000)
    per, whole = collection_notes(detail.data)
    assert per[0] == ["not measured for 500.000 ms in 1 gap(s): time rtprobe itself held "
                      "the measuring thread (set-up, --break-on); not latency, not overruns"]
    assert whole == []


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
