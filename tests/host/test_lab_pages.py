"""The lab pages and their JSON (issue 26): the board x kernel matrix from run_cells,
the boards list, a board's history and combined histogram, and `rtbench plot --kind
history|combined`, over a small generated lab with its planted regression."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from pg_cluster import BACKENDS, migrated_url
from server_helpers import bundle

from bench.lab_data import REGRESSED_MAX_NS, WINDOWS, make_lab, make_run, write_lab
from rtbench.analysis.kernelver import kernel_sort_key
from rtbench.cli import main
from rtbench.server.app import create_app
from rtbench.store import Store

LAB = make_lab(6, 3, 2)
XSS = "<script>alert(1)</script>"


@pytest.fixture(params=BACKENDS)
def lab_client(request: pytest.FixtureRequest, tmp_path: Path):
    """(client, store) over a generated lab, one simulated run and a hostile host name."""
    store = Store.open(migrated_url(request.param, tmp_path))
    write_lab(store, LAB)
    store.add_bundles([make_run(make_lab(7, 3, 2), 6, 0, 0, simulated=True)])  # board-0006
    store.add_bundle(bundle(hostname=XSS))  # simulated, board named by its host
    with TestClient(create_app(store=store), raise_server_exceptions=False) as client:
        yield client, store
    store.close()


def test_matrix_json_keyed_by_board_with_states_and_deltas(lab_client) -> None:
    client, _ = lab_client
    data = client.get("/api/v1/matrix").json()
    assert data["simulated_included"] is False
    [suite] = data["suites"]
    assert suite["boards"] == [LAB.board_name(i) for i in range(6)]  # no simulated board
    assert suite["kernels"] == sorted(LAB.kernel_names, key=kernel_sort_key)
    cells = {(c["board"], c["kernel"]): c for c in suite["cells"]}
    first, regressed = LAB.kernel_names[0], LAB.planted_kernel
    hit = cells[(LAB.planted_board, regressed)]
    assert hit["state"] == "over threshold" and hit["worst_max_ns"] == REGRESSED_MAX_NS
    assert hit["previous_kernel"] == first and hit["delta_max_ns"] > 150_000
    assert hit["marks"] == []  # no regression board yet
    assert cells[(LAB.planted_board, first)]["previous_kernel"] is None
    others = [c for key, c in cells.items() if key[0] != LAB.planted_board]
    assert {c["state"] for c in others} == {"under threshold"}
    assert all(c["runs"] == 2 for c in suite["cells"])
    everything = client.get("/api/v1/matrix?simulated=1").json()
    boards = {b for s in everything["suites"] for b in s["boards"]}
    assert {"board-0006", XSS} <= boards
    # the synthetic run of server_helpers has a 50 us threshold and no p99.9
    smoke = next(s for s in everything["suites"] if s["suite"] == "smoke")
    assert smoke["cells"][0]["worst_p99_9_ns"] is None
    assert client.get("/api/v1/matrix?suite=nightly&board=board-0001").json()[
        "suites"][0]["boards"] == ["board-0001"]
    assert client.get("/api/v1/matrix?simulated=2").status_code == 422
    # boards come in pages: every board once, the planted one on its page
    seen = []
    for page in (1, 2, 3):
        part = client.get(f"/api/v1/matrix?per_page=2&page={page}").json()
        assert part["pages"] == 3 and part["boards"] == 6
        seen += part["suites"][0]["boards"]
    assert seen == [LAB.board_name(i) for i in range(6)]
    assert client.get("/api/v1/matrix?per_page=2&page=4").json()["suites"] == []


def test_matrix_page_colours_and_escapes(lab_client) -> None:
    client, _ = lab_client
    page = client.get("/matrix").text
    assert page.count('class="n over"') == 2  # the planted board on its last two kernels
    assert f'data-board="{LAB.planted_board}"' in page and "no threshold" in page
    assert page.index(">6.6.0-rt15<") < page.index(">6.12.0-rt3<")
    assert XSS not in client.get("/matrix?simulated=1").text
    assert "&lt;script&gt;" in client.get("/matrix?simulated=1").text


def test_boards_and_history(lab_client) -> None:
    client, _ = lab_client
    boards = client.get("/api/v1/boards").json()["boards"]
    assert [b["board"] for b in boards] == [LAB.board_name(i) for i in range(6)]
    assert boards[0]["runs"] == 6 and boards[0]["last_kernel"] == LAB.kernel_names[-1]
    assert len(client.get("/api/v1/boards?simulated=1").json()["boards"]) == 8
    history = client.get(f"/api/v1/boards/{LAB.planted_board}/history").json()
    assert [c["cell"] for c in history["cells"]] == ["idle / cyclic / cpu0",
                                                      "idle / cyclic / cpu1"]
    cpu0 = history["cells"][0]
    assert [k["kernel"] for k in cpu0["kernel_changes"]] == list(LAB.kernel_names)
    assert cpu0["thresholds_ns"] == [100_000]
    maxes = [r["max_ns"] for r in cpu0["runs"]]
    assert maxes[:2] != [REGRESSED_MAX_NS] * 2 and maxes[2:] == [REGRESSED_MAX_NS] * 4
    # the regressed thread has a 180 us sample in each of its WINDOWS windows of 100 s
    assert cpu0["runs"][-1]["exceedances_per_hour"] == 36.0 * WINDOWS
    assert client.get("/api/v1/boards/board-0006/history").json()["cells"] == []
    assert len(client.get("/api/v1/boards/board-0006/history?simulated=1").json()[
        "cells"]) == 2
    assert client.get("/api/v1/boards/nope/history").status_code == 404
    page = client.get(f"/boards/{LAB.planted_board}").text
    assert page.count('<section class="history"') == 2 and "kernel-change" in page
    assert 'class="threshold"' in page and 'class="combined"' in page
    assert client.get("/boards/nope").status_code == 404
    assert "&lt;script&gt;" in client.get("/boards?simulated=1").text


def test_history_draws_the_newest_runs_unless_all(lab_client) -> None:
    client, _ = lab_client
    url = f"/api/v1/boards/{LAB.planted_board}/history"
    every = client.get(url).json()
    assert every["newest_runs"] == 365 and len(every["cells"][0]["runs"]) == 6
    assert client.get(url + "?runs=all").json()["cells"] == every["cells"]
    newest = client.get(url + "?runs=2").json()
    assert newest["newest_runs"] == 2
    for cell, whole in zip(newest["cells"], every["cells"], strict=True):
        assert cell["runs"] == whole["runs"][-2:]
        assert [k["kernel"] for k in cell["kernel_changes"]] == [LAB.kernel_names[-1]]
    assert client.get(url + "?runs=0").status_code == 422
    assert client.get(url + "?runs=some").status_code == 422
    page = client.get(f"/boards/{LAB.planted_board}?runs=2").text
    assert page.count("<summary>2 runs</summary>") == 2
    assert 'id="all-runs" href="?runs=all' in page
    assert "<summary>6 runs</summary>" in client.get(
        f"/boards/{LAB.planted_board}?runs=all").text


def test_board_page_lists_the_newest_runs_unless_all(lab_client) -> None:
    client, _ = lab_client
    url = f"/boards/{LAB.planted_board}"
    whole = client.get(url).text  # 6 runs: under the default bound, every one listed
    assert 'class="all-rows"' not in whole and whole.count('<td><a href="/runs/') == 12
    page = client.get(url + "?table=2").text
    assert page.count("<summary>6 runs</summary>") == 2  # the plot still draws all 6
    assert page.count('<td><a href="/runs/') == 4  # 2 rows a cell, the newest
    assert page.count("The newest 2 of these 6 runs") == 2
    assert 'class="all-rows" href="?runs=365&amp;table=all' in page
    history = client.get(f"/api/v1/boards/{LAB.planted_board}/history").json()
    newest = [r["run_id"] for r in history["cells"][0]["runs"]][-2:]
    first = page.index('<section class="history"')
    rows = page[first:page.index("</table>", first)]
    assert [f'<td><a href="/runs/{i}">' in rows for i in newest] == [True, True]
    listed = client.get(url + "?table=all").text
    assert listed == whole.replace('name="table" value="30"', 'name="table" value="all"'
                                   ).replace("table=30", "table=all")
    assert client.get(url + "?table=0").status_code == 422


def test_non_rt_policy_runs_only_when_asked(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'p.db'}") as store:
        lab = make_lab(1, 2, 1)
        store.add_bundles([make_run(lab, 0, 0, 0), make_run(lab, 0, 1, 0, policy="other")])
        client = TestClient(create_app(store=store))
        runs = client.get("/api/v1/boards/board-0000/history").json()["cells"][0]["runs"]
        assert [r["policy"] for r in runs] == ["fifo"]
        runs = client.get("/api/v1/boards/board-0000/history?all_policies=1").json()[
            "cells"][0]["runs"]
        assert [r["policy"] for r in runs] == ["fifo", "other"]


def test_plot_history_and_combined(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    with Store.open(url) as store:
        write_lab(store, make_lab(2, 2, 2))
    cli = CliRunner()
    for kind, extra in (("history", ["--suite", "nightly"]), ("combined", ["--last", "3"])):
        out = tmp_path / f"{kind}.svg"
        done = cli.invoke(main, ["plot", "--kind", kind, "--board", "board-0001", *extra,
                                 "-o", str(out), "--db", url])
        assert done.exit_code == 0, done.output
        assert out.read_text().count("<svg") == 1
    for args in (["--kind", "history"], ["--kind", "history", "--board", "nope"],
                 ["latest", "--kind", "combined", "--board", "board-0001"],
                 ["latest", "--kind", "hist", "--board", "board-0001"]):
        done = cli.invoke(main, ["plot", *args, "-o", str(tmp_path / "x.svg"), "--db", url])
        assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1, args
    assert json.loads(cli.invoke(main, ["ls", "--json", "--limit", "1", "--db", url]
                                 ).output)[0]["board"] == "board-0001"
