"""rtprobe cyclic --simulate: exact statistics, reproducibility, raw file, output file."""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from probe_support import (
    ProbeRun,
    RunProbe,
    assert_usage_error,
    hist_index,
    parse_ndjson,
    sim_uniform,
)

WARMUP_SAMPLES = 1000  # default warm-up 1 s at the default 1 ms interval


def merged_hist(windows: list[dict[str, Any]], series: int) -> dict[int, int]:
    """Add up the measured windows' histograms of one series."""
    total: Counter[int] = Counter()
    for win in windows:
        if win["series"] == series and not win["warmup"]:
            for index, count in win["hist"]:
                total[index] += count
    return dict(total)


def without_tids(series: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A result's series without the thread ids (they differ from run to run)."""
    return [{k: v for k, v in s.items() if k != "tid"} for s in series]


def without_timestamps(run: ProbeRun) -> list[dict[str, Any]]:
    """Every window, spike and result record, minus wall-clock members, the
    process's memory footprint, thread ids and the record queue's high-water mark
    (how fast the reader read), in a canonical order (records of different series
    may interleave differently)."""
    out = []
    for rec in run.records:
        if rec["type"] == "start":
            continue
        rec = dict(rec)
        rec.pop("elapsed_ns", None)
        rec.pop("footprint", None)
        if rec["type"] == "result":
            assert rec["output"]["dropped_records"] == 0  # a simulated run drops nothing
            rec["output"] = {**rec["output"], "max_queued_bytes": None}
            rec["series"] = without_tids(rec["series"])
        out.append(rec)
    return sorted(out, key=lambda r: (r["type"], r.get("series", -1), r.get("index", -1),
                                      r.get("t_ns", -1)))


def test_const_gives_exact_min_max_sum(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--simulate", "3:const,lat=5us", "--loops", "1500",
                    "--threads", "2")
    assert run.rc == 0, run.stderr
    assert run.result["status"] == "ok"
    for series in run.result["series"]:
        assert series["count"] == 1500
        assert series["min_ns"] == series["max_ns"] == 5000
        assert series["sum_ns"] == 1500 * 5000
        assert series["overruns"] == 0
        assert series["hist"] == [[hist_index(5000), 1500]]
        assert series["warmup"]["count"] == WARMUP_SAMPLES


@pytest.mark.parametrize("seed", [1, 42, 2**63 + 5])
def test_uniform_matches_the_sim_reference(run_probe: RunProbe, seed: int) -> None:
    loops = 2300
    run = run_probe("cyclic", "--simulate", f"{seed}:uniform,min=1us,max=9us",
                    "--loops", str(loops), "--threads", "2")
    assert run.rc == 0, run.stderr
    for series in run.result["series"]:
        samples = sim_uniform(seed, series["index"], 1000, 9000, WARMUP_SAMPLES + loops)
        warm, measured = samples[:WARMUP_SAMPLES], samples[WARMUP_SAMPLES:]
        assert series["count"] == loops
        assert series["min_ns"] == min(measured)
        assert series["max_ns"] == max(measured)
        assert series["sum_ns"] == sum(measured)
        assert series["warmup"]["sum_ns"] == sum(warm)
        assert series["warmup"]["max_ns"] == max(warm)
        expected_hist = Counter(hist_index(v) for v in measured)
        assert dict((i, c) for i, c in series["hist"]) == dict(expected_hist)
        assert merged_hist(run.windows, series["index"]) == dict(expected_hist)
        worst = sorted(measured, reverse=True)[:10]
        assert [w["latency_ns"] for w in series["worst"]] == worst


def test_windows_add_up_and_are_flagged(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--simulate", "9", "--loops", "3500", "--warmup", "2s",
                    "--threads", "1")
    assert run.rc == 0
    wins = run.windows
    assert [w["index"] for w in wins] == [0, 1, 2, 3, 4, 5]
    assert [w["warmup"] for w in wins] == [True, True, False, False, False, False]
    assert [w["count"] for w in wins] == [1000, 1000, 1000, 1000, 1000, 500]
    assert wins[2]["start_ns"] == 2_000_000_000
    series = run.result["series"][0]
    assert sum(w["count"] for w in wins if not w["warmup"]) == series["count"] == 3500
    assert sum(w["sum_ns"] for w in wins if not w["warmup"]) == series["sum_ns"]
    assert series["warmup"]["count"] == 2000


def test_spike_every_n_gives_exact_exceedances(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--simulate", "1:const,lat=5us,spike=500us,every=100",
                    "--loops", "2000", "--threshold", "100us,1ms", "--threads", "2")
    # Measured samples are numbers 1001..3000 of each stream: 20 multiples of 100.
    assert run.rc == 1
    assert run.result["status"] == "fail"
    for series in run.result["series"]:
        assert series["exceed"] == [{"threshold_ns": 100_000, "count": 20},
                                    {"threshold_ns": 1_000_000, "count": 0}]
        assert series["max_ns"] == 500_000
        assert series["spikes_dropped"] == 0
    spikes = run.by_type["spike"]
    assert len(spikes) == 40
    assert {s["threshold_ns"] for s in spikes} == {100_000}
    assert sorted(s["t_ns"] for s in spikes if s["series"] == 0) == [
        (n - 1) * 1_000_000 for n in range(1100, 3001, 100)]
    verdicts = {v["name"]: v["pass"] for v in run.result["verdicts"]}
    assert verdicts == {"threshold 100us": False, "threshold 1000us": True}


def test_simulated_overruns_are_counted(run_probe: RunProbe) -> None:
    # Every 10th sample is 2.5 intervals late: it skips 2 deadlines (but the
    # last, sample 1000, ends the run before its overruns are counted).
    run = run_probe("cyclic", "--simulate", "1:const,lat=1us,spike=2500us,every=10",
                    "--loops", "1000", "--warmup", "0", "--threads", "1")
    assert run.rc == 0
    series = run.result["series"][0]
    assert series["count"] == 1000
    assert series["overruns"] == 2 * 99
    assert sum(w["overruns"] for w in run.windows) == 198


def test_overruns_split_at_warmup_and_end(run_probe: RunProbe) -> None:
    # Sample 1000 (due at 999 ms, the last warm-up deadline) is 2.5 ms late:
    # the deadlines it skips (1000 and 1001 ms) are measured ones.  Sample 2000
    # (due at 2001 ms) skips two more.  Deadlines past the end are not counted.
    run = run_probe("cyclic", "--simulate", "1:const,lat=1us,spike=2500us,every=1000",
                    "--duration", "2s", "--threads", "1")
    assert run.rc == 0
    series = run.result["series"][0]
    assert series["warmup"]["overruns"] == 0
    assert series["warmup"]["count"] == 1000
    assert series["overruns"] == 4
    assert series["count"] + series["overruns"] == 2000
    assert run.result["measured_ns"] == 2_000_000_000


def test_same_seed_gives_identical_records(run_probe: RunProbe) -> None:
    args = ("cyclic", "--simulate", "77:normal,mean=20us,sd=5us,spike=300us,every=333",
            "--loops", "1800", "--threshold", "200us")
    first, second = run_probe(*args), run_probe(*args)
    assert first.rc == second.rc == 1
    assert without_timestamps(first) == without_timestamps(second)
    third = run_probe(*args[:2], "78:normal,mean=20us,sd=5us", *args[3:])
    assert without_timestamps(third) != without_timestamps(first)


def test_raw_file_holds_every_sample(run_probe: RunProbe, tmp_path: Path) -> None:
    raw = tmp_path / "samples.bin"
    loops = 1700
    run = run_probe("cyclic", "--simulate", "4:uniform,min=1us,max=3us", "--loops",
                    str(loops), "--threads", "2", "--raw", str(raw), "--raw-buffer", "1024")
    assert run.rc == 0, run.stderr
    data = raw.read_bytes()
    magic, hsize, rsize, t0, clock_id, zero = struct.unpack_from("<8sIIQII", data, 0)
    assert (magic, hsize, rsize, zero) == (b"RTPRAW01", 32, 24, 0)
    assert t0 == run.start["t0_ns"]
    assert clock_id == 1  # CLOCK_MONOTONIC
    records = [struct.unpack_from("<QqII", data, off) for off in range(32, len(data), 24)]
    assert (len(data) - 32) % 24 == 0
    assert len(records) == 2 * (WARMUP_SAMPLES + loops)
    assert run.result["raw"] == {"path": str(raw), "records": len(records), "dropped": 0,
                                 "error": None}
    for series in (0, 1):
        mine = [r for r in records if r[2] == series]
        assert [r[0] for r in mine] == [k * 1_000_000 for k in range(WARMUP_SAMPLES + loops)]
        assert [r[1] for r in mine] == sim_uniform(4, series, 1000, 3000, WARMUP_SAMPLES + loops)
        assert sum(r[3] & 1 for r in mine) == WARMUP_SAMPLES


def test_output_file_is_written_whole(run_probe: RunProbe, tmp_path: Path) -> None:
    out = tmp_path / "run.ndjson"
    out.write_text("old content\n")
    run = run_probe("cyclic", "--simulate", "2", "--loops", "1200", "--output", str(out))
    assert run.rc == 0
    assert run.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.ndjson"]
    records = parse_ndjson(out.read_text())
    assert records[0]["type"] == "start" and records[-1]["type"] == "result"


def test_output_into_missing_directory_exits_2(run_probe: RunProbe, tmp_path: Path) -> None:
    run = run_probe("cyclic", "--simulate", "2", "--loops", "10",
                    "--output", str(tmp_path / "no" / "such.ndjson"))
    assert run.rc == 2
    assert "--output" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_break_on_stops_a_simulated_run(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--simulate", "1:const,lat=5us,spike=500us,every=700",
                    "--loops", "5000", "--threads", "1", "--break-on", "400us")
    assert run.rc == 1
    result = run.result
    assert result["status"] == "break"
    # Sample 1400 is the first measured spike (700 is in the warm-up).
    assert result["break"] == {"series": 0, "t_ns": 1_399_000_000, "latency_ns": 500_000,
                               "tracing_stopped": False}
    assert result["series"][0]["count"] == 400


def test_break_action_continue_runs_to_the_end(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--simulate", "1:const,lat=5us,spike=500us,every=700",
                    "--loops", "5000", "--threads", "1", "--break-on", "400us",
                    "--break-action", "continue")
    assert run.rc == 0
    assert run.result["series"][0]["count"] == 5000
    assert run.result["break"]["t_ns"] == 1_399_000_000


def test_on_spike_runs_with_environment(run_probe: RunProbe, tmp_path: Path) -> None:
    log = tmp_path / "spikes.txt"
    cmd = (f'echo "$RTPROBE_SPIKE_SERIES $RTPROBE_SPIKE_LATENCY_NS $RTPROBE_SPIKE_T_NS" '
           f'>> {log}; echo noise-on-stdout')
    run = run_probe("cyclic", "--simulate", "1:const,lat=5us,spike=500us,every=1000",
                    "--loops", "1000", "--threads", "1", "--threshold", "100us",
                    "--on-spike", cmd)
    # stdout stays pure NDJSON (parsing succeeded); the child's stdout went to stderr.
    assert run.rc == 1
    assert "noise-on-stdout" in run.stderr
    assert run.result["on_spike"] == {"runs": 1, "skipped": 0}
    assert log.read_text().split() == ["0", "500000", str(1_999_000_000)]


def test_wider_window_gives_fewer_records_with_the_same_samples(run_probe: RunProbe) -> None:
    args = ("cyclic", "--simulate", "7:uniform,min=1us,max=9us", "--duration", "20s",
            "--warmup", "0", "--threads", "2")
    narrow = run_probe(*args)
    wide = run_probe(*args, "--window", "5s")
    assert narrow.rc == wide.rc == 0, narrow.stderr + wide.stderr
    assert wide.start["window_ns"] == 5_000_000_000
    narrow_w = [r for r in narrow.records if r["type"] == "window"]
    wide_w = [r for r in wide.records if r["type"] == "window"]
    assert len(narrow_w) == 2 * 20 and len(wide_w) == 2 * 4
    assert {w["end_ns"] - w["start_ns"] for w in wide_w} == {5_000_000_000}
    for series in (0, 1):
        assert merged_hist(wide_w, series) == merged_hist(narrow_w, series)
    # The statistics do not depend on the window.
    assert without_tids(wide.result["series"]) == without_tids(narrow.result["series"])


@pytest.mark.parametrize("value", ["0", "50ms", "1500us", "2h", "soon"])
def test_window_must_be_whole_milliseconds_from_100ms_to_an_hour(run_probe: RunProbe,
                                                                 value: str) -> None:
    assert_usage_error(run_probe("cyclic", "--simulate", "7", "--duration", "2s",
                                 "--window", value), "--window")


def test_each_series_names_the_thread_that_measured_it(run_probe: RunProbe) -> None:
    run = run_probe("cyclic", "--simulate", "5", "--loops", "10", "--threads", "2")
    assert run.rc == 0, run.stderr
    tids = [s["tid"] for s in run.result["series"]]
    assert all(isinstance(t, int) and t > 0 for t in tids) and len(set(tids)) == 2


@pytest.mark.parametrize("value", ["100ms", "250ms", "1500ms"])
def test_window_takes_whole_milliseconds(run_probe: RunProbe, value: str) -> None:
    run = run_probe("cyclic", "--simulate", "7", "--duration", "2s", "--window", value)
    assert run.rc == 0, run.stderr
