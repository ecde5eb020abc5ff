"""rtprobe wakeup: strict input, help, exact simulation, every mechanism, clean stop."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from jsonschema.protocols import Validator
from probe_support import (
    RunProbe,
    assert_usage_error,
    assert_valid,
    needs_root,
    parse_ndjson,
    sim_uniform,
    validate_records,
)

MECHANISMS = ["condvar", "futex", "pipe", "eventfd", "signal", "sigwait", "mq", "sem",
              "sysvsem", "unix"]
BAD_INPUT = [
    (["--mechanism", "carrier-pigeon"], "--mechanism"),
    (["--mechanism", "pipe,pipe"], "--mechanism"),
    (["--mechanism", ""], "--mechanism"),
    (["--mode", "telepathy"], "--mode"),
    (["--placement", "far"], "--placement"),
    (["--waker-priority", "0"], "--waker-priority"),
    (["--wakee-priority", "100"], "--wakee-priority"),
    (["--interval", "0"], "--interval"),
    (["--threads", "1"], "--threads"),
    (["--policy", "deadline"], "--policy"),
    (["--policy", "other", "--wakee-priority", "5"], "--wakee-priority"),
    (["--placement", "cross", "--cpus", "0"], "--placement"),
]
TWO_CPUS = len(os.sched_getaffinity(0)) >= 2


@pytest.mark.parametrize(("args", "option"), BAD_INPUT)
def test_bad_input_exits_2_naming_the_option(run_probe: RunProbe, args: list[str],
                                              option: str) -> None:
    run = run_probe("wakeup", *args, timeout=10, measures=False)
    assert_usage_error(run, option)


def test_help_documents_every_option_and_mechanism(run_probe: RunProbe) -> None:
    run = run_probe("wakeup", "--help", parse=False)
    assert run.rc == 0
    for text in ("--mechanism", "--mode", "--placement", "--waker-priority",
                 "--wakee-priority", "--interval", *MECHANISMS):
        assert text in run.stdout
    assert "rtprobe wakeup --" in run.stdout


def test_simulated_series_per_mechanism_are_exact(run_probe: RunProbe,
                                                  validator: Validator) -> None:
    run = run_probe("wakeup", "--mechanism", "mq,sem", "--simulate", "5:uniform,min=3us,max=9us",
                    "--loops", "300", "--warmup", "0")
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    assert [s["label"] for s in run.start["series"]] == ["mq", "sem"]
    for index, s in enumerate(run.result["series"]):
        draws = sim_uniform(5, index, 3000, 9000, 300)
        assert (s["count"], s["sum_ns"], s["max_ns"]) == (300, sum(draws), max(draws))
    mechs = run.result["data"]["mechanisms"]
    assert [(m["mechanism"], m["ran"], m["wakeups"]) for m in mechs] == [
        ("mq", True, 300), ("sem", True, 300)]
    params = run.start["params"]
    assert params["mechanisms"] == ["mq", "sem"]
    assert (params["mode"], params["placement"]) == ("threads", "same")
    assert (params["waker_priority"], params["wakee_priority"]) == (79, 80)


def test_slow_wakeups_skip_and_count_overruns(run_probe: RunProbe) -> None:
    """A 2.5 ms wake-up at a 1 ms interval skips the next two wake-up times."""
    run = run_probe("wakeup", "--simulate", "1:const,lat=2500us", "--loops", "5",
                    "--warmup", "0")
    s = run.result["series"][0]
    assert (s["count"], s["overruns"]) == (5, 8)
    assert sorted(w["t_ns"] for w in s["worst"]) == [k * 3_000_000 for k in range(5)]


@needs_root
def test_every_mechanism_between_threads(run_probe: RunProbe, validator: Validator) -> None:
    run = run_probe("wakeup", "--mechanism", ",".join(MECHANISMS), "--loops", "100",
                    "--warmup", "0.05s", "--cpus", "0", timeout=60)
    assert run.rc in (0, 1), run.stderr
    assert_valid(run, validator)
    assert [s["label"] for s in run.result["series"]] == MECHANISMS
    for s in run.result["series"]:
        assert s["error"] is None
        assert s["count"] == 100
    starts = [m["start_ns"] for m in run.result["data"]["mechanisms"]]
    assert starts == sorted(starts) and starts[0] == 0  # one after the other


@needs_root
@pytest.mark.skipif(not TWO_CPUS, reason="--placement cross needs two CPUs")  # not a part: CPUs
def test_every_mechanism_between_processes_across_cpus(run_probe: RunProbe,
                                                       validator: Validator) -> None:
    run = run_probe("wakeup", "--mechanism", ",".join(MECHANISMS), "--loops", "50",
                    "--warmup", "0.05s", "--mode", "processes", "--placement", "cross",
                    "--waker-priority", "70", "--wakee-priority", "75", timeout=60)
    assert run.rc in (0, 1), run.stderr
    assert_valid(run, validator)
    params = run.start["params"]
    assert params["waker_cpu"] != params["wakee_cpu"]
    assert (params["waker_priority"], params["wakee_priority"]) == (70, 75)
    for s in run.result["series"]:
        assert s["error"] is None
        assert s["count"] == 50
        assert s["cpu"] == params["wakee_cpu"]


def children_of(pid: int) -> list[int]:
    """Process ids whose parent is pid (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


@needs_root
def test_sigint_stops_cleanly_and_leaves_no_wakee(rtprobe: Path, validator: Validator) -> None:
    proc = subprocess.Popen([str(rtprobe), "wakeup", "--mechanism", "pipe,sem",
                             "--mode", "processes", "--duration", "30s"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        wakees = children_of(proc.pid)
        assert len(wakees) == 1  # the wakee process of the first pair
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 4, err
    assert not Path(f"/proc/{wakees[0]}").exists(), "the wakee outlived rtprobe"
    records = parse_ndjson(out)
    validate_records(records, validator)
    result = records[-1]
    assert result["type"] == "result" and result["status"] == "interrupted"
    mechs = result["data"]["mechanisms"]
    assert [m["ran"] for m in mechs] == [True, False]
