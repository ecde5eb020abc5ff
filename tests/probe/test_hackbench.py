"""rtprobe hackbench: classic Time line, result record, modes, strict input."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path

import pytest
from jsonschema.protocols import Validator
from probe_support import RunProbe, parse_ndjson, validate_records

TIME_LINE = re.compile(r"^Time: \d+\.\d{3}$", re.MULTILINE)


@pytest.mark.parametrize("mode", [[], ["--threads"], ["-P"], ["-T"]],
                         ids=["default", "threads", "short-processes", "short-threads"])
@pytest.mark.parametrize("transport", [[], ["--pipe"], ["-p"], ["--socket"]],
                         ids=["default", "pipe", "short-pipe", "socket"])
def test_small_run_prints_time_and_result(run_probe: RunProbe, validator: Validator,
                                          mode: list[str], transport: list[str]) -> None:
    run = run_probe("hackbench", "-g", "2", "-f", "4", "-l", "20", "-s", "64", *mode,
                    *transport, timeout=30)
    assert run.rc == 0, run.stderr
    assert TIME_LINE.search(run.stderr), run.stderr
    validate_records(run.records, validator)
    assert [r["type"] for r in run.records] == ["start", "result"]
    params = run.start["params"]
    threads = bool({"--threads", "-T"} & set(mode))
    pipe = bool({"--pipe", "-p"} & set(transport))
    assert params["mode"] == ("threads" if threads else "processes")
    assert params["transport"] == ("pipe" if pipe else "socket")
    assert params["tasks"] == 2 * 2 * 4
    result = run.result
    assert result["test"] == "hackbench" and result["status"] == "ok"
    data = result["data"]
    assert data["messages"] == 2 * 4 * 4 * 20  # groups x senders x receivers x loops
    assert data["bytes"] == data["messages"] * 64
    assert result["elapsed_ns"] == data["elapsed_ns"] > 0
    seconds = float(TIME_LINE.findall(run.stderr)[0].split()[1])
    assert abs(seconds - data["elapsed_ns"] / 1e9) < 0.0015


def test_defaults_are_hackbench_defaults(run_probe: RunProbe) -> None:
    run = run_probe("hackbench", "--loops", "1", timeout=60)
    assert run.rc == 0, run.stderr
    params = run.start["params"]
    assert (params["groups"], params["fds"], params["datasize"]) == (10, 20, 100)
    assert (params["mode"], params["transport"]) == ("processes", "socket")
    assert run.result["data"]["messages"] == 10 * 20 * 20 * 1


def test_output_file(run_probe: RunProbe, tmp_path: Path) -> None:
    out = tmp_path / "hb.ndjson"
    run = run_probe("hackbench", "-g", "1", "-f", "2", "-l", "10", "--output", str(out),
                    parse=False)
    assert run.rc == 0 and run.stdout == ""
    records = parse_ndjson(out.read_text())
    assert [r["type"] for r in records] == ["start", "result"]


@pytest.mark.parametrize("args", [["-g", "0"], ["--loops", "x"], ["--datasize", "0"],
                                  ["-F"], ["--inet"], ["--fds"], ["extra"]])
def test_bad_input_exits_2(run_probe: RunProbe, args: list[str]) -> None:
    run = run_probe("hackbench", *args, timeout=10, measures=False)
    assert run.rc == 2
    assert run.records == []
    assert len(run.stderr.strip().splitlines()) == 1


def test_sigint_stops_a_long_run(rtprobe: Path) -> None:
    proc = subprocess.Popen([str(rtprobe), "hackbench", "-g", "2", "-f", "4", "-l", "10000000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout is not None
    assert json.loads(proc.stdout.readline())["type"] == "start"
    try:
        proc.wait(timeout=0.5)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 4, err
    result = json.loads(out.splitlines()[-1])
    assert result["status"] == "interrupted" and result["exit_code"] == 4
