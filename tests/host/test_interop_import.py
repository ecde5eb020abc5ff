"""Importers read what the real tools write, and keep the numbers the tools printed.

Each test runs the tool here for a moment at a low priority (SCHED_FIFO 1 under
nice), imports its output and compares with what the same tool printed.  A test is
skipped only when the tool is not installed (.ci/run installs them all).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rtbench.bundle import MeasurementDetail, RunDetail
from rtbench.interop.base import importers
from rtbench.rtprobe.wire import loglin7
from tests.parts import require_part
from tests.session_lock import session_lock


def tool(argv: list[str], cwd: Path, timeout: float = 60) -> str:
    """Run a tool under nice in cwd, under the machine-wide realtime lock; its
    stdout+stderr (skip when it is not installed)."""
    if shutil.which(argv[0]) is None:
        require_part("tools", f"{argv[0]} is not installed (.ci/run installs it)")
    # the peers measure for real at an RT priority (cyclictest -p 1): beside another
    # worker's rtprobe at SCHED_FIFO 80 a cyclictest thread once got no cycle at all in
    # make test, and wrote "avg": -nan
    with session_lock("realtime"):
        done = subprocess.run(["nice", "-n", "10", *argv], cwd=cwd, capture_output=True,
                              text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{argv}: {done.returncode} {done.stderr[-500:]}"
    return done.stdout + done.stderr


def detect(path: Path) -> str:
    """The name of the importer that detects path."""
    data = path.read_bytes()
    for name, imp in importers().items():
        if imp.detect(data[:4096], path.name):
            return name
    raise AssertionError(f"no importer detects {path}")


def read(path: Path, fmt: str | None = None) -> RunDetail:
    """The one run of path, read by its detected (or the named) importer."""
    name = fmt or detect(path)
    runs = importers()[name].read(path.read_bytes(), path.name)
    assert len(runs) == 1
    return runs[0]


def only(run: RunDetail) -> MeasurementDetail:
    """The one measurement of an imported run."""
    assert len(run.scenarios) == 1 and len(run.scenarios[0].measurements) == 1
    return run.scenarios[0].measurements[0]


T_LINE = re.compile(r"T:\s*(\d+)\s*\(\s*\d+\)\s*P:\s*\d+\s*I:\s*\d+\s*C:\s*(\d+)\s*"
                    r"Min:\s*(\d+)\s*Act:\s*\d+\s*Avg:\s*(\d+)\s*Max:\s*(\d+)")


def printed_threads(text: str) -> dict[int, tuple[int, int, int, int]]:
    """(C, Min, Avg, Max) of the last T: line of each thread."""
    out = {}
    for match in T_LINE.finditer(text):
        t, c, lo, avg, hi = (int(v) for v in match.groups())
        out[t] = (c, lo, avg, hi)
    return out


def test_cyclictest_json_and_quiet_summary(tmp_path: Path) -> None:
    out = tool(["cyclictest", "-m", "-p", "1", "-t2", "-i", "1000", "-l", "300", "-q",
                "--json=ct.json"], tmp_path)
    (tmp_path / "ct.txt").write_text(out)
    printed = printed_threads(out)
    assert len(printed) == 2
    doc = json.loads((tmp_path / "ct.json").read_text())
    from_json = only(read(tmp_path / "ct.json"))
    from_text = only(read(tmp_path / "ct.txt"))
    assert detect(tmp_path / "ct.json") == "cyclictest-json"
    assert detect(tmp_path / "ct.txt") == "cyclictest"
    for t, (c, lo, avg, hi) in printed.items():
        for m in (from_json, from_text):
            s = m.series[t]
            assert (s.count, s.min_ns, s.max_ns) == (c, lo * 1000, hi * 1000)
            assert m.data["summary_only"] and not s.hist  # no distribution: none invented
        assert from_text.data["tool_avg_ns"][t] == avg * 1000
        assert from_json.data["tool_avg_ns"][t] == pytest.approx(
            doc["thread"][str(t)]["avg"] * 1000)
        assert from_json.series[t].cpu == doc["thread"][str(t)]["cpu"]
    run = read(tmp_path / "ct.json")
    assert run.source["tool"] == "cyclictest" and run.source["tool_version"] == doc[
        "rt_test_version:"] and "cyclictest" in run.source["command_line"]
    assert run.kernel == doc["sysinfo"]["release"]


def test_cyclictest_histogram_text_and_json(tmp_path: Path) -> None:
    out = tool(["cyclictest", "-m", "-p", "1", "-t2", "-i", "1000", "-l", "300", "-q",
                "-h", "40", "--json=h.json"], tmp_path)
    (tmp_path / "h.txt").write_text(out)
    doc = json.loads((tmp_path / "h.json").read_text())
    text_run = only(read(tmp_path / "h.txt"))
    json_run = only(read(tmp_path / "h.json"))
    # what the text block printed, per thread
    rows = [[int(v) for v in line.split()] for line in out.splitlines()
            if re.match(r"^\d{6}\s", line)]
    sums = {key: [int(v) for v in re.search(rf"# {key}:(.*)", out).group(1).split()]  # type: ignore
            for key in ("Total", "Min Latencies", "Max Latencies", "Histogram Overflows")}
    for t in range(2):
        thread = doc["thread"][str(t)]
        printed = {
            "json": (thread["cycles"], thread["min"], thread["max"],
                     sorted((int(k), v) for k, v in thread["histogram"].items() if v),
                     thread["cycles"] - sum(thread["histogram"].values())),
            "text": (sums["Total"][t] + sums["Histogram Overflows"][t],
                     sums["Min Latencies"][t], sums["Max Latencies"][t],
                     [(row[0], row[1 + t]) for row in rows if row[1 + t]],
                     sums["Histogram Overflows"][t])}
        for name, m in (("json", json_run), ("text", text_run)):
            count, lo, hi, tool_hist, overflow = printed[name]
            s = m.series[t]
            assert (s.count, s.min_ns, s.max_ns) == (count, lo * 1000, hi * 1000)
            assert [(v, c) for v, c in m.data["tool_hist"][t] if c] == tool_hist  # exactly
            assert m.data["tool_overflow"][t] == overflow
            # every count is in our histogram: the buckets map 1:1 below the limit
            expected: dict[int, int] = {}
            for value, n in tool_hist:
                i = loglin7.index_one(value * 1000)
                expected[i] = expected.get(i, 0) + n
            if overflow:
                i = loglin7.index_one(40 * 1000)
                expected[i] = expected.get(i, 0) + overflow
            assert dict(s.hist) == expected and sum(expected.values()) == count


def test_cyclictest_histfile(tmp_path: Path) -> None:
    tool(["cyclictest", "-m", "-p", "1", "-t1", "-i", "1000", "-l", "200", "-q", "-h", "30",
          "--histfile=h.hist"], tmp_path)
    text = (tmp_path / "h.hist").read_text()
    m = only(read(tmp_path / "h.hist"))
    s = m.series[0]
    total = int(re.search(r"# Total:\s*(\d+)", text).group(1))  # type: ignore[union-attr]
    over = int(re.search(r"# Histogram Overflows:\s*(\d+)", text).group(1))  # type: ignore
    assert s.count == total + over == 200
    assert sum(c for _, c in m.data["tool_hist"][0]) == total
    assert s.max_ns == int(re.search(  # type: ignore[union-attr]
        r"# Max Latencies:\s*(\d+)", text).group(1)) * 1000


def test_cyclictest_verbose_samples(tmp_path: Path) -> None:
    out = tool(["cyclictest", "-m", "-p", "1", "-t1", "-i", "1000", "-l", "200", "-v"],
               tmp_path)
    (tmp_path / "v.txt").write_text(out)
    values = [int(m.group(1)) for m in re.finditer(r"^\s*0:\s*\d+:\s*(\d+)\s*$", out, re.M)]
    assert len(values) == 200
    s = only(read(tmp_path / "v.txt")).series[0]
    assert (s.count, s.min_ns, s.max_ns, s.sum_ns) == (
        200, min(values) * 1000, max(values) * 1000, sum(values) * 1000)
    idx, cnt = loglin7.from_values([v * 1000 for v in values])
    assert s.hist == list(zip(idx.tolist(), cnt.tolist(), strict=True))


def test_cyclictest_nanoseconds(tmp_path: Path) -> None:
    out = tool(["cyclictest", "-m", "-p", "1", "-t1", "-i", "1000", "-l", "200", "-q", "-N"],
               tmp_path)
    (tmp_path / "n.txt").write_text(out)
    c, lo, avg, hi = printed_threads(out)[0]
    for fmt in (None, "cyclictest-ns"):  # detected (minimum >= 1000) and forced
        m = only(read(tmp_path / "n.txt", fmt))
        s = m.series[0]
        assert (s.count, s.min_ns, s.max_ns) == (c, lo, hi)
        assert m.data["tool_avg_ns"][0] == avg and m.data["unit"] == "ns"


def test_oslat_json_and_text(tmp_path: Path) -> None:
    out = tool(["oslat", "-D", "1", "-c", "0", "--json", "o.json"], tmp_path)
    (tmp_path / "o.txt").write_text(out)
    doc = json.loads((tmp_path / "o.json").read_text())["thread"]["0"]
    assert detect(tmp_path / "o.json") == "oslat-json" and detect(tmp_path / "o.txt") == "oslat"
    total = sum(doc["histogram"].values())
    for m in (only(read(tmp_path / "o.json")), only(read(tmp_path / "o.txt"))):
        s = m.series[0]
        assert s.count == total and s.min_ns == doc["min"] * 1000
        assert s.max_ns == doc["max"] * 1000
        assert m.data["tool_avg_ns"][0] == pytest.approx(doc["avg"] * 1000, rel=1e-3)
        kept = {str(v): c for v, c in m.data["tool_hist"][0] if c}
        assert kept == {k: v for k, v in doc["histogram"].items() if v}


def test_hackbench(tmp_path: Path) -> None:
    out = tool(["hackbench", "-l", "50", "-g", "1"], tmp_path)
    (tmp_path / "hb.txt").write_text(out)
    seconds = re.search(r"Time:\s*(\S+)", out).group(1)  # type: ignore[union-attr]
    m = only(read(tmp_path / "hb.txt"))
    assert m.series[0].max_ns == round(float(seconds) * 1e9)
    assert m.data["summary_only"] and m.series[0].hist == []
    assert m.params["groups"] == 1


def test_stress_ng_cyclic(tmp_path: Path) -> None:
    out = tool(["stress-ng", "--cyclic", "1", "--cyclic-prio", "1", "-t", "2",
                "--cyclic-dist", "1000"], tmp_path)
    (tmp_path / "sng.log").write_text(out)
    m = only(read(tmp_path / "sng.log"))
    s = m.series[0]
    samples = int(re.search(r"ns delay, (\d+) samples", out).group(1))  # type: ignore
    mean = float(re.search(r"mean: (\S+) ns", out).group(1))  # type: ignore[union-attr]
    lo, hi = (float(v) for v in re.search(  # type: ignore[union-attr]
        r"min: (\S+) ns, max: (\S+) ns", out).groups())
    assert (s.count, s.min_ns, s.max_ns) == (samples, lo, hi)
    assert m.data["tool_avg_ns"][0] == mean
    for pct, value in re.findall(r"(\d+\.\d+)%:\s*(\d+) ns", out):
        assert m.data["tool_percentiles_ns"][pct] == int(value)
    if m.data["distribution_complete"]:
        assert sum(c for _, c in s.hist) == samples


def test_jitterdebugger_results_and_samples(tmp_path: Path) -> None:
    # jitterdebugger's writer thread runs at no RT priority: on a busy machine it once
    # wrote no sample in the second (an empty samples.raw), so up to three runs
    for _ in range(3):
        out = tool(["jitterdebugger", "-D", "1s", "-p", "1", "-s", "-o", "jd"], tmp_path,
                   timeout=30)
        if (tmp_path / "jd" / "samples.raw").stat().st_size > 0:
            break
    printed = {}
    for match in re.finditer(r"T:\s*(\d+).*?C:\s*(\d+)\s*Min:\s*(\d+)\s*Avg:\s*(\S+)\s*"
                             r"Max:\s*(\d+)", out):
        printed[int(match.group(1))] = match.groups()[1:]
    results = only(read(tmp_path / "jd" / "results.json"))
    assert detect(tmp_path / "jd" / "results.json") == "jitterdebugger-json"
    for t, (c, lo, avg, hi) in printed.items():
        s = results.series[t]
        if int(c) == 0:
            # A thread that got no sample in the second (a loaded machine): jitterdebugger
            # prints min UINT64_MAX and max 0; unmeasured figures are unknown, not those.
            assert (s.count, s.min_ns, s.max_ns) == (0, None, None)
            continue
        assert (s.count, s.min_ns, s.max_ns) == (int(c), int(lo) * 1000, int(hi) * 1000)
        assert results.data["tool_avg_ns"][t] == pytest.approx(float(avg) * 1000)
        assert sum(cnt for _, cnt in s.hist) == int(c)
    raw_path = tmp_path / "jd" / "samples.raw"
    assert detect(raw_path) == "jitterdebugger-raw"
    from rtbench.interop.base import IncompleteOutput

    with pytest.raises(IncompleteOutput, match="completeness cannot be checked") as cut:
        read(raw_path)  # no count to check it against: import --partial keeps it
    (raw_run,) = cut.value.runs
    raw = only(raw_run)
    assert sum(s.count for s in raw.series) == raw_path.stat().st_size // 28
    for s in raw.series:
        assert sum(c for _, c in s.hist) == s.count


def test_cli_import_twice_stores_once(tmp_path: Path, run_cli) -> None:  # type: ignore
    out = tool(["cyclictest", "-m", "-p", "1", "-t1", "-i", "1000", "-l", "100", "-q",
                "--json=one.json"], tmp_path)
    (tmp_path / "one.txt").write_text(out)
    db = f"sqlite:///{tmp_path / 'i.db'}"
    first = run_cli("import", str(tmp_path / "one.json"), str(tmp_path / "one.txt"),
                    "--db", db, "--tag", "lab=a", "--host", "board1")
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("stored") == 2 and "already" not in first.stdout
    again = run_cli("import", str(tmp_path / "one.json"), "--db", db)
    assert again.returncode == 0 and "run 1 (cyclictest-json, already stored)" in again.stdout
    shown = run_cli("show", "1", "--db", db)
    assert "board1" in shown.stdout
    from rtbench.store import Store

    with Store.open(db) as store:
        run = store.get_run(1)
    import hashlib

    assert run.source["sha256"] == hashlib.sha256(
        (tmp_path / "one.json").read_bytes()).hexdigest()
    assert run.source["file"] == "one.json" and run.tags == {"lab": "a"}
    assert run.uid.startswith("sha256-") and len(run.uid) == 63


def test_cli_refuses_unknown_files_in_one_line(tmp_path: Path, run_cli) -> None:  # type: ignore
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    db = f"sqlite:///{tmp_path / 'j.db'}"
    done = run_cli("import", str(junk), "--db", db)
    assert done.returncode == 2 and "format not recognised" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    bad = run_cli("import", "--format", "cyclictest-json", str(junk), "--db", db)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_json_export_import_round_trip(tmp_path: Path, run_cli) -> None:  # type: ignore
    a, b = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    done = run_cli("run", "smoke", "--scale", "0.2", "--simulate", "3", "--db", a,
                   "--no-report", timeout=120)
    assert done.returncode in (0, 1), done.stderr
    exported = run_cli("export", "1", "--format", "json", "--db", a)
    assert exported.returncode == 0
    import os
    import sys

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    piped = subprocess.run([sys.executable, "-m", "rtbench", "import", "-", "--db", b],
                           input=exported.stdout, capture_output=True, text=True, env=env,
                           timeout=60, check=False)
    assert piped.returncode == 0 and "run 1 (json, stored)" in piped.stdout
    again = run_cli("export", "1", "--format", "json", "--db", b)
    assert again.stdout == exported.stdout  # exactly the same run
