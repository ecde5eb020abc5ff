"""rtprobe ipc: strict input, help, exact simulated round trips, real transports."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from jsonschema.protocols import Validator
from probe_support import (
    RunProbe,
    assert_usage_error,
    assert_valid,
    hist_index,
    needs_root,
    sim_uniform,
)

BAD_INPUT = [
    (["--bogus"], "--bogus"),
    (["--transport", "tcp"], "--transport"),
    (["--peer-cpu", "4096"], "--peer-cpu"),
    (["--peer-cpu", "elsewhere"], "--peer-cpu"),
    (["--fifo-dir", ""], "--fifo-dir"),
    (["--chunk", "64K"], "--chunk"),  # bandwidth only
    (["--bandwidth", "--chunk", "0"], "--chunk"),
    (["--bandwidth", "--total", "0"], "--total"),
    (["--bandwidth", "--duration", "3s"], "--duration"),
    (["--bandwidth", "--threshold", "50us"], "--threshold"),
    (["--repetitions", "0", "--bandwidth"], "--repetitions"),
    (["--policy", "deadline"], "--policy"),
]


@pytest.mark.parametrize(("args", "option"), BAD_INPUT)
def test_bad_input_exits_2_naming_the_option(run_probe: RunProbe, args: list[str],
                                              option: str) -> None:
    run = run_probe("ipc", *args, timeout=10, measures=False)
    assert_usage_error(run, option)


def test_help_documents_every_option(run_probe: RunProbe) -> None:
    run = run_probe("ipc", "--help", parse=False)
    assert run.rc == 0
    for option in ("--transport", "--peer-cpu", "--fifo-dir", "--bandwidth", "--chunk",
                   "--total", "--repetitions", "--duration", "--threshold", "--simulate"):
        assert option in run.stdout
    assert "rtprobe ipc --" in run.stdout


def test_simulated_round_trips_are_exact(run_probe: RunProbe, validator: Validator) -> None:
    run = run_probe("ipc", "--simulate", "9:uniform,min=2us,max=30us", "--loops", "500",
                    "--warmup", "0", "--threshold", "29us")
    assert_valid(run, validator)
    draws = sim_uniform(9, 0, 2000, 30000, 500)
    s = run.result["series"][0]
    assert (s["count"], s["min_ns"], s["max_ns"], s["sum_ns"]) == \
        (500, min(draws), max(draws), sum(draws))
    assert s["exceed"] == [{"threshold_ns": 29000, "count": sum(d >= 29000 for d in draws)}]
    hist: dict[int, int] = {}
    for d in draws:
        hist[hist_index(d)] = hist.get(hist_index(d), 0) + 1
    assert s["hist"] == sorted([k, v] for k, v in hist.items())
    assert run.rc == (1 if max(draws) >= 29000 else 0)
    assert run.start["params"]["mode"] == "latency"
    assert run.start["params"]["transport"] == "pipe"


def test_simulated_bandwidth_is_exact(run_probe: RunProbe, validator: Validator) -> None:
    run = run_probe("ipc", "--bandwidth", "--simulate", "2:uniform,min=1ms,max=9ms",
                    "--total", "8M", "--repetitions", "3")
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    assert run.result["series"] == []
    draws = [d + 1 for d in sim_uniform(2, 0, 1_000_000, 9_000_000, 3)]
    bw = run.result["data"]["bandwidth"][0]
    assert [r["elapsed_ns"] for r in bw["repetitions"]] == draws
    median = sorted(draws)[1]
    assert bw["elapsed_ns"] == median
    assert bw["mb_per_s"] == pytest.approx(8 * 2**20 / median * 1e3)
    assert bw["mib_per_s"] == pytest.approx(8 * 1e9 / median)


@needs_root
@pytest.mark.parametrize("transport", ["pipe", "fifo", "unix"])
def test_real_round_trips(run_probe: RunProbe, validator: Validator, tmp_path: Path,
                          transport: str) -> None:
    run = run_probe("ipc", "--transport", transport, "--duration", "1s", "--warmup", "0",
                    "--fifo-dir", str(tmp_path), timeout=20)
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    s = run.result["series"][0]
    assert s["count"] > 1000  # back-to-back round trips for a second
    assert s["min_ns"] > 0 and s["error"] is None
    assert run.result["data"] == {"transport": transport, "mode": "latency"}
    assert list(tmp_path.iterdir()) == []  # FIFOs and their directory removed


@needs_root
def test_real_bandwidth(run_probe: RunProbe, validator: Validator) -> None:
    run = run_probe("ipc", "--bandwidth", "--chunk", "16K", "--total", "4M",
                    "--repetitions", "3", "--peer-cpu", "any", timeout=20)
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    bw = run.result["data"]["bandwidth"][0]
    assert len(bw["repetitions"]) == 3
    assert bw["chunk_bytes"] == 16384 and bw["total_bytes"] == 4 * 2**20
    assert bw["mb_per_s"] > 0
    assert run.result["verdicts"][0]["pass"]


@needs_root
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,  # not a part: CPUs
                    reason="needs two CPUs")
@pytest.mark.parametrize("transport", ["pipe", "fifo"])
def test_two_pairs_end_cleanly(run_probe: RunProbe, validator: Validator, tmp_path: Path,
                               transport: str) -> None:
    # each peer must see end of file although the other pair's descriptors existed at fork
    run = run_probe("ipc", "--threads", "2", "--transport", transport, "--duration", "1s",
                    "--warmup", "0", "--fifo-dir", str(tmp_path), timeout=20)
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    assert len(run.result["series"]) == 2
    assert all(s["count"] > 1000 for s in run.result["series"])


def test_a_pair_ready_late_still_measures_its_duration(run_probe: RunProbe,
                                                       validator: Validator) -> None:
    """A peer started after t0 (setup=V models it): the set-up is a gap of the warm-up and
    the warm-up and measured part start when the pair is ready, so the cell still measures
    the --duration asked for (arm64-rt's lat_fifo lost its set-up silently before)."""
    run = run_probe("ipc", "--simulate", "4:const,lat=5us,setup=500ms", "--duration", "200ms",
                    "--warmup", "20ms")
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    s = run.result["series"][0]
    assert s["start_ns"] == 500_000_000
    assert (s["warmup"]["gaps"], s["warmup"]["gap_ns"]) == (1, 500_000_000)
    assert (s["gaps"], s["gap_ns"]) == (0, 0)
    # back to back 5 us round trips: 20 ms of warm-up, 200 ms measured
    assert (s["warmup"]["count"], s["count"]) == (4000, 40000)
    assert run.result["measured_ns"] == 200_000_000
    measured = [w for w in run.windows if not w["warmup"]]
    assert min(w["start_ns"] for w in measured) == 520_000_000
