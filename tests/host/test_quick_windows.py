"""The quick suite is long enough for rtbench's own statistics: every cell gets the
windows compare's intervals and advise's extreme-value fit need, in about 70 s."""

from __future__ import annotations

import json
from pathlib import Path

import explain_helpers
import pytest
from explain_helpers import cli, simulated_runs

from rtbench.analysis.bootstrap import MIN_WINDOWS
from rtbench.analysis.evt import MIN_BLOCKS
from rtbench.suites.parse import load_suite, parse_duration_ns


def test_every_quick_cell_gets_enough_windows() -> None:
    # issue 24: every 250 us cell said "no interval" and advise never reached its fit
    suite = load_suite("quick")
    for test in suite.tests:
        window_ns = parse_duration_ns(test.params.get("window", "1s"), "s")
        windows = test.duration_ns // window_ns
        assert windows >= max(MIN_WINDOWS, MIN_BLOCKS), (test.name, windows)
    assert suite.estimated_seconds() <= 90


def test_sub_second_windows_give_intervals(tmp_path: Path, probe_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    for sub in ("1s", "250ms"):
        (tmp_path / sub).mkdir()
    coarse_url = simulated_runs(tmp_path / "1s", probe_path, ["1", "2"], duration="3s")
    monkeypatch.setattr(explain_helpers, "SUITE", explain_helpers.SUITE.replace(
        'interval = "1ms"', 'interval = "1ms", window = "250ms"'))
    fine_url = simulated_runs(tmp_path / "250ms", probe_path, ["1", "2"], duration="3s")
    for url, interval in ((coarse_url, False), (fine_url, True)):
        done = cli("compare", "1", "2", "--json", "--db", url)
        assert done.exit_code == 0, done.output
        diffs = json.loads(done.output)["cells"][0]["differences"][1]
        p50 = next(d for d in diffs if d["metric"] == "p50")
        assert (p50["verdict"] != "no interval") is interval, p50
