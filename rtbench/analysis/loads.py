"""The achieved rate of a built-in load over its scenario, from what `rtprobe load` printed."""

from __future__ import annotations

from rtbench.rtprobe.wire.records import ProbeOutput


def achieved_rate(output: ProbeOutput) -> float | None:
    """The load's own figure from its result record, else the mean of its per-second
    rate records; None (unknown) when it printed neither."""
    reported = output.result.raw.get("achieved") if output.result is not None else None
    if isinstance(reported, (int, float)) and not isinstance(reported, bool):
        return reported
    rates = [record.achieved for record in output.rates]
    if reported is None and rates:
        return sum(rates) / len(rates)
    return None
