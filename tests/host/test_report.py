"""Terminal table and HTML report of a stored run."""

from __future__ import annotations

import os
import pickle
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from synth_probe import synth_lines

from rtbench.bundle import RunDetail
from rtbench.report import plot
from rtbench.report.html import write_html_report
from rtbench.report.terminal import load_table, show_run, summary_table
from rtbench.rtprobe.wire.records import ProbeOutput
from rtbench.store import Store


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
                   "interrupted", "≥50µs"):
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


def test_histogram_svgs_pool_gives_the_same_figures(
        run: RunDetail, monkeypatch: pytest.MonkeyPatch) -> None:
    items = [(m, f"figure {i}") for i, m in enumerate(
        [m for sc in run.scenarios for m in sc.measurements] * 3)]
    one_by_one = [plot.histogram_svg(m, title) for m, title in items]
    # two usable CPUs at least, so the worker pool draws them
    monkeypatch.setattr(plot.os, "sched_getaffinity", lambda _pid: {0, 1})
    pooled = plot.histogram_svgs(items)
    assert pooled == one_by_one
    assert all(svg is not None and svg.startswith("<svg") for svg in pooled)
    assert len(set(pooled)) == len(items)  # titles differ: no figure reused


def _children(pid: int) -> list[int]:
    """Pids whose parent is pid (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_histogram_svgs_workers_die_with_the_report(
        run: RunDetail, tmp_path: Path) -> None:
    data = tmp_path / "run.pickle"
    data.write_bytes(pickle.dumps(run))
    script = (
        "import os, pickle, sys\n"
        "from rtbench.report import plot\n"
        "os.sched_getaffinity = lambda _pid: {0, 1}\n"
        f"run = pickle.loads(open({str(data)!r}, 'rb').read())\n"
        "ms = [m for sc in run.scenarios for m in sc.measurements]\n"
        "print('ready', flush=True)\n"
        "plot.histogram_svgs([(m, str(i)) for i, m in enumerate(ms * 200)])\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        deadline = time.monotonic() + 20
        while not (workers := _children(proc.pid)):
            assert time.monotonic() < deadline, "no pool worker started"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 5
    while (alive := [w for w in workers if Path(f"/proc/{w}").exists()]) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"workers {alive} outlived the report"


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
