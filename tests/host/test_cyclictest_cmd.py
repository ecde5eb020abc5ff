"""`rtbench cyclictest`: cyclictest's command line in, cyclictest's output out, run stored."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rtbench.analysis.frontend import act_ns, series_mean_ns
from rtbench.commands._cyclictest_args import (
    CyclictestUsage,
    ProbePlan,
    parse_cyclictest_args,
    plan_probe,
    summary_lines,
)
from rtbench.interop.base import importers

T_LINE = re.compile(r"^T: ?\d+ \( *(\d+)\) P: ?\d+ I:\d+ C: *\d+ Min: *\d+ Act: *\d+ "
                    r"Avg: *\d+ Max: *\d+$")


def plan(*argv: str) -> list[str]:
    """The rtprobe arguments for a cyclictest command line (2 CPUs allowed)."""
    return plan_probe(parse_cyclictest_args(list(argv)), [0, 1]).args


def test_options_scripts_pass_are_mapped() -> None:
    args = plan("-p80", "-t1", "-n", "-i1000", "-l10000")
    assert args[args.index("--priority") + 1] == "80" and "--loops" in args
    assert args[args.index("--interval") + 1] == "1000us"
    assert args[args.index("--cpus") + 1] == "0"
    assert plan("-m", "-p", "90", "-t", "-a", "-q")[plan("-m", "-p", "90", "-t", "-a", "-q")
                                                      .index("--cpus") + 1] == "0,1"
    assert "--duration" in plan("-D", "10m", "-p1") and "10m" in plan("-D", "10m", "-p1")
    assert "--break-on" in plan("-p1", "-b", "100")
    assert plan("-p1", "--policy=rr")[plan("-p1", "--policy=rr").index("--policy") + 1] == "rr"
    assert "other" in plan("-l", "10")  # no -p: SCHED_OTHER, as cyclictest does
    assert "rel" in plan("-p1", "-r") and "itimer" in plan("-p1", "-x")
    assert "--no-pmqos" in plan("-p1", "--default-system")
    opts = parse_cyclictest_args(["-h", "400", "-N", "--json=x.json", "-H", "50", "-mq"])
    assert opts.values["histogram"] == "400" and opts.values["json"] == "x.json"
    assert {"nsecs", "mlock", "quiet"} <= opts.flags


@pytest.mark.parametrize("argv, name", [
    (["--smi"], "--smi"), (["-F", "/tmp/f"], "-F"), (["--laptop"], "--laptop"),
    (["-p1", "-t2", "-d", "100"], "-d 100"), (["-p1", "-t9"], "-t 9"),
    (["--policy=batch"], "--policy batch"), (["--what"], "--what"), (["-p", "120"], "-p 120"),
])
def test_options_it_cannot_honour_are_refused_by_name(argv: list[str], name: str) -> None:
    with pytest.raises(CyclictestUsage, match=re.escape(name)):
        plan(*argv)


def test_runs_and_prints_what_cyclictest_would(tmp_path: Path, run_cli) -> None:  # type: ignore
    db = f"sqlite:///{tmp_path / 'c.db'}"
    done = run_cli("cyclictest", "-p1", "-t1", "-n", "-i1000", "-l500", "--db", db)
    assert done.returncode == 0, done.stderr
    lines = [x for x in done.stdout.splitlines() if x.startswith("T:")]
    assert len(lines) == 1 and T_LINE.match(lines[0]) and " C:    500 " in lines[0]
    assert done.stderr.count("rtbench cyclictest: measured by rtprobe") == 1
    (tmp_path / "out.txt").write_text(done.stdout)
    again = importers()["cyclictest"].read((tmp_path / "out.txt").read_bytes(), "out.txt")
    assert again[0].scenarios[0].measurements[0].series[0].count == 500
    shown = run_cli("show", "1", "--db", db)
    assert shown.returncode == 0 and "cyclictest" in shown.stdout


def test_histogram_block_and_json_file(tmp_path: Path, run_cli) -> None:  # type: ignore
    db = f"sqlite:///{tmp_path / 'c.db'}"
    out = tmp_path / "ct.json"
    done = run_cli("cyclictest", "-m", "-p1", "-t", "-q", "-i1000", "-l300", "-h", "50",
                   f"--json={out}", "--db", db)
    assert done.returncode == 0, done.stderr
    assert "# Histogram" in done.stdout and "# Max Latencies:" in done.stdout
    assert not any(x.startswith("T:") for x in done.stdout.splitlines())  # -q with -h
    (tmp_path / "h.txt").write_text(done.stdout)
    text_run = importers()["cyclictest"].read((tmp_path / "h.txt").read_bytes(), "h.txt")[0]
    doc = json.loads(out.read_text())
    assert doc["num_threads"] == len(doc["thread"]) >= 1
    json_run = importers()["cyclictest-json"].read(out.read_bytes(), "ct.json")[0]
    for a, b in zip(text_run.scenarios[0].measurements[0].series,
                    json_run.scenarios[0].measurements[0].series, strict=True):
        assert a.count == b.count == 300 and a.hist == b.hist and a.max_ns == b.max_ns


def test_verbose_samples_in_nanoseconds(tmp_path: Path, run_cli) -> None:  # type: ignore
    db = f"sqlite:///{tmp_path / 'c.db'}"
    done = run_cli("cyclictest", "-p1", "-t1", "-v", "-N", "-l20", "--db", db)
    assert done.returncode == 0, done.stderr
    samples = re.findall(r"^\s*0:\s*(\d+):\s*(\d+)$", done.stdout, re.M)
    assert [int(c) for c, _ in samples] == list(range(20))


def test_refusal_exits_2_in_one_line(tmp_path: Path, run_cli) -> None:  # type: ignore
    done = run_cli("cyclictest", "-p1", "--smi", "--db", f"sqlite:///{tmp_path / 'c.db'}")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "--smi" in done.stderr


def stored(db: Path) -> list:  # type: ignore[type-arg]
    """Every run in the SQLite database db, oldest first."""
    from rtbench.store import Store

    store = Store.open(f"sqlite:///{db}", migrate=False)
    try:
        return [store.get_run(r.id) for r in reversed(store.list_runs())]
    finally:
        store.close()


def test_run_is_tagged_and_latest_skips_it(tmp_path: Path, run_cli) -> None:  # type: ignore
    db = tmp_path / "c.db"
    done = run_cli("cyclictest", "-p1", "-t1", "-l50", "--db", f"sqlite:///{db}")
    assert done.returncode == 0, done.stderr
    assert "run 1 stored (ok; tagged adhoc=cyclictest)" in done.stderr
    (run,) = stored(db)
    assert run.tags == {"adhoc": "cyclictest"} and run.suite == "cyclictest"
    assert run.source["front_end"] == "cyclictest" and run.source["argv"] == ["-p1", "-t1",
                                                                             "-l50"]
    assert run.tool_versions["owner"]  # the runner's owner tracking, as `rtbench run`
    latest = run_cli("show", "latest", "--db", f"sqlite:///{db}")
    assert latest.returncode == 2 and "tagged adhoc" in latest.stderr
    named = run_cli("show", "adhoc=cyclictest", "--db", f"sqlite:///{db}")
    assert named.returncode == 0 and "cyclictest" in named.stdout


def test_no_store_keeps_nothing(tmp_path: Path, run_cli, rtbench_env) -> None:  # type: ignore
    done = run_cli("cyclictest", "-p1", "-t1", "-l50", "--no-store")
    assert done.returncode == 0, done.stderr
    assert any(T_LINE.match(x) for x in done.stdout.splitlines())
    assert "run not stored (--no-store; ok)" in done.stderr
    default_db = Path(rtbench_env["XDG_DATA_HOME"]) / "rtbench" / "results.db"
    assert not default_db.exists() or stored(default_db) == []
    both = run_cli("cyclictest", "-l5", "--no-store", "--db", str(tmp_path / "x.db"))
    assert both.returncode == 2 and "contradict" in both.stderr


def test_t_lines_carry_the_measuring_threads_ids(tmp_path: Path, run_cli) -> None:  # type: ignore
    done = run_cli("cyclictest", "-p1", "-t2", "-l50", "--no-store")
    assert done.returncode == 0, done.stderr
    tids = [int(m.group(1)) for m in map(T_LINE.match, done.stdout.splitlines()) if m]
    assert len(tids) == 2 and all(t > 0 for t in tids) and tids[0] != tids[1]


def test_summary_lines_print_given_tids_and_the_analysis_means() -> None:
    plan = ProbePlan(args=[], threads=1, priority=80, interval_us=1000, nsecs=False,
                     quiet=False, verbose=False, hist_buckets=None, histofall=False,
                     histfile=None, json_file=None, need_raw=False)
    series = [{"index": 0, "count": 4, "min_ns": 1000, "max_ns": 9000, "sum_ns": 20000}]
    assert series_mean_ns(series[0]) == 5000.0
    assert series_mean_ns({"count": 0, "sum_ns": 0}) is None
    assert act_ns(0, {0: [1, 2, 7000]}, []) == 7000.0
    assert act_ns(0, {}, []) is None
    (line,) = summary_lines(plan, series, {0: 7000.0}, {0: 4321})
    assert line == ("T: 0 ( 4321) P:80 I:1000 C:      4 Min:      1 Act:    7 Avg:    5 "
                    "Max:       9")


def test_note_fits_the_width_and_t_lines_keep_cyclictests_layout(run_cli) -> None:  # type: ignore
    """rtbench's own note wraps to --width; the T: lines stay as cyclictest prints them
    (scripts and `rtbench import` parse them), whole and free of Python reprs."""
    done = run_cli("--width", "60", "cyclictest", "-p1", "-t1", "-l20", "--no-store")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("rtbench cyclictest: measured by rtprobe") == 1
    assert all(len(line.rstrip()) <= 60 for line in done.stderr.splitlines()), done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("T:")]
    assert T_LINE.match(line) and " C:     20 " in line
    repr_ = re.compile(r"\{'|\['|\bNone\b|\bTrue\b|\bFalse\b")
    assert not repr_.findall(done.stdout + done.stderr)
