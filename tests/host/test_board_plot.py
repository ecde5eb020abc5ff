"""Issue 37 item 3: the board history plot a lab reads -- dates on x (ticks at nights,
weeks or months), kernel changes labelled, latency labels that step their unit (µs, ms,
s; 0 is "0") and always fit, a log axis past 100x, the regression board's runs marked --
checked on the SVG text and, in Chromium, by every <text>'s box against its viewBox."""

from __future__ import annotations

import os
import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rtbench.analysis.boards import CellHistory, HistoryPoint
from rtbench.report.axis import date_ticks, duration_label, linear_ticks, use_log
from rtbench.report.boardsvg import history_svg

REPO = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 1, 5, 3, 0, tzinfo=timezone.utc)  # a Monday, 03:00 UTC
SPIKE_NS = 9_446_545_700  # 9,446,545.7 µs: once drawn as "46,545.7 µs" off the edge
_UNIT = {"µs": 1e3, "ms": 1e6, "s": 1e9}


def test_duration_labels_step_their_unit() -> None:
    assert duration_label(0) == "0"
    assert duration_label(SPIKE_NS, significant=2) == "9.4 s"
    assert duration_label(SPIKE_NS) == "9.45 s"
    assert [duration_label(v) for v in (500, 22_000, 180_000, 1_500_000, 999_960)] == [
        "0.5 µs", "22 µs", "180 µs", "1.5 ms", "1 ms"]
    assert use_log([20_000, 2_000_001]) and not use_log([20_000, 2_000_000, 0])
    assert linear_ticks(0) == [0.0, 1000.0] and linear_ticks(95_000)[-1] >= 95_000


@given(st.floats(min_value=1.0, max_value=1e13, allow_nan=False))
def test_a_duration_label_reads_back_as_its_value(ns: float) -> None:
    number, unit = duration_label(ns).split(" ")
    assert unit in _UNIT and float(number) < 1000 or unit == "s"
    assert abs(float(number) * _UNIT[unit] - ns) <= ns * 0.006


def test_date_ticks_fall_on_nights_weeks_and_months() -> None:
    ticks, fmt, phrase = date_ticks(T0, T0 + timedelta(days=5))
    assert phrase == "ticks at midnight (UTC)" and fmt == "%d %b"
    assert all((t.hour, t.minute) == (0, 0) for t in ticks) and len(ticks) == 5
    ticks, _, phrase = date_ticks(T0, T0 + timedelta(days=40))
    assert "Mondays" in phrase and all(t.weekday() == 0 for t in ticks) and ticks
    ticks, fmt, _ = date_ticks(T0, T0 + timedelta(days=400))
    assert fmt == "%b %Y" and all(t.day == 1 for t in ticks) and 2 <= len(ticks) <= 7


def history(maxima: list[int], kernels: list[str], days: float = 3.0) -> CellHistory:
    """A cell history of len(maxima) runs spread over days, p99.9 a tenth of each max."""
    points = [HistoryPoint(run_id=i + 1, started_at=T0 + timedelta(days=days * i / max(
        len(maxima) - 1, 1)), kernel=kernels[i], max_ns=m, p999_ns=m // 10 or None,
        exceedance_rate_per_hour=None, simulated=False, policy="fifo")
        for i, m in enumerate(maxima)]
    changes: list[tuple[datetime, str]] = []
    for p in points:
        if not changes or changes[-1][1] != p.kernel:
            changes.append((p.started_at, p.kernel))
    return CellHistory(suite="nightly", cell="idle / cyclic / cpu0", points=points,
                       kernel_changes=changes, thresholds_ns=[100_000])


def texts(svg: str, cls: str) -> list[str]:
    """The contents of the <text class=cls> elements of svg."""
    return re.findall(rf'<text [^>]*class="{cls}"[^>]*>([^<]*)</text>', svg)


def test_the_svg_has_dates_units_kernels_and_marks() -> None:
    kernels = ["6.1.0-rt5"] * 3 + ["6.6.0-rt15-with-a-very-long-local-version-suffix"] * 3
    spiky = history([22_000, 21_000, 23_000, 24_000, SPIKE_NS, 22_000], kernels)
    svg = history_svg(spiky, [(5, "confirmed"), (4, "suspected"), (2, "no regression")])
    assert texts(svg, "peak") == ["9.4 s"]
    assert "log axis" in svg and set(texts(svg, "y-tick")) >= {"10 µs", "1 ms", "1 s", "10 s"}
    assert texts(svg, "x-tick") == ["06 Jan", "07 Jan", "08 Jan"]
    assert "ticks at midnight (UTC)" in svg
    assert 'class="regression confirmed"' in svg and 'class="regression suspected"' in svg
    assert svg.count('class="regression ') == 2
    kernel_labels = re.findall(r'<text class="kernel"[^>]*><title>([^<]*)</title>([^<]*)<',
                               svg)
    assert kernel_labels[0] == ("6.1.0-rt5", "6.1.0-rt5")
    assert kernel_labels[1][0] == kernels[-1] and kernel_labels[1][1].endswith("…")
    flat = history([0, 0], ["6.1"] * 2)
    svg = history_svg(flat)
    assert texts(svg, "y-tick")[0] == "0" and "linear axis" in svg
    assert "0.000" not in svg and 'class="regression' not in svg
    one = history([15_000], ["6.1"])
    assert texts(history_svg(one), "peak") == ["15 µs"]


BOX_CHECK = """
const out = [];
for (const svg of document.querySelectorAll('svg')) {
  const vb = svg.viewBox.baseVal;
  for (const t of svg.querySelectorAll('text')) {
    const b = t.getBBox();
    if (b.x < vb.x - 0.5 || b.y < vb.y - 0.5 || b.x + b.width > vb.x + vb.width + 0.5
        || b.y + b.height > vb.y + vb.height + 0.5)
      out.push([svg.getAttribute('aria-label'), t.textContent, b.x, b.y, b.width, b.height]);
  }
}
return out;
"""


@pytest.mark.browser
def test_no_svg_text_leaves_its_svg_in_chromium(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "tests" / "host"))
    from selenium.webdriver.common.by import By
    from test_server_live import _driver

    from rtbench.report.boardsvg import histogram_svg
    from rtbench.rtprobe.wire.loglin7 import index_one

    wide = history([5_000, 0, 120_000_000_000, 7_000] * 3,
                   ["5.10.0-rt-" + "x" * 40, "6.1", "6.6", "6.12"] * 3, days=120)
    cases = [
        history([22_000, 23_000, 180_000, SPIKE_NS, 25_000],
                ["6.1.0-rt5"] * 2 + ["6.6.0-rt15"] * 3),
        history([0, 0], ["6.1"] * 2), history([15_000], ["6.18.0-rt2"]), wide,
        history([999_999_999] * 3, ["a", "b", "c"], days=0.01)]
    body = "".join(f"<div>{history_svg(h, [(4, 'confirmed'), (1, 'suspected')])}</div>"
                   for h in cases)
    body += histogram_svg([(index_one(2_000), 10), (index_one(9_000_000), 10**9)], "combined")
    page = tmp_path / "plots.html"
    page.write_text(f'<!doctype html><html><meta charset="utf-8"><body>{body}</body></html>',
                    encoding="utf-8")
    shots = Path(os.environ.get("RTBENCH_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    driver = _driver(tmp_path)
    try:
        driver.get(page.as_uri())
        driver.save_screenshot(str(shots / "board-history.png"))
        assert driver.execute_script(BOX_CHECK) == []
        peaks = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "text.peak")]
        assert peaks[0] == "9.4 s" and "120 s" in peaks
        count = driver.execute_script("return document.querySelectorAll('svg text').length")
        assert count > 60
    finally:
        driver.quit()
    assert (shots / "board-history.png").stat().st_size > 1000
