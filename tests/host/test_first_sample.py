"""The first sample of `rtprobe cyclic` is as honest as the rest: set-up time never enters it.

A measuring thread's first deadline is the first one at or after the moment the thread is
ready to wait.  `--simulate ...,setup=V` models a thread that is ready only V after t0 (a
deadline before that would be met at ready + latency), so these tests fail if a deadline
that passed during set-up is ever measured.
"""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from rtbench.cli import main
from rtbench.store import Store
from tests.host.robust_support import base_env

INTERVAL_NS = 1_000_000


def raw_samples(path: Path) -> list[tuple[int, int]]:
    """(t_ns, latency_ns) of every measured sample of series 0 in an rtprobe raw file."""
    data = path.read_bytes()
    assert data[:8] == b"RTPRAW01"
    header, record = struct.unpack_from("<II", data, 8)
    out = []
    for offset in range(header, len(data) - record + 1, record):
        t_ns, latency_ns, series, flags = struct.unpack_from("<QqII", data, offset)
        if series == 0 and not flags & 1:
            out.append((t_ns, latency_ns))
    return out


def cyclic(probe: Path, tmp_path: Path, dist: str, *extra: str) -> tuple[dict, list]:  # type: ignore[type-arg]
    """Run a simulated one-thread cyclic of 100 samples; its result record and raw samples."""
    raw = tmp_path / f"{len(list(tmp_path.iterdir()))}.raw"
    done = subprocess.run([str(probe), "cyclic", "--simulate", dist, "--interval", "1ms",
                           "--loops", "100", "--warmup", "0", "--cpus", "0", "--raw", str(raw),
                           *extra], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["type"] == "result"
    return result["series"][0], raw_samples(raw)


@pytest.mark.parametrize("setup_ms", [0.5, 3, 50, 250])
def test_slow_setup_never_enters_a_sample(probe_path: Path, tmp_path: Path,
                                          setup_ms: float) -> None:
    setup_ns = int(setup_ms * 1_000_000)
    series, samples = cyclic(probe_path, tmp_path, f"1:const,lat=5us,setup={setup_ns}ns")
    assert series["count"] == 100 and len(samples) == 100
    # every sample is the simulated 5 us: none carries the set-up time
    assert series["min_ns"] == series["max_ns"] == 5000
    assert {latency for _, latency in samples} == {5000}
    assert series["overruns"] == 0
    # the first deadline is the first one at or after the thread was ready
    first_t = samples[0][0]
    assert setup_ns <= first_t < setup_ns + INTERVAL_NS
    assert [t for t, _ in samples] == [first_t + k * INTERVAL_NS for k in range(100)]


def test_setup_leaves_the_latency_stream_alone(probe_path: Path, tmp_path: Path) -> None:
    """A slow set-up shifts the samples in time; the latencies are the same stream."""
    ready, ready_samples = cyclic(probe_path, tmp_path, "7:expo,min=2us,mean=3us")
    slow, slow_samples = cyclic(probe_path, tmp_path, "7:expo,min=2us,mean=3us,setup=40ms")
    assert [lat for _, lat in slow_samples] == [lat for _, lat in ready_samples]
    assert (slow["min_ns"], slow["max_ns"], slow["sum_ns"]) == \
        (ready["min_ns"], ready["max_ns"], ready["sum_ns"])
    assert ready_samples[0][0] == 0 and slow_samples[0][0] == 40 * INTERVAL_NS


@pytest.mark.parametrize("mode", ["abs", "rel", "itimer", "timerfd"])
def test_every_real_mode_measures_on_the_deadline_grid(probe_path: Path, tmp_path: Path,
                                                       mode: str) -> None:
    """On the real clock each mode starts at its first deadline and keeps to the grid.

    Asserts behaviour, not latency (a busy VM stalls): every sample is due on a multiple of
    the interval after t0, in order, and none is lost.
    """
    raw = tmp_path / "real.raw"
    done = subprocess.run([str(probe_path), "cyclic", "--policy", "other", "--mode", mode,
                           "--interval", "1ms", "--loops", "20", "--warmup", "0", "--cpus", "0",
                           "--raw", str(raw)],
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    samples = raw_samples(raw)
    assert len(samples) == 20
    ts = [t for t, _ in samples]
    assert ts == sorted(ts) and all(t % INTERVAL_NS == 0 for t in ts)


LATE_SUITE = """\
[suite]
name = "late"
[defaults]
warmup = "10ms"
settle = "0s"
[[scenarios]]
name = "idle"
[[tests]]
name = "cyclic-100us"
test = "cyclic"
duration = "100ms"
params = { interval = "100us", threads = 1 }
"""


@pytest.mark.parametrize(("setup", "exit_code", "count"),
                         [("150ms", 0, 1000), ("5200ms", 5, 0)])
def test_a_cell_whose_thread_is_late_measures_its_whole_duration(
        probe_path: Path, tmp_path: Path, setup: str, exit_code: int, count: int) -> None:
    """loongson2f's 0.1 s cyclic-100us cell on a slow emulated board: the thread ready
    150 ms after t0 (more than the whole cell) still measures its 1000 deadlines; ready
    past the 5 s bound, the cell holds no sample and is inconclusive, never a pass."""
    suite = tmp_path / "late.toml"
    suite.write_text(LATE_SUITE)
    url = f"sqlite:///{tmp_path / 'results.db'}"
    env = base_env(tmp_path, probe_path, url)
    result = CliRunner().invoke(main, ["run", str(suite), "--simulate",
                                       f"1:const,lat=5us,setup={setup}", "--no-report"],
                                env=env)
    assert result.exit_code == exit_code, result.output
    with Store.open(url) as store:
        run = store.get_run(store.list_runs(1)[0].id)
    measurement = run.scenarios[0].measurements[0]
    assert measurement.series[0].count == count
    assert measurement.data["collection"]["series"][0]["start_ns"] == \
        min(int(setup[:-2]), 5000) * 1_000_000
    if count:
        assert measurement.status == "ok" and measurement.data["collection"]["series"][0][
            "gap_ns"] == 0
    else:
        assert run.status == "inconclusive"
