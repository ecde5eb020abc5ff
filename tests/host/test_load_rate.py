"""analysis.loads.achieved_rate: a built-in load's achieved rate over its scenario."""

from __future__ import annotations

from typing import Any

from rtbench.analysis.loads import achieved_rate
from rtbench.rtprobe.wire.records import ProbeOutput, RateRecord, ResultRecord


def output(rates: list[float], reported: Any = "absent") -> ProbeOutput:
    """A load's output: its rate records and, unless "absent", a result saying reported."""
    out = ProbeOutput()
    for i, value in enumerate(rates):
        out.add(RateRecord("cpu", i, (i + 1) * 10**9, value, "%", {}))
    if reported != "absent":
        out.add(ResultRecord(raw={"achieved": reported, "unit": "%"}, status="ok",
                             exit_code=0, series=[], verdicts=[], data={}))
    return out


def test_the_result_s_own_figure_wins() -> None:
    assert achieved_rate(output([10.0, 20.0], 49.5)) == 49.5
    assert achieved_rate(output([], 7)) == 7


def test_else_the_mean_of_the_rate_records() -> None:
    assert achieved_rate(output([10.0, 20.0, 60.0])) == 30.0
    assert achieved_rate(output([10.0, 20.0], None)) == 15.0


def test_unknown_without_either_or_with_a_figure_that_is_no_number() -> None:
    assert achieved_rate(output([])) is None
    assert achieved_rate(output([], None)) is None
    assert achieved_rate(output([10.0], "fast")) is None
    assert achieved_rate(output([10.0], True)) is None
