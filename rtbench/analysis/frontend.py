"""The numbers `rtbench cyclictest` prints beside rtprobe's counts (pure).

A thread's average latency (sum / count of its result series) and its `Act:` value
(the last sample when every sample was read back, else the mean of the last window
that had samples).  The cyclictest front end only formats them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rtbench.rtprobe.wire.records import WindowRecord


def series_mean_ns(series: Mapping[str, Any]) -> float | None:
    """The mean latency of a result series in ns; None when it has no sample."""
    count = int(series.get("count") or 0)
    if count <= 0:
        return None
    return int(series.get("sum_ns") or 0) / count


def act_ns(index: int, samples: Mapping[int, Sequence[int]],
           windows: Sequence[WindowRecord]) -> float | None:
    """cyclictest's Act: of series index: its last sample when the samples were read,
    else the mean of its last window with samples; None when neither exists."""
    own = samples.get(index)
    if own:
        return float(own[-1])
    last = [w for w in windows if w.series == index and w.count]
    if not last:
        return None
    return last[-1].sum_ns / last[-1].count
