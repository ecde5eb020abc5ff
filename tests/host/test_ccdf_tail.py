"""The CCDF draws the tail out to the max: the worst samples are on the figure."""

from __future__ import annotations

import numpy as np

from rtbench.analysis.curves import ccdf_us
from rtbench.rtprobe.wire import loglin7 as hist


def test_ccdf_ends_at_the_max() -> None:
    # issue 24: a run with max 180 us ended its curve near 24 us
    values = np.concatenate([np.full(9_999, 20_000), [24_000, 180_000]]).astype(np.int64)
    idx, cnt = hist.from_values(values)
    x, p = ccdf_us(idx, cnt, 180_000.0)
    assert x[-1] == 180.0 and p[-1] == 1 / values.size
    assert np.all(np.diff(x) >= 0) and np.all(np.diff(p) <= 0) and p[0] == 1.0
    # without a known max: the upper bound of the highest bucket
    x2, _ = ccdf_us(idx, cnt)
    assert 180.0 <= x2[-1] <= 180.0 * (1 + 1 / 64)
