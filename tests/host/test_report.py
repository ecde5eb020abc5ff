"""Terminal table and HTML report of a stored run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console
from synth_probe import synth_lines

from rtbench.records import ProbeOutput
from rtbench.report.html import write_html_report
from rtbench.report.terminal import load_table, show_run, summary_table
from rtbench.store import Store
from rtbench.store.models import RunDetail


@pytest.fixture()
def run(tmp_path: Path) -> RunDetail:
    """A stored run: an idle scenario and a loaded one, one partial."""
    with Store.open(f"sqlite:///{tmp_path / 'r.db'}") as store:
        run_id = store.create_run(
            suite="smoke", suite_source="name = 'smoke' # <b>", scale=0.1,
            hostname="box", target="local",
            sysinfo={"uname": {"release": "6.1.0-test", "machine": "x86_64"},
                     "cpu_model": "Test CPU", "preempt_rt": False,
                     "clocksource": "tsc", "governors": {"0": "performance"}},
            preflight=[{"name": "governor", "severity": "ok",
                        "value": "performance", "advice": None}],
            tool_versions={"rtbench": "0.1.0"},
            command_line=["rtbench", "run", "--suite", "smoke"],
            simulated=True)
        for name, seed, complete in (("idle", 1, True), ("cpu-load", 2, False)):
            sc = store.add_scenario(
                run_id, name=name,
                loads=[] if name == "idle" else [{"kind": "cpu", "rate": 50}],
                load_cpus=None if name == "idle" else "1", measure_cpus="0")
            if name != "idle":
                store.set_scenario_intensity(sc, {"cpu_busy_pct": 51.0,
                                                  "ctxt_per_s": 1200.0,
                                                  "irq_per_s": 800.0})
            lines, _ = synth_lines(seed=seed, series=2, windows=2,
                                   with_result=complete)
            store.add_measurement(
                sc, name="cyclic-1ms", test="cyclic", params={},
                command=["rtprobe", "cyclic", "--simulate", "1"],
                output=ProbeOutput.from_lines(lines),
                status="ok" if complete else "interrupted",
                thresholds_ns=[50_000])
        store.finish_run(run_id, "interrupted")
        return store.get_run(run_id)


def render(renderable: object, width: int = 200) -> str:
    """Text of a rich renderable."""
    console = Console(width=width, record=True, force_terminal=False)
    console.print(renderable)
    return console.export_text()


def test_summary_table(run: RunDetail) -> None:
    table = summary_table(run)
    assert table.row_count == 2
    text = render(table)
    for needle in ("idle", "cpu-load", "samples", "p99.9", "SIMULATED",
                   "interrupted", "≥50us"):
        assert needle in text
    loads = load_table(run)
    assert loads is not None
    load_text = render(loads, width=80)
    for needle in ("cpu-load", "cpu 51%", "1.2k ctxt/s"):
        assert needle in load_text
    m = run.scenarios[0].measurements[0]
    assert f"{sum(s.count for s in m.series):,}" in text
    narrow = render(table, width=80)
    assert "p99.9" in narrow and "idle" in narrow
    assert "…" not in narrow.split("─")[-1].split("times in")[0]


def test_show_run_prints_everything(run: RunDetail) -> None:
    console = Console(width=220, record=True, force_terminal=False)
    show_run(console, run)
    text = console.export_text()
    for needle in ("SIMULATED RUN", "6.1.0-test", "Environment", "Preflight",
                   "governor", "p99.999", "worst cpu0", "Definitions",
                   "rtbench run --suite smoke", "not enough samples"):
        assert needle in text, needle


def test_html_report(run: RunDetail, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    write_html_report(run, out)
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<svg") == 2
    assert "SIMULATED RUN" in page
    for needle in ("Summary", "Environment", "Preflight", "Definitions",
                   "6.1.0-test", "Test CPU", "cpu-load", "p99.999",
                   "cpu 51%", "1/128"):
        assert needle in page, needle
    # user text is escaped
    assert "# <b>" not in page and "# &lt;b&gt;" in page
    # self-contained: nothing to fetch from the network
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "url(http" not in page
    assert "<script" not in page
    assert not list(tmp_path.glob(".report.html.*"))


def test_html_report_empty_run(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'e.db'}") as store:
        run_id = store.create_run(
            suite="smoke", suite_source="", scale=1.0, hostname="h",
            target="local", sysinfo={}, preflight=[], tool_versions={},
            command_line=["rtbench", "run"], simulated=False)
        run = store.get_run(run_id)
    out = tmp_path / "e.html"
    write_html_report(run, out)
    page = out.read_text(encoding="utf-8")
    assert "No preflight facts" in page and "<svg" not in page
    assert summary_table(run).row_count == 0
