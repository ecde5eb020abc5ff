"""rtprobe ctx: strict input, help, the lmbench-shaped table, exact simulated cells."""

from __future__ import annotations

import re
import statistics
from typing import Any

import pytest
from jsonschema.protocols import Validator
from probe_support import (
    RunProbe,
    assert_usage_error,
    assert_valid,
    needs_root,
    sim_uniform,
)

BAD_INPUT = [
    (["--bogus"], "--bogus"),
    (["--processes", "1"], "--processes"),
    (["--processes", "2,x"], "--processes"),
    (["--processes", ""], "--processes"),
    (["--sizes", "99999999"], "--sizes"),
    (["--repetitions", "0"], "--repetitions"),
    (["--hops", "0"], "--hops"),
    (["--max-switch", "0"], "--max-switch"),
    (["--duration", "5s"], "--duration"),
    (["--threshold", "10us"], "--threshold"),
    (["--threads", "2"], "--threads"),
    (["--policy", "deadline"], "--policy"),
]

SIZE_LINE = re.compile(r'^"size=(\d+)k ovr=(-?\d+\.\d\d)$')
CELL_LINE = re.compile(r"^(\d+) (-?\d+\.\d\d)")


def table(stderr: str) -> dict[int, tuple[float, dict[int, float]]]:
    """Parse the lmbench-shaped table: size -> (overhead us, {processes: us})."""
    out: dict[int, tuple[float, dict[int, float]]] = {}
    size = -1
    for line in stderr.splitlines():
        if m := SIZE_LINE.match(line):
            size = int(m.group(1))
            out[size] = (float(m.group(2)), {})
        elif (m := CELL_LINE.match(line)) and size >= 0:
            out[size][1][int(m.group(1))] = float(m.group(2))
    return out


@pytest.mark.parametrize(("args", "option"), BAD_INPUT)
def test_bad_input_exits_2_naming_the_option(run_probe: RunProbe, args: list[str],
                                              option: str) -> None:
    run = run_probe("ctx", *args, timeout=10, measures=False)
    assert_usage_error(run, option)


def test_help_documents_every_option(run_probe: RunProbe) -> None:
    run = run_probe("ctx", "--help", parse=False)
    assert run.rc == 0
    for option in ("--processes", "--sizes", "--repetitions", "--hops", "--max-switch",
                   "--cpus", "--policy", "--simulate"):
        assert option in run.stdout
    assert "rtprobe ctx --" in run.stdout  # an example


def test_simulated_cells_are_exact(run_probe: RunProbe, validator: Validator) -> None:
    # Per size: the overhead is one draw, then each cell's repetitions are the next draws.
    run = run_probe("ctx", "--simulate", "5:uniform,min=1us,max=9us", "--processes", "2,8",
                    "--sizes", "0,4", "--repetitions", "3")
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    assert run.result["series"] == []
    draws = sim_uniform(5, 0, 1000, 9000, 2 * (1 + 2 * 3))
    expect: list[dict[str, Any]] = []
    for size in (0, 4):
        overhead = draws.pop(0)
        for procs in (2, 8):
            reps = [draws.pop(0) for _ in range(3)]
            expect.append({"size_kib": size, "processes": procs, "overhead_ns": overhead,
                           "repetitions": reps, "per_switch_ns": sorted(reps)[1]})
    cells = run.result["data"]["cells"]
    got = [{k: c[k] for k in ("size_kib", "processes", "overhead_ns", "repetitions",
                              "per_switch_ns")} for c in cells]
    assert got == expect
    assert [o["overhead_ns"] for o in run.result["data"]["overheads"]] == \
        [expect[0]["overhead_ns"], expect[2]["overhead_ns"]]
    # The table on stderr shows the same numbers in microseconds.
    shown = table(run.stderr)
    assert set(shown) == {0, 4}
    for cell in expect:
        ovr, values = shown[int(cell["size_kib"])]
        assert ovr == pytest.approx(int(cell["overhead_ns"]) / 1000, abs=0.006)
        assert values[int(cell["processes"])] == \
            pytest.approx(int(cell["per_switch_ns"]) / 1000, abs=0.006)


def test_max_switch_criterion_fails_with_exit_1(run_probe: RunProbe,
                                                validator: Validator) -> None:
    run = run_probe("ctx", "--simulate", "1:const,lat=5us", "--processes", "2", "--sizes", "0",
                    "--max-switch", "4us")
    assert run.rc == 1
    assert_valid(run, validator)
    assert run.result["status"] == "fail"
    assert [v["pass"] for v in run.result["verdicts"]] == [True, False]


@needs_root
@pytest.mark.parametrize("placement", [[], ["--cpus", "0"]], ids=["unpinned", "one-cpu"])
def test_real_ring_prints_table_with_positive_cells(run_probe: RunProbe, validator: Validator,
                                                    placement: list[str]) -> None:
    run = run_probe("ctx", "--processes", "2,4", "--sizes", "0,16", "--repetitions", "3",
                    "--hops", "2000", *placement, timeout=30)
    assert run.rc == 0, run.stderr
    assert_valid(run, validator)
    data = run.result["data"]
    cells = data["cells"]
    assert [(c["size_kib"], c["processes"]) for c in cells] == [(0, 2), (0, 4), (16, 2), (16, 4)]
    for cell in cells:
        assert cell["per_switch_ns"] > 0 and not cell["flagged"], cell
        assert len(cell["repetitions"]) == 3
        assert cell["hops"] % cell["processes"] == 0
        assert cell["per_switch_ns"] == statistics.median_low(cell["repetitions"])
    shown = table(run.stderr)
    assert set(shown) == {0, 16}
    for overhead_us, values in shown.values():
        assert overhead_us > 0
        assert set(values) == {2, 4}
        assert all(v > 0 for v in values.values())
    assert run.start["params"]["pinned"] is bool(placement)
