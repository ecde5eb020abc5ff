"""The regression board: each stored run of a board checked against that board's
baseline (a tagged run, else the previous kernel in version order) with the regression
gate; the planted regression of bench/lab_data.py found on the board that has it and
on no other, on SQLite and PostgreSQL, through the store, the API, the page, an
upload (with its webhook), `rtbench tag ... baseline`, a browser and schemathesis."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from explain_helpers import cli
from fastapi.testclient import TestClient
from pg_cluster import BACKENDS, cluster, migrated_url
from server_helpers import free_port
from test_webhooks import Receiver

from bench.lab_data import Lab, make_lab, make_run, write_lab
from rtbench.analysis.boardcheck import PREVIOUS_KERNEL, TAGGED, Candidate, choose_baseline
from rtbench.analysis.openregs import open_regressions
from rtbench.interop.runjson import dumps
from rtbench.regress.board import RunCache, baseline_candidates, checks_of, recheck
from rtbench.server.app import create_app
from rtbench.server.views.lab import regression_marks
from rtbench.server.webhooks import Dispatcher, Hook
from rtbench.store import Store
from rtbench.store.regressions import (
    RegressionRow,
    board_checks,
    board_runs,
    cell_marks,
    list_checks,
    open_checks,
    outcome_counts,
)
from rtbench.store.tokens import create_token
from tests.parts import require_part

LAB = (8, 3, 2)  # boards x kernels x runs: the planted regression on board 4 from kernel 1


def at(hour: int) -> datetime:
    """A start time."""
    return datetime(2026, 1, 1, hour, tzinfo=timezone.utc)


def test_previous_kernel_is_chosen_in_version_order() -> None:
    runs = [Candidate(1, "6.6.0-rt15", at(1), {}, False),
            Candidate(2, "6.1.0-rt5", at(2), {}, False),
            Candidate(3, "6.6.0-rt15", at(3), {}, False),
            Candidate(4, "6.6.0-rt15", at(4), {}, True)]  # simulated: never a baseline
    base = choose_baseline("6.12.0-rt3", False, runs)
    assert base is not None and (base.kind, base.kernel, base.run_ids) == \
        (PREVIOUS_KERNEL, "6.6.0-rt15", (1, 3))
    assert choose_baseline("6.1.0-rt5", False, runs) is None  # the first kernel: none
    tagged = runs + [Candidate(5, "6.1.0-rt5", at(5), {"baseline": "yes"}, False)]
    base = choose_baseline("6.12.0-rt3", False, tagged)
    assert base is not None and (base.kind, base.run_ids) == (TAGGED, (5,))


@pytest.fixture(scope="module", params=BACKENDS)
def lab_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[str, Lab]]:
    """A small generated lab, every run checked."""
    url = migrated_url(request.param, tmp_path_factory.mktemp("lab"))
    lab = make_lab(*LAB)
    with Store.open(url) as store:
        write_lab(store, lab)
        recheck(store)
    yield url, lab


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_baseline_read_narrowly_is_the_one_of_the_whole_history(
        backend: str, tmp_path: Path) -> None:
    # checks_of reads a board's tagged runs, else its kernels and the newest runs of the
    # previous one; choose_baseline over the board's whole history must pick the same
    rng = random.Random(5)
    lab = make_lab(1, 5, 1)
    kernels = ["6.1.0-rt5", "6.6.0-rt1", "6.12.0-rt3", "6.13.0", "6.18.0-rt1", "6.6.0"]
    runs = []
    for n in range(60):
        run = make_run(lab, 0, 0, 0)
        tags = {"baseline": "yes"} if n > 40 and rng.random() < 0.1 else \
            {"note": "baseline"} if rng.random() < 0.1 else {}  # a value is not the tag
        runs.append(replace(run, kernel=rng.choice(kernels), simulated=rng.random() < 0.3,
                            started_at=at(0) + timedelta(minutes=rng.randrange(0, 30)),
                            tags=tags, uid=uuid.UUID(int=rng.getrandbits(128)).hex))
    with Store.open(migrated_url(backend, tmp_path)) as store:
        ids = store.add_bundles(runs)
        whole = board_runs(store, lab.board_name(0), runs[0].suite)
        decided = 0
        for run_id in ids:
            run = store.get_run(run_id, parts={})
            everything = [Candidate(r.run_id, r.kernel, r.started_at, r.tags, r.simulated)
                          for r in whole if r.run_id != run_id]
            expected = choose_baseline(run.kernel, run.simulated, everything)
            with store.transaction("read the candidates") as conn:
                found = baseline_candidates(conn, run)
            assert choose_baseline(run.kernel, run.simulated, found) == expected, run_id
            decided += expected is not None
    assert 0 < decided < len(ids)


def test_the_planted_regression_is_found_where_it_starts_and_nowhere_else(
        lab_db: tuple[str, Lab]) -> None:
    url, lab = lab_db
    with Store.open(url) as store:
        found = list_checks(store)
        counts = outcome_counts(store)
        marks = cell_marks(store, "nightly")
    assert {(r.board, r.kernel, r.metric) for r in found} == \
        {(lab.planted_board, lab.planted_kernel, "max")}
    assert len(found) == LAB[2]  # each run of that kernel; the next kernel is no jump
    row = found[0]
    assert row.baseline_kernel == lab.kernel_names[lab.regressed_from - 1]
    assert row.baseline_kind == PREVIOUS_KERNEL and row.value == 180_000
    assert row.baseline_value is not None and row.baseline_value < 25_000
    # runs without per-window data cannot show "no regression": the rest is undecided
    assert {r.outcome for r in found} <= {"suspected", "confirmed"}
    assert counts["inconclusive"] > 0 or counts["no regression"] > 0
    # the second run of the kernel confirms it (both runs' tails far beyond p < 1e-6)
    assert [r.outcome for r in found] == ["confirmed", "suspected"]
    assert marks[("nightly", lab.planted_board, lab.planted_kernel)] == "confirmed"
    assert [k for k, v in marks.items() if v in ("confirmed", "suspected")] == \
        [("nightly", lab.planted_board, lab.planted_kernel)]


def test_checks_of_reads_the_stored_checks_without_writing(lab_db: tuple[str, Lab]
                                                            ) -> None:
    url, _ = lab_db
    with Store.open(url) as store:
        before = outcome_counts(store)
        stored = list_checks(store)[0]
        cache = RunCache(store)
        for _ in range(2):  # the second time the baseline runs come from the cache
            cache.forget(stored.run_id)
            rows = checks_of(store, stored.run_id, cache)
            assert [(r.metric, r.value, r.baseline_value) for r in rows
                    if r.outcome in ("confirmed", "suspected")] == \
                [(stored.metric, stored.value, stored.baseline_value)]
        assert outcome_counts(store) == before


def test_open_checks_say_what_every_check_of_the_board_says(lab_db: tuple[str, Lab]
                                                            ) -> None:
    # the board page and the alerts read only the keys that ever held a regression,
    # from their first one on: the same open regressions as the board's whole table
    url, lab = lab_db
    with Store.open(url) as store:
        for board in range(lab.boards):
            name = lab.board_name(board)
            narrow = open_regressions(open_checks(store, name))
            assert narrow == open_regressions(board_checks(store, name)), name
            assert bool(narrow) == (name == lab.planted_board)
            if narrow:  # a key that held none is not read
                held = {(r.suite, r.cell, r.metric) for r in narrow}
                assert {(c.suite, c.cell, c.metric) for c in open_checks(store, name)} \
                    == held


def test_regression_marks_are_read_once_and_only_for_the_drawn_runs(
        lab_db: tuple[str, Lab]) -> None:
    # one query for both states (three list_checks before: "regression", then each
    # state again), the same marks; since= leaves out the runs a history does not draw
    url, lab = lab_db
    with Store.open(url) as store:
        flagged = list_checks(store, board=lab.planted_board)  # newest first
        expected: dict[tuple[str, str], list[tuple[int, str]]] = {}
        for row in flagged:
            expected.setdefault((row.suite, row.cell.split(" / ")[0]), []).append(
                (row.run_id, row.outcome))
        assert regression_marks(store, lab.planted_board, None) == expected
        assert regression_marks(store, lab.planted_board, "weekly") == {}
        assert regression_marks(store, lab.board_name(0), None) == {}
        newest = flagged[0]
        assert regression_marks(store, lab.planted_board, None,
                                since=newest.started_at) == \
            {(newest.suite, newest.cell.split(" / ")[0]): [(newest.run_id, newest.outcome)]}
        page = TestClient(create_app(store=store)).get(f"/boards/{lab.planted_board}").text
        assert page.count('class="regression confirmed"') == 2  # one per thread drawn
        assert page.count('class="regression suspected"') == 2


def test_api_and_page_list_it_with_filters(lab_db: tuple[str, Lab]) -> None:
    url, lab = lab_db
    with Store.open(url) as store, TestClient(create_app(store=store)) as client:
        data = client.get("/api/v1/regressions").json()
        (group,) = data["regressions"]
        assert (group["board"], group["kernel"], group["metric"], group["runs"]) == \
            (lab.planted_board, lab.planted_kernel, "max", LAB[2])
        assert group["baseline"]["kernel"] == lab.kernel_names[lab.regressed_from - 1]
        assert group["value"] == 180_000 and group["rel"] > 5
        other = lab.board_name(0)
        assert client.get(f"/api/v1/regressions?board={other}").json()["regressions"] == []
        assert client.get("/api/v1/regressions?suite=weekly").json()["regressions"] == []
        assert client.get("/api/v1/regressions?since=2030-01-01").json()["regressions"] == []
        undecided = client.get(f"/api/v1/regressions?board={other}&outcome=inconclusive")
        assert undecided.json()["regressions"] and all(
            g["outcome"] == "inconclusive" for g in undecided.json()["regressions"])
        assert client.get("/api/v1/regressions?outcome=pass").status_code == 422
        assert client.get("/api/v1/regressions?since=yesterday").status_code == 422
        page = client.get("/regressions")
        assert page.status_code == 200
        table = page.text.split('<table id="regressions">')[1].split("</table>")[0]
        assert lab.planted_board in table and lab.planted_kernel in table
        assert all(lab.board_name(b) not in table for b in range(LAB[0])
                   if b != lab.regressed_board)
        assert "180.0" in table


def test_board_page_matrix_and_history_show_the_open_regression(
        lab_db: tuple[str, Lab]) -> None:
    url, lab = lab_db
    with Store.open(url) as store, TestClient(create_app(store=store)) as client:
        page = client.get(f"/boards/{lab.planted_board}")
        table = page.text.split('<table id="open-regressions">')[1].split("</table>")[0]
        assert "confirmed" in table and "max" in table and lab.planted_kernel in table
        other = client.get(f"/boards/{lab.board_name(0)}").text
        assert "No regression is open on this board" in other
        history = client.get(f"/api/v1/boards/{lab.planted_board}/history").json()
        (found,) = history["open_regressions"]
        assert (found["state"], found["metric"], found["kernel"]) == \
            ("confirmed", "max", lab.planted_kernel)
        assert found["first_run"] == found["runs"][0] and found["confirmed_run"] \
            == found["runs"][-1] and len(found["runs"]) == LAB[2]
        matrix = client.get("/api/v1/matrix").json()
        marked = {(c["board"], c["kernel"]): c["marks"] for s in matrix["suites"]
                  for c in s["cells"] if c["marks"]}
        assert marked == {(lab.planted_board, lab.planted_kernel): ["confirmed regression"]}
        recent = client.get("/api/v1/matrix?span=runs&last=1").json()
        cells = [c for s in recent["suites"] for c in s["cells"]]
        assert recent["span"] == {"kind": "runs", "last": 1}
        assert all(c["runs"] == 1 for c in cells) and len(cells) == LAB[0] * LAB[1]
        # the lab's runs are an hour apart: one night before the newest holds them all
        nights = client.get("/api/v1/matrix?span=nights&last=1").json()
        assert [c["runs"] for s in nights["suites"] for c in s["cells"]] == \
            [c["runs"] for s in matrix["suites"] for c in s["cells"]]
        html = client.get("/matrix?span=runs&last=1")
        assert html.status_code == 200 and "the last 1" in html.text
        assert client.get("/api/v1/matrix?span=weeks").status_code == 422


def test_an_upload_is_checked_and_raises_the_regression_webhook(tmp_path: Path) -> None:
    receiver = Receiver([])
    lab = make_lab(2, 2, 1)
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    hooks = Dispatcher(store, [Hook(receiver.url, b"k", ("regression_suspected",))],
                       first_delay_s=0.05)
    token = create_token(store, "ci")
    app = create_app(store=store, webhooks=hooks)
    with TestClient(app) as client:
        for kernel in range(2):
            for board in range(2):
                answer = client.post("/api/v1/runs", content=dumps(make_run(
                    lab, board, kernel, 0)), headers={"Authorization": f"Bearer {token}"})
                assert answer.status_code == 201
        app.state.checker.wait()
        assert hooks.wait_idle(10.0)
        (group,) = client.get("/api/v1/regressions").json()["regressions"]
    assert group["board"] == lab.planted_board
    # one run of the new kernel: suspected (confirmation needs more runs; test_alerts.py)
    (event,) = [json.loads(body) for _, body in receiver.received]
    assert (event["event"], event["board"], event["kernel"], event["metric"],
            event["state"]) == \
        ("regression_suspected", lab.planted_board, lab.planted_kernel, "max", "suspected")
    hooks.stop()
    receiver.close()
    store.close()


def test_an_upload_is_checked_as_a_recheck_from_the_store_would(tmp_path: Path) -> None:
    # the server checks an upload with the scenarios it was sent (only the run's row is
    # read back): the checks must be those of the run as read from the store
    lab = make_lab(2, 3, 2)
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    token = create_token(store, "ci")
    app = create_app(store=store)
    ids = []
    with TestClient(app) as client:
        for kernel in range(3):
            for run in range(2):
                for board in range(2):
                    sent = make_run(lab, board, kernel, run)
                    if board == 0:
                        sent = replace(sent, board=None)  # the store names the board
                    answer = client.post("/api/v1/runs", content=dumps(sent),
                                         headers={"Authorization": f"Bearer {token}"})
                    assert answer.status_code == 201
                    ids.append(answer.json()["id"])
        app.state.checker.wait()
    assert app.state.checker.failures == []

    def key(row: RegressionRow) -> tuple[object, ...]:
        return (row.run_id, row.cell, row.metric, row.outcome, row.reason, row.board,
                row.kernel, row.baseline_kind, row.baseline_kernel, row.baseline_runs,
                row.baseline_value, row.value, row.rel, row.started_at)
    stored = sorted(key(r) for r in list_checks(store, outcome=None))
    fresh = sorted(key(r) for run_id in ids for r in checks_of(store, run_id, RunCache(store)))
    assert stored == fresh
    assert len(stored) > 0 and any(k[3] in ("confirmed", "suspected") for k in stored)
    store.close()


def test_tagging_a_baseline_checks_the_board_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    lab = make_lab(2, 3, 1)  # board 1 regresses from kernel 1 on
    with Store.open(url) as store:
        ids = {(k, b): store.add_bundle(make_run(lab, b, k, 0))[0]
               for k in range(3) for b in range(2)}
        recheck(store)
        before = {(r.run_id, r.kernel) for r in list_checks(store)}
    assert before == {(ids[(1, 1)], lab.kernel_names[1])}
    done = cli("tag", str(ids[(0, 1)]), "baseline=yes", "--db", url)
    assert done.exit_code == 0 and "3 runs of board" in done.output
    with Store.open(url) as store:
        after = list_checks(store, board=lab.planted_board)
    # against the tagged kernel-0 run both regressed kernels are regressions now
    assert {(r.kernel, r.baseline_kind) for r in after} == \
        {(lab.kernel_names[1], TAGGED), (lab.kernel_names[2], TAGGED)}


def test_a_local_import_is_checked(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    lab = make_lab(2, 2, 1)
    for kernel in range(2):
        path = tmp_path / f"k{kernel}.json"
        path.write_text(dumps(make_run(lab, 1, kernel, 0)))
        assert cli("import", str(path), "--format", "json", "--db", url).exit_code == 0
    with Store.open(url) as store:
        (row,) = list_checks(store)
    assert (row.board, row.kernel) == (lab.planted_board, lab.planted_kernel)


@pytest.fixture(scope="module")
def live_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Lab]]:
    """A running `rtbench serve` over PostgreSQL holding a checked small lab."""
    url = cluster().fresh_database()
    lab = make_lab(*LAB)
    with Store.open(url) as store:
        write_lab(store, lab)
        recheck(store)
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "rtbench", "serve", "--db", url,
                                 "--bind", f"127.0.0.1:{port}"], stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail(f"rtbench serve did not start: {log.read_text()}")
    yield base, lab
    proc.terminate()
    proc.wait(20)
    assert "Traceback" not in log.read_text()


@pytest.mark.browser
def test_regressions_page_in_a_browser(live_lab: tuple[str, Lab], tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from test_server_live import _driver

    base, lab = live_lab
    shots = Path(os.environ.get("RTBENCH_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    driver = _driver(tmp_path)
    try:
        driver.get(f"{base}/regressions")
        driver.save_screenshot(str(shots / "regressions.png"))
        rows = driver.find_elements(By.CSS_SELECTOR, "#regressions tr.bad")
        assert len(rows) == 1
        cells = [td.text for td in rows[0].find_elements(By.TAG_NAME, "td")]
        assert cells[0] == lab.planted_board and cells[6] == lab.planted_kernel
        assert cells[3] == "max" and "→ 180.0" in cells[4]
    finally:
        driver.quit()
    assert (shots / "regressions.png").stat().st_size > 1000


def test_schemathesis_on_the_regressions_endpoint(live_lab: tuple[str, Lab],
                                                  tmp_path: Path) -> None:
    base, _ = live_lab
    tool = Path(sys.executable).parent / "schemathesis"
    if not tool.exists():
        require_part("python-dev", "schemathesis is not installed (pip install -e '.[dev]')")
    done = subprocess.run(
        [str(tool), "run", f"{base}/api/v1/openapi.json", "--include-path",
         "/api/v1/regressions", "--checks",
         "not_a_server_error,status_code_conformance,content_type_conformance",
         "--max-examples", "20", "--phases", "examples,coverage,fuzzing",
         "--max-time", "10", "--suppress-health-check", "all"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
        env=dict(os.environ, SCHEMATHESIS_HOOKS=""))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "1 selected" in done.stdout, done.stdout[-4000:]  # the one endpoint, tested
