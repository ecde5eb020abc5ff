"""What a person sees: every command's output fits 60, 80 and 120 columns with every number
of the data whole, and no Python repr reaches a terminal or an HTML page.

The runs are stored once per module through the real CLI with --simulate (deterministic):
run 1 the default distribution, run 2 5 µs with a 111,600 µs spike every 97th sample
(overruns, large figures, wide intervals), run 3 a shifted distribution.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from explain_helpers import SUITE, simulated_runs
from fastapi.testclient import TestClient
from rich.cells import cell_len
from rich.console import Console

from rtbench.analysis.compare import view_of_run
from rtbench.analysis.measurement import run_stats
from rtbench.analysis.select import CellKey
from rtbench.analysis.verdict import verdict_of
from rtbench.cli import main
from rtbench.report import figures
from rtbench.report.compare_text import fmt_signed_us
from rtbench.report.format import fmt_count, fmt_us
from rtbench.report.live import LiveProgress
from rtbench.report.verdict import verdict_text
from rtbench.rtprobe.wire.records import StartRecord, WindowRecord
from rtbench.server.app import create_app
from rtbench.store import Store
from rtbench.store.tokens import list_tokens
from tests.cli_inprocess import run_in_process
from tests.conftest import REPO
from tests.host.test_preflight import UNTUNED

WIDTHS = (60, 80, 120)
COMMANDS = (
    ("ls",), ("show", "1"), ("show", "2"), ("compare", "1", "2"),
    ("compare", "1", "2", "3", "--pairs"),
    ("compare", "2", "ref:loongson2f"), ("advise", "1"), ("advise", "2", "--cycle", "1ms"),
    ("ref", "ls"), ("ref", "show", "loongson2f"), ("suites",), ("suites", "quick"),
    ("tag", "2", "--remove", "absent"), ("db", "path"), ("db", "migrate"),
    ("import", "--format", "help"), ("export", "--format", "help"), ("token", "list"),
)
# the commands that take no --db
NO_DB = ("ref", "suites", "preflight")
# A Python repr where a value should have been formatted for people.
REPR = re.compile(r"\{'|\['|\bNone\b|\bTrue\b|\bFalse\b")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, probe_path: Path) -> str:
    """The database URL of the three simulated runs (and an upload token)."""
    url = simulated_runs(tmp_path_factory.mktemp("present"), probe_path,
                         ["1", "2:const,lat=5us,spike=111600us,every=97",
                          "3:expo,min=3us,mean=4us"], duration="20s")
    done = CliRunner().invoke(main, ["token", "create", "lab-ci-uploads-of-the-nightly-builds",
                                     "--db", url], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return url


def rtbench(db: str, *args: str, width: int = 120) -> str:
    """The output of `rtbench --width W ARGS --db DB` (run in this process)."""
    argv = ["--width", str(width), *args]
    if args[0] not in NO_DB:
        argv += ["--db", db]
    done = CliRunner().invoke(main, argv, catch_exceptions=False, env={"COLUMNS": None})
    assert done.exit_code in (0, 1), done.output
    return done.output


def whole(number: str, text: str) -> bool:
    """Whether number appears in text as a whole figure (no digit, '.' or ',' glued on)."""
    return re.search(rf"(?<![\d.,]){re.escape(number)}(?![\d,]|\.\d)", text) is not None


def figures_of(db: str, command: tuple[str, ...]) -> set[str]:
    """The numbers of the data a command shows, formatted as it formats them."""
    out: set[str] = set()
    with Store.open(db) as store:
        if command[0] == "show":
            for ms in run_stats(store.get_run(int(command[1]))):
                s = ms.merged
                assert s is not None
                out |= {fmt_count(s.samples), fmt_us(s.min_ns), fmt_us(s.mean_ns),
                        fmt_us(s.max_ns), fmt_count(s.overruns)}
                out |= {fmt_us(s.pct(label)) for label in ("p99", "p99.9")} - {"-"}
        elif command[0] == "token":
            out |= {t.created_at.strftime("%Y-%m-%d %H:%M") for t in list_tokens(store)}
        elif command[0] == "ls":
            out |= {f"{r.worst_max_ns / 1000:,.1f}" for r in store.list_runs(limit=10)
                    if r.worst_max_ns is not None}
    if command[0] == "compare":
        data = json.loads(rtbench(db, *command, "--json"))
        for cell in data["cells"]:
            for diffs in cell["differences"]:
                for d in diffs:
                    for key in ("baseline_ns", "run_ns"):
                        if d[key] is not None:
                            out.add(fmt_us(d[key]))
                    if d["difference_ns"] is not None:
                        out.add(fmt_signed_us(d["difference_ns"]))
    if command[0] == "advise":
        data = json.loads(rtbench(db, *command, "--json"))
        out |= {fmt_us(c["observed_max_ns"]) for c in data["cells"]}
        out |= {str(c["windows"]) for c in data["cells"]}
    return out


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_table_fits_and_keeps_every_number_whole(db: str, command: tuple[str, ...]
                                                       ) -> None:
    numbers = figures_of(db, command)
    if command[0] in ("show", "ls", "compare", "advise", "token"):
        assert numbers, "the data holds figures to look for"
    for width in WIDTHS:
        # the database URL (a long temporary path) is one token no layout can break
        text = rtbench(db, *command, width=width).replace(db, "DB")
        for line in text.splitlines():
            assert cell_len(line.rstrip()) <= width, f"{width}: {line!r}"
        assert "…" not in text, f"{width}: a cut cell"
        missing = sorted(n for n in numbers if not whole(n, text))
        assert not missing, f"{' '.join(command)} at {width} columns lacks {missing}"


def test_the_big_figures_of_the_spiky_run_are_there(db: str) -> None:
    """The run whose cells once were cut at 80 columns ('111,600…')."""
    text = rtbench(db, "show", "2", width=80)
    assert whole("111,600.0", text)
    compare = rtbench(db, "compare", "1", "2", width=80)
    assert whole("111,600.0", compare)


def test_no_repr_in_any_command_output(db: str) -> None:
    for command in COMMANDS:
        text = rtbench(db, *command, width=80)
        assert not REPR.findall(text), f"{' '.join(command)}: {REPR.findall(text)}"


def test_no_repr_in_any_html_page(db: str, tmp_path: Path) -> None:
    pages = {}
    for run in ("1", "2"):
        out = tmp_path / f"run{run}.html"
        rtbench(db, "report", run, "-o", str(out))
        pages[out.name] = out.read_text()
    compare = tmp_path / "compare.html"
    rtbench(db, "compare", "1", "2", "ref:loongson2f", "-o", str(compare))
    pages[compare.name] = compare.read_text()
    with Store.open(db) as store, TestClient(create_app(store=store)) as client:
        for path in ("/runs", "/runs/1", "/runs/2", "/matrix", "/refs", "/compare?runs=1,2"):
            got = client.get(path)
            assert got.status_code == 200, path
            pages[path] = got.text
    for name, html in pages.items():
        text = re.sub(r"<script.*?</script>|<style.*?</style>|<svg.*?</svg>", "", html,
                      flags=re.S)
        text = re.sub(r"<[^>]+>", " ", text)
        assert not REPR.findall(text), f"{name}: {REPR.findall(text)}"


def test_simulated_figures_say_so(db: str, tmp_path: Path) -> None:
    out = tmp_path / "run1.html"
    rtbench(db, "report", "1", "-o", str(out))
    titles = re.findall(r"<svg.*?</svg>", out.read_text(), flags=re.S)
    assert titles and all("SIMULATED" in svg for svg in titles)
    figure = tmp_path / "sweep.svg"
    rtbench(db, "plot", "1", "--kind", "sweep", "-o", str(figure))
    assert "SIMULATED" in re.sub(r"<[^>]+>", "", figure.read_text())


def test_a_single_point_series_is_drawn_as_a_point(db: str) -> None:
    with Store.open(db) as store:
        view = view_of_run(store.get_run(1))
    fig = figures.build("sweep", [view], CellKey("", "cyclic", ""), "p50")
    (line,) = fig.axes[0].get_lines()
    assert len(line.get_xdata()) == 1
    assert line.get_linestyle() == "None" and line.get_marker() == "o"


def test_compare_caption_says_only_what_is_drawn(db: str, tmp_path: Path) -> None:
    measured = tmp_path / "measured.html"
    rtbench(db, "compare", "1", "2", "-o", str(measured))
    assert "dashed: published figures" not in measured.read_text()
    published = tmp_path / "published.html"
    rtbench(db, "compare", "2", "ref:loongson2f", "-o", str(published))
    assert "dashed: published figures" in published.read_text()


def _live_at(width: int) -> str:
    """The live display with two series of large figures, rendered width columns wide."""
    console = Console(record=True, width=width, force_terminal=False, file=io.StringIO())
    live = LiveProgress(console)
    live.suite_name, live.total = "quick", 8
    live.begin("busy-loop / cyclic-100us", 10.0)
    live.on_start(StartRecord(raw={}, test="cyclic", simulated=True, params={}, common={},
                              series=[{"index": 0, "label": "cpu0"},
                                      {"index": 1, "label": "cpu1"}],
                              sysinfo={}, t0_unix_ns=0, version="0.1.0"))
    for series in (0, 1):
        live.on_window(WindowRecord(series=series, index=1, warmup=False, start_ns=0,
                                    end_ns=10**9, count=1_234_567, min_ns=2_004,
                                    max_ns=111_600_000, sum_ns=6_172_835_000, overruns=12_345,
                                    exceed=[], hist_json="[]"))
    console.print(live.render())
    return console.export_text()


@pytest.mark.parametrize("width", WIDTHS)
def test_live_display_fits(width: int) -> None:
    text = _live_at(width)
    for line in text.splitlines():
        assert cell_len(line.rstrip()) <= width
    for figure in ("111,600.0", "2.004", "5.000", "12,345"):
        assert whole(figure, text), (width, figure, text)
    assert "…" not in text and "overru…" not in text


@pytest.mark.parametrize("width", WIDTHS)
def test_verdict_lines_hang_under_their_bullet(db: str, width: int) -> None:
    with Store.open(db) as store:
        run = store.get_run(2)
    console = Console(record=True, width=width, force_terminal=False, file=io.StringIO())
    console.print(verdict_text(verdict_of(run)))
    lines = console.export_text().splitlines()
    assert lines[0].startswith("verdict: ")
    for line in lines[1:]:
        # a continuation never starts at column 0 unless it starts a new item
        assert line.startswith((" ", "scenarios not as defined", "likely causes", "what to do",
                                "note: ")), line


def test_ascii_terminal_gets_us_and_whole_numbers(db: str) -> None:
    """A terminal whose encoding cannot print µ gets 'us' and ASCII tables, numbers whole."""
    env = dict(os.environ, PYTHONIOENCODING="ascii", COLUMNS="80", PYTHONPATH=str(REPO))
    for command in (("show", "2"), ("compare", "1", "2"), ("ls",)):
        done = subprocess.run([sys.executable, "-m", "rtbench", *command, "--db", db],
                              env=env, capture_output=True, timeout=120, check=False, cwd=REPO)
        assert done.returncode in (0, 1), done.stderr
        text = done.stdout.decode("ascii")  # raises on anything but ASCII
        assert "us" in text and "?" not in text.replace("(?)", "")
        for line in text.splitlines():
            assert len(line.rstrip()) <= 80, line
        missing = sorted(n for n in figures_of(db, command) if not whole(n, text))
        assert not missing, f"{' '.join(command)}: {missing}"


def fits(text: str, width: int) -> None:
    """Every line of text is at most width columns and no cell was cut."""
    for line in text.splitlines():
        assert cell_len(line.rstrip()) <= width, f"{width}: {line!r}"
    assert "…" not in text, f"{width}: a cut cell"


# a recorded untuned machine with large figures and a long command line
RECORDED_SYSINFO = {
    **UNTUNED, "rt_runtime_us": 950000, "rt_period_us": 1000000,
    "cmdline": "BOOT_IMAGE=/boot/vmlinuz-6.1.0-rt root=UUID=2dfcece1-0a1b-4c2d-9e8f "
               "ro quiet splash console=ttyS0,115200n8 isolcpus=2,3 nohz_full=2,3",
}


@pytest.fixture
def recorded_preflight(monkeypatch: pytest.MonkeyPatch, probe_path: Path) -> None:
    """`rtbench preflight` on this machine reads RECORDED_SYSINFO and 1.25 % steal."""
    from rtbench.targets import procstat
    from rtbench.targets.local import LocalTarget

    monkeypatch.setenv("RTBENCH_PROBE", str(probe_path))
    monkeypatch.setattr(LocalTarget, "sysinfo", lambda self: dict(RECORDED_SYSINFO))
    monkeypatch.setattr(procstat, "read_steal", lambda read_file: 0.0125)


def test_preflight_fits_and_keeps_every_value_whole(recorded_preflight: None) -> None:
    facts = json.loads(rtbench("", "preflight", "--json"))
    assert len(facts) == 10
    numbers = {n for fact in facts for n in re.findall(r"\d[\d,.]*\d|\d", str(fact["value"]))}
    assert {"950,000", "1,000,000", "1.25"} <= numbers, numbers
    for width in WIDTHS:
        text = rtbench("", "preflight", width=width)
        fits(text, width)
        missing = sorted(n for n in numbers if not whole(n, text))
        assert not missing, f"preflight at {width} columns lacks {missing}"
        assert not REPR.findall(text), REPR.findall(text)
        assert all(f["name"] in text for f in facts)


def _fleet_at(db: str, width: int) -> tuple[str, set[str]]:
    """The fleet's live table, summary table and problem lines for the stored runs (three
    boards) and one unreachable board, rendered width columns wide; and their figures."""
    from rtbench.analysis.fleet import board_summary
    from rtbench.report.fleet import FleetProgress, problems, summary_table
    from rtbench.run.events import BoardDone, BoardPhase

    with Store.open(db) as store:
        summaries = [board_summary(f"rack-0-board-{n}", "ok", 0, None, store.get_run(n))
                     for n in (1, 2, 3)]
    summaries.append(board_summary("rack-1-board-with-a-long-name", "unreachable", 3,
                                   "ssh: connect to host 10.0.0.9 port 22: timed out", None))
    console = Console(record=True, width=width, force_terminal=False, file=io.StringIO())
    progress = FleetProgress(console, [s.board for s in summaries])
    for s in summaries:
        progress(s.board, BoardPhase("connecting"))
        progress(s.board, BoardDone(s.board, s.run_id, s.status, s.exit_code, s.message))
    console.print(progress.render())
    console.print(summary_table("night-1", "cmp", summaries))
    for line in problems(summaries):
        console.print(line, markup=False, highlight=False)
    numbers = {fmt_us(ns) for s in summaries for sc in s.scenarios
               for ns in (sc.p999_ns, sc.max_ns)} - {"-"}
    return console.export_text(), numbers


@pytest.mark.parametrize("width", WIDTHS)
def test_fleet_tables_fit_and_keep_every_number_whole(db: str, width: int) -> None:
    text, numbers = _fleet_at(db, width)
    assert "111,600.0" in numbers
    fits(text, width)
    missing = sorted(n for n in numbers if not whole(n, text))
    assert not missing, f"fleet at {width} columns lacks {missing}"
    assert not REPR.findall(text), REPR.findall(text)
    assert "10.0.0.9" in text and "rack-1-board-with-a-long-name" in text


def test_plot_says_what_it_wrote_in_one_line(db: str, tmp_path: Path) -> None:
    for kind in ("hist", "timeline", "ccdf", "sweep"):
        out = tmp_path / f"{kind}.svg"
        text = rtbench(db, "plot", "1", "2", "--kind", kind, "-o", str(out), width=60)
        assert out.stat().st_size > 0
        (line,) = text.replace(str(out), "FILE").splitlines()
        assert line.startswith(f"{kind}: FILE (") and cell_len(line) <= 60, line
        assert not REPR.findall(line), line


def test_run_output_fits_and_keeps_every_number_whole(tmp_path: Path, probe_path: Path
                                                      ) -> None:
    """`rtbench run` of the spiky simulated run, once per width (its progress line, summary,
    load table and verdict)."""
    url = f"sqlite:///{tmp_path / 'run.db'}"
    suite = tmp_path / "cmp.toml"
    suite.write_text(SUITE.format(duration="20s"))
    env = dict(os.environ, RTBENCH_PROBE=str(probe_path), XDG_DATA_HOME=str(tmp_path / "data"),
               PYTHONPATH=str(REPO))
    env.pop("COLUMNS", None)
    for run_id, width in enumerate(WIDTHS, start=1):
        # in this process (tests/cli_inprocess.py): the output is the subject, not start-up
        done = run_in_process(["--width", str(width), "run", str(suite), "--db", url,
                               "--no-report", "--simulate",
                               "2:const,lat=5us,spike=111600us,every=97"], env, REPO,
                              timeout=120)
        assert done.returncode == 1, done.stderr  # the spikes cross the threshold
        text = done.stdout.replace(url, "DB")
        fits(text, width)
        numbers = figures_of(url, ("show", str(run_id)))
        assert "111,600.0" in numbers
        missing = sorted(n for n in numbers if not whole(n, text))
        assert not missing, f"run at {width} columns lacks {missing}"
        assert not REPR.findall(text), REPR.findall(text)


@pytest.mark.parametrize("width", WIDTHS)
def test_too_narrow_a_table_becomes_records_that_carry_their_verdicts(db: str, width: int
                                                                      ) -> None:
    """Issue 37: at 80 columns a 'continued' table separated each row from its verdict;
    now each cell is a block whose first line names it with its verdict."""
    with Store.open(db) as store:
        run = store.get_run(2)
        runs = store.list_runs(limit=10)
    show = rtbench(db, "show", "2", width=width)
    listed = rtbench(db, "ls", width=width)
    compared = rtbench(db, "compare", "1", "2", width=width)
    for text in (show, listed, compared):
        assert "(continued)" not in text
    summary = show[show.index("Run 2 · "):show.index("verdict: ")]
    records = "  samples: " in summary
    assert records == (width < 120), summary  # the summary table needs about 90 columns
    for sc in run.scenarios:
        for m in sc.measurements:
            if records:
                assert f"\n{sc.name} / {m.name}: {m.status}\n" in summary
    if "  started (UTC): " in listed:
        for r in runs:
            assert f"\nrun {r.id}: {r.status}" in listed
    if "  p99: baseline" in compared:
        heads = [line for line in compared.splitlines() if line.startswith("idle / ")]
        assert heads and all(": " in head for head in heads)
