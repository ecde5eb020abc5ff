"""Issue 37 item 4: markers and honesty in lists -- short run, traced, emulated and
simulated from one function (rtbench/report/run_markers.py) in `rtbench ls`, the
server's runs list and API, the matrix, a board's page and a run's page; start dates
outside [2000-01-01, now + 1 day] refused on import and upload with one line; a board
without a host name named by its target; regression rows that list each run with its
value; a run page that says the regression board flagged it."""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime, timedelta, timezone
from html import escape
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from server_helpers import bundle

from rtbench.bundle import board_of, start_problem
from rtbench.cli import main
from rtbench.interop.runjson import dumps
from rtbench.regress.board import recheck
from rtbench.report.run_markers import run_markers
from rtbench.server.app import create_app
from rtbench.store import Store
from rtbench.store.tokens import create_token

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from lab_data import make_lab, write_lab  # noqa: E402

MARKERS = ["SHORT RUN (10 % of the suite's length)", "traced", "emulated", "simulated"]


def test_one_function_names_every_marker() -> None:
    assert run_markers({"scale": 0.1, "traced": True, "emulated": True,
                        "simulated": True}) == MARKERS
    assert run_markers({"scale": 1.0, "simulated": False}) == []
    assert run_markers({"scale": 0.125}) == ["SHORT RUN (12.5 % of the suite's length)"]
    # emulated: the column where set, else the stored sysinfo's virtualization
    assert run_markers({"sysinfo": {"virtualization": "tcg"}}) == ["emulated"]
    assert run_markers({"emulated": False, "sysinfo": {"virtualization": "tcg"}}) == []
    assert run_markers({"sysinfo": {"virtualization": "kvm"}}) == []
    detail = bundle()
    detail.simulated = False
    detail.scale = 0.5
    detail.scenarios[0].measurements[0].trace_info = {"events": []}
    assert run_markers(detail) == ["SHORT RUN (50 % of the suite's length)", "traced"]


def marked_runs() -> list:
    """Four runs of board 'marked', each carrying one marker, and a plain one."""
    runs = [bundle(hostname="marked") for _ in range(5)]
    for run in runs:  # the synthetic bundle is a simulated short run: these are not
        run.simulated, run.scale = False, 1.0
        for scenario in run.scenarios:
            for m in scenario.measurements:
                m.simulated = False
    short, traced, emulated, simulated, plain = runs
    short.scale = 0.1
    traced.scenarios[0].measurements[0].trace_info = {"events": ["sched_switch"]}
    emulated.sysinfo = {**emulated.sysinfo, "virtualization": "tcg"}
    simulated.simulated = True
    return runs


@pytest.fixture(scope="module")
def marked_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database holding marked_runs() (ids 1..5) and a planted lab's regression."""
    url = f"sqlite:///{tmp_path_factory.mktemp('marks') / 'm.db'}"
    with Store.open(url) as store:
        for run in marked_runs():
            store.add_bundle(run)
        write_lab(store, make_lab(2, 2, 2))
        recheck(store)
    return url


def test_ls_and_its_json_show_the_markers(marked_db: str) -> None:
    done = CliRunner().invoke(main, ["ls", "--db", marked_db, "--limit", "100"],
                              env={"COLUMNS": "250"})
    assert done.exit_code == 0, done.output
    lines = {int(m.group(1)): line for line in done.output.splitlines()
             if (m := re.match(r"\s*│?\s*(\d+)\s", line))}
    for run_id, marker in enumerate(MARKERS, start=1):
        assert marker in lines[run_id], lines[run_id]
    assert not any(m in lines[5] for m in MARKERS)
    done = CliRunner().invoke(main, ["ls", "--db", marked_db, "--json", "--limit", "100"])
    by_id = {r["id"]: r for r in json.loads(done.output)}
    assert [by_id[i]["markers"] for i in range(1, 6)] == [[m] for m in MARKERS] + [[]]
    assert by_id[1]["scale"] == 0.1 and by_id[2]["traced"] and by_id[3]["emulated"]


def as_html(text: str) -> str:
    """text as Jinja2's autoescape writes it."""
    return escape(text).replace("&#x27;", "&#39;")


def test_server_lists_the_markers(marked_db: str) -> None:
    with Store.open(marked_db) as store, TestClient(create_app(store=store)) as client:
        api = {r["id"]: r for r in client.get("/api/v1/runs?per_page=100").json()["runs"]}
        assert [api[i]["markers"] for i in range(1, 6)] == [[m] for m in MARKERS] + [[]]
        page = client.get("/runs?per_page=100").text
        for run_id, marker in enumerate(MARKERS, start=1):
            row = re.search(rf'<tr[^>]*data-run="{run_id}">.*?</tr>', page, re.S)
            assert row and f'<small class="marker">{as_html(marker)}</small>' in row.group(0)
        matrix = client.get("/matrix?simulated=1&emulated=1").text
        for marker in MARKERS:
            assert f'<small class="marker">{as_html(marker)}</small>' in matrix
        cells = [c for suite in client.get("/api/v1/matrix?simulated=1&emulated=1"
                                           ).json()["suites"]
                 for c in suite["cells"]]
        [box] = [c for c in cells if c["board"] == "marked"]
        assert box["markers"] == MARKERS
        board = client.get("/boards/marked?simulated=1").text
        for marker in MARKERS:
            assert f">{as_html(marker)}</td>" in board
        assert "this run is:" in client.get("/runs/1").text
        assert as_html("SHORT RUN (10 % of the suite's length)") in client.get("/runs/1").text
        assert "this run is:" not in client.get("/runs/5").text


def test_regression_rows_list_each_run_and_the_run_page_says_so(marked_db: str) -> None:
    with Store.open(marked_db) as store, TestClient(create_app(store=store)) as client:
        groups = client.get("/api/v1/regressions").json()["regressions"]
        assert groups
        for group in groups:
            assert [rv["run_id"] for rv in group["run_values"]] == group["run_ids"]
            assert all(rv["value"] is not None for rv in group["run_values"])
        page = client.get("/regressions").text
        cells = re.findall(r'<td class="run-values">(.*?)</td>', page, re.S)
        assert cells and all(re.fullmatch(r'(<a href="/runs/\d+">\d+</a>: [0-9.,]+(, )?)+',
                                          c) for c in cells), cells
        flagged = groups[0]["run_ids"][0]
        text = client.get(f"/runs/{flagged}").text
        assert "The regression board flagged this run" in text
        assert groups[0]["cell"] in text
        assert "regression board flagged" not in client.get("/runs/5").text


@pytest.mark.parametrize(("started", "ok"), [
    (datetime(1970, 1, 1, tzinfo=timezone.utc), False),
    (datetime(1999, 12, 31, 23, 59, tzinfo=timezone.utc), False),
    (datetime(2000, 1, 1, tzinfo=timezone.utc), True),
    (datetime.now(timezone.utc) + timedelta(hours=20), True),
    (datetime.now(timezone.utc) + timedelta(days=2), False),
])
def test_a_start_outside_2000_to_tomorrow_is_refused(started: datetime, ok: bool,
                                                     tmp_path: Path) -> None:
    assert (start_problem(started, datetime.now(timezone.utc)) is None) == ok
    run = bundle()
    run.started_at = started
    path = tmp_path / "run.json"
    path.write_text(dumps(run))
    url = f"sqlite:///{tmp_path / 'd.db'}"
    done = CliRunner().invoke(main, ["import", str(path), "--db", url])
    with Store.open(url) as store:
        stored = store.list_runs()
        token = create_token(store, "t")
        with TestClient(create_app(store=store)) as client:
            answer = client.post("/api/v1/runs", content=dumps(run).encode(),
                                 headers={"Authorization": f"Bearer {token}"})
    if ok:
        assert done.exit_code == 0 and len(stored) == 1
        assert answer.status_code in (200, 201)
        return
    assert done.exit_code == 2 and stored == []
    [line] = done.output.strip().splitlines()
    assert "outside 2000-01-01 .." in line and "set the clock" in line
    assert answer.status_code == 422
    assert "run.started_at: started" in json.dumps(answer.json()), answer.json()


@pytest.mark.parametrize(("target", "hostname", "board"), [
    ("serial:///dev/ttyUSB0?baud=115200", "(none)", "serial-ttyUSB0"),
    ("serial:///dev/ttyS0", "", "serial-ttyS0"),
    ("local", "(none)", "local"),
    ("local", "box", "box"),
    ("import", "", "unknown"),
])
def test_a_board_without_a_host_name_is_named_by_its_target(target: str, hostname: str,
                                                             board: str) -> None:
    assert board_of(target, hostname) == board
