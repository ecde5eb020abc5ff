"""The results server's API and pages in-process (FastAPI TestClient): uploads with
tokens, bad input, unknown ids, hostile query strings, escaping, a database that
goes down and comes back."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pg_cluster import BACKENDS, cluster, migrated_url
from server_helpers import bundle, bundle_text, checksum

from rtbench.server.app import create_app
from rtbench.store import Store
from rtbench.store.tokens import create_token, revoke_token


@pytest.fixture(params=BACKENDS)
def app_store(request: pytest.FixtureRequest, tmp_path: Path):
    """(client, store, token) over a fresh database of each backend."""
    store = Store.open(migrated_url(request.param, tmp_path))
    app = create_app(store=store, max_upload_bytes=2 * 1024 * 1024)
    token = create_token(store, "test")
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, store, token
    store.close()


def auth(token: str) -> dict[str, str]:
    """The Authorization header of a token."""
    return {"Authorization": f"Bearer {token}"}


def test_upload_idempotent_and_equal(app_store) -> None:
    client, store, token = app_store
    run = bundle(suite="nightly", tags={"ci": "1"})
    text = json.dumps(json.loads(bundle_text()) | {"uid": run.uid, "suite": "nightly",
                                                   "tags": {"ci": "1"}})
    first = client.post("/api/v1/runs", content=text, headers=auth(token))
    assert first.status_code == 201 and first.json()["created"] is True
    again = client.post("/api/v1/runs", content=text, headers=auth(token))
    assert again.status_code == 200 and again.json() == first.json() | {"created": False}
    stored = store.get_run(first.json()["id"])
    assert stored.suite == "nightly" and stored.tags == {"ci": "1"}
    body = client.get(f"/api/v1/runs/{stored.id}").json()
    assert body["uid"] == run.uid and body["schema"] == "rtbench-run/1"
    assert checksum(stored) == checksum(store.get_run(stored.id))


@pytest.mark.parametrize("header", [None, "Bearer nope", "Basic abc", "Bearer "])
def test_writes_need_a_valid_token(app_store, header: str | None) -> None:
    client, store, _ = app_store
    headers = {"Authorization": header} if header else {}
    answer = client.post("/api/v1/runs", content=bundle_text(), headers=headers)
    assert answer.status_code == 401 and "token" in answer.json()["error"]
    assert answer.headers["www-authenticate"] == "Bearer"
    assert store.list_runs() == []


def test_revoked_token_refused(app_store) -> None:
    client, store, token = app_store
    assert client.post("/api/v1/runs", content=bundle_text(),
                       headers=auth(token)).status_code == 201
    revoke_token(store, "test")
    assert client.post("/api/v1/runs", content=bundle_text(),
                       headers=auth(token)).status_code == 401
    assert len(store.list_runs()) == 1


def _doc() -> dict:
    """A valid upload as a dict."""
    return json.loads(bundle_text())


def _bad_counts() -> str:
    doc = _doc()
    doc["scenarios"][0]["measurements"][0]["series"][0]["count"] += 1
    return json.dumps(doc)


def _unknown_field() -> str:
    doc = _doc()
    doc["surprise"] = 1
    return json.dumps(doc)


def _wrong_schema() -> str:
    doc = _doc()
    doc["schema"] = "rtbench-run/9"
    return json.dumps(doc)


@pytest.mark.parametrize(("body", "status", "words"), [
    ("{not json", 400, "not valid JSON"),
    ('{"a": NaN}', 400, "NaN"),
    ("[1, Infinity]", 400, "Infinity"),
    ("[" * 100_000 + "]" * 100_000, 400, "JSON"),
    ("", 400, "JSON"),
    ('"just a string"', 422, "expected 'object'"),
    (_wrong_schema(), 422, "rtbench-run/9"),
    (_bad_counts(), 422, "add up"),
    (_unknown_field(), 422, "surprise"),
    (json.dumps(_doc() | {"status": "great"}), 422, "status"),
    (json.dumps(_doc() | {"suite": "x" * 300}), 422, "300 characters"),
])
def test_bad_uploads_refused_nothing_stored(app_store, body: str, status: int,
                                            words: str) -> None:
    client, store, token = app_store
    answer = client.post("/api/v1/runs", content=body, headers=auth(token))
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error"] and "\n" not in answer.json()["error"]
    assert "Traceback" not in answer.text
    assert store.list_runs() == []


def test_upload_size_limit(app_store) -> None:
    client, store, token = app_store
    big = b'{"x": "' + b"a" * (3 * 1024 * 1024) + b'"}'
    answer = client.post("/api/v1/runs", content=big, headers=auth(token))
    assert answer.status_code == 413 and "at most" in answer.json()["error"]

    def chunks():  # no Content-Length: the limit is enforced while reading
        for _ in range(64):
            yield b"a" * 65536

    answer = client.post("/api/v1/runs", content=chunks(), headers=auth(token))
    assert answer.status_code == 413 and "larger than" in answer.json()["error"]
    assert store.list_runs() == []


@pytest.mark.parametrize(("path", "status"), [
    ("/api/v1/runs/999", 404), ("/runs/999", 404), ("/api/v1/runs/0", 422),
    ("/api/v1/runs/99999999999999", 422), ("/api/v1/runs/abc", 422),
    ("/api/v1/runs/999/stats", 404), ("/api/v1/compare?run=999", 404),
    ("/api/v1/compare", 422), ("/compare?run=999", 404),
    ("/api/v1/runs?host=%00", 422), ("/api/v1/runs?suite=%1b%5b2J", 422),
    ("/api/v1/runs?page=-1", 422), ("/api/v1/runs?per_page=100000", 422),
    ("/api/v1/runs?status=%27%20OR%201=1--", 422), ("/api/v1/runs?since=yesterday", 422),
    ("/api/v1/runs?since=0001-01-01", 422), ("/runs?host=" + "a" * 300, 422),
    ("/api/v1/runs?host=%27%3B%20DROP%20TABLE%20runs%3B--", 200),
    ("/api/v1/runs?tag=%25", 200), ("/api/v1/runs?kernel=%E2%80%AE", 200),
    ("/matrix?suite=%3Cscript%3E", 200), ("/../../etc/passwd", 404),
    ("/static/..%2f..%2fetc%2fpasswd", 404),
    ("/api/v1/refs/%3Cscript%3E", 404), ("/refs/%00", 404), ("/refs/" + "a" * 100, 422),
    ("/api/v1/compare?ref=%27%3B--", 422), ("/compare?ref=..%2F..%2Fetc%2Fpasswd", 422),
    ("/api/v1/compare?run=1&baseline=0", 422), ("/api/v1/compare?ref=loongson2f", 422),
])
def test_unknown_ids_and_hostile_queries(app_store, path: str, status: int) -> None:
    client, store, _ = app_store
    answer = client.get(path)
    assert answer.status_code == status, answer.text
    assert "Traceback" not in answer.text and "root:" not in answer.text
    if path.startswith("/api/") and status != 200:
        assert answer.json()["error"]
    assert store.list_runs() == []  # nothing dropped, nothing added


@pytest.mark.parametrize("path", ["/api/v1/runs/2147483648", "/api/v1/runs/0",
                                  "/api/v1/runs/9223372036854775807/stats",
                                  "/api/v1/compare?run=1&run=2147483648",
                                  "/api/v1/compare?run=1&baseline=2147483648"])
def test_run_ids_have_the_cli_range(app_store, path: str) -> None:
    """A run id out of range is refused with the line the CLI prints (issue 36, item 15)."""
    from rtbench import RUN_ID_RANGE
    from rtbench.analysis.select import SelectError, parse_spec

    client, _, _ = app_store
    answer = client.get(path)
    assert answer.status_code == 422, answer.text
    assert RUN_ID_RANGE in answer.json()["error"]
    with pytest.raises(SelectError, match=RUN_ID_RANGE):
        parse_spec(path.rsplit("=", 1)[-1].split("/")[4] if "runs/" in path
                   else path.rsplit("=", 1)[-1])


def test_pages_escape_user_text(app_store) -> None:
    client, store, token = app_store
    evil = "<script>alert(1)</script>"
    doc = _doc() | {"suite": evil, "hostname": "<b>host</b>", "tags": {"<i>": "\"'&"}}
    doc["scenarios"][0]["name"] = "<img src=x onerror=alert(2)>"
    run_id = client.post("/api/v1/runs", content=json.dumps(doc),
                         headers=auth(token)).json()["id"]
    other = client.post("/api/v1/runs", content=bundle_text(), headers=auth(token)).json()
    for path in ("/runs", f"/runs/{run_id}", f"/compare?run={run_id}", "/matrix",
                 f"/runs?suite={evil}", f"/compare?run={run_id}&run={other['id']}",
                 f"/compare?run={run_id}&ref=loongson2f", "/refs", "/refs/loongson2f"):
        page = client.get(path)
        assert page.status_code == 200
        assert evil not in page.text and "<img src=x" not in page.text
        assert "<b>host</b>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in client.get("/runs").text


def test_pages_and_api_agree(app_store) -> None:
    client, store, token = app_store
    for host in ("a", "b"):
        client.post("/api/v1/runs", content=bundle_text(hostname=host), headers=auth(token))
    listing = client.get("/api/v1/runs?host=a").json()
    assert listing["total"] == 1 and listing["runs"][0]["hostname"] == "a"
    run = store.get_run(listing["runs"][0]["id"])
    worst = max(s.max_ns for sc in run.scenarios for m in sc.measurements for s in m.series)
    assert listing["runs"][0]["worst_max_ns"] == worst
    cmp = client.get("/api/v1/compare?run=1&run=2").json()
    assert cmp["schema"] == "rtbench-compare/1"
    assert [r["id"] for r in cmp["runs"]] == [1, 2]
    assert [r["host"] for r in cmp["runs"]] == ["a", "b"]
    maxes = [d for d in cmp["cells"][0]["differences"][1] if d["metric"] == "max"]
    assert [d["baseline_ns"] for d in maxes] == [worst]
    verdicts = {d["verdict"] for row in cmp["cells"] for d in row["differences"][1]}
    assert verdicts <= {"better", "worse", "no detectable difference", "no interval"}
    page = client.get("/compare?run=1&run=2").text
    assert "comparison of 2 runs" in page and "run 1 against" not in page
    assert "run 2 against run 1" in page and "95 % interval" in page
    assert client.get("/api/v1/matrix").json()["suites"] == []  # simulated runs only
    matrix = client.get("/api/v1/matrix?simulated=1").json()
    assert {(c["board"], c["runs"]) for s in matrix["suites"] for c in s["cells"]} == {
        ("a", 1), ("b", 1)}
    assert client.get("/api/v1/health").json() == {"status": "ok"}
    assert "/api/v1/runs" in client.get("/api/v1/openapi.json").json()["paths"]


def test_read_token_required(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    token = create_token(store, "reader")
    with TestClient(create_app(store=store, read_token_required=True),
                    raise_server_exceptions=False) as client:
        assert client.get("/api/v1/runs").status_code == 401
        assert client.get("/runs").status_code == 401
        assert client.get("/api/v1/runs", headers=auth(token)).status_code == 200
        login = client.post("/login", content=f"token={token}",
                            headers={"Content-Type": "application/x-www-form-urlencoded"},
                            follow_redirects=False)
        assert login.status_code == 303 and "httponly" in login.headers["set-cookie"].lower()
        assert client.get("/runs").status_code == 200  # the cookie now
    store.close()


def test_database_down_503_then_recovers(tmp_path: Path) -> None:
    pg = cluster()
    store = Store.open(pg.fresh_database())
    token = create_token(store, "t")
    with TestClient(create_app(store=store), raise_server_exceptions=False) as client:
        assert client.get("/api/v1/runs").status_code == 200
        pg.stop()
        try:
            for path in ("/api/v1/runs", "/runs", "/api/v1/health"):
                down = client.get(path)
                assert down.status_code == 503, down.text
                assert "Traceback" not in down.text
            answer = client.post("/api/v1/runs", content=bundle_text(), headers=auth(token))
            assert answer.status_code == 503
            assert answer.json()["error"] == ("the results database is not available "
                                              "right now; try again later")
        finally:
            pg.start()
        assert client.get("/api/v1/runs").status_code == 200
        assert client.post("/api/v1/runs", content=bundle_text(),
                           headers=auth(token)).status_code == 201
    store.close()


def test_reference_runs_beside_stored_runs(app_store) -> None:
    from rtbench.reference import reference_runs

    client, store, token = app_store
    run_id = client.post("/api/v1/runs", content=bundle_text(), headers=auth(token)
                         ).json()["id"]
    listed = client.get("/api/v1/refs").json()
    assert [r["name"] for r in listed["refs"]] == [r.name for r in reference_runs()]
    one = client.get("/api/v1/refs/loongson2f").json()
    loongson = next(r for r in reference_runs() if r.name == "loongson2f")
    assert [c["figures_ns"] for c in one["cells"]] == [c.figures_ns for c in loongson.cells]
    assert client.get("/api/v1/refs/nope").status_code == 404
    assert client.get("/api/v1/refs/..%2F..%2Fetc%2Fpasswd").status_code == 404
    page = client.get("/refs").text
    assert all(f"ref:{r.name}" in page for r in reference_runs())
    assert "published, not measured here" in client.get("/refs/loongson2f").text
    cmp = client.get(f"/api/v1/compare?run={run_id}&ref=loongson2f").json()
    assert [r["label"] for r in cmp["runs"]] == [f"run {run_id}", "ref:loongson2f"]
    assert cmp["runs"][1]["published"] is True and cmp["cells"]
    page = client.get(f"/compare?run={run_id}&ref=ref:loongson2f")
    assert page.status_code == 200 and f"ref:loongson2f against run {run_id}" in page.text
    for path, status in (("/api/v1/compare?ref=loongson2f", 422),
                         (f"/api/v1/compare?run={run_id}", 422),
                         (f"/api/v1/compare?run={run_id}&ref=nope", 404),
                         (f"/api/v1/compare?run={run_id}&ref=%3Cscript%3E", 422),
                         (f"/compare?run={run_id}&ref=nope", 404)):
        answer = client.get(path)
        assert answer.status_code == status, (path, answer.text)
    picker = client.get(f"/compare?run={run_id}")
    assert picker.status_code == 200 and 'name="ref"' in picker.text


def _store_run(store: Store, thresholds_ns: list[int], status: str = "ok") -> int:
    """One synthetic two-measurement run with the given thresholds on its first one."""
    from server_helpers import SYSINFO
    from synth_probe import synth_lines

    from rtbench.rtprobe.wire.records import ProbeOutput

    run_id = store.create_run(
        suite="smoke", suite_source="[suite]\nname='smoke'\n", scale=1.0, hostname="box",
        target="local", sysinfo=SYSINFO, preflight=[], command_line=["rtbench", "run"],
        tool_versions={"rtbench": "0.1.0"}, simulated=True)
    sc = store.add_scenario(run_id, name="idle", loads=[], load_cpus=None, measure_cpus=None)
    for i, thresholds in enumerate((thresholds_ns, [])):
        lines, _ = synth_lines(seed=1 + i, series=1, windows=2, per_window=100)
        if not thresholds:  # no threshold: rtprobe gives no verdict either
            lines = [json.dumps({**json.loads(x), "verdicts": []})
                     if json.loads(x)["type"] == "result" else x for x in lines]
        store.add_measurement(sc, name=f"cyclic-{i}", test="cyclic", params={},
                              command=["rtprobe", "cyclic"],
                              output=ProbeOutput.from_lines(lines), status="ok",
                              thresholds_ns=thresholds)
    store.finish_run(run_id, status)
    return run_id


def test_runs_list_says_pass_or_fail_only_where_thresholds_decided(app_store) -> None:
    """Issue 24: a run without thresholds was a green `ok` in the runs list."""
    client, store, token = app_store
    none_set = _store_run(store, [])
    partly = _store_run(store, [50_000])
    failed = _store_run(store, [50_000], status="fail")
    rows = {r["id"]: r for r in client.get("/api/v1/runs", headers=auth(token))
            .json()["runs"]}
    assert rows[none_set]["verdict"] == "measured, no thresholds set"
    assert rows[partly]["verdict"] == "PASS (1 of 2 with thresholds)"
    assert rows[failed]["verdict"] == "FAIL"
    assert rows[none_set]["status"] == "ok"  # the stored status is unchanged
    page = client.get("/runs", headers=auth(token)).text
    cells = {int(m.group(1)): (m.group(2), m.group(3)) for m in re.finditer(
        r'data-run="(\d+)">.*?<td class="status (\w+)">([^<]*)</td>', page, re.S)}
    assert cells == {none_set: ("neutral", "measured, no thresholds set"),
                     partly: ("good", "PASS (1 of 2 with thresholds)"),
                     failed: ("bad", "FAIL")}
