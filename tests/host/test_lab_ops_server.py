"""Issue 26 item 6 on the server (in-process, SQLite and PostgreSQL): what each token
scope may do, the login cookie holding a session id (never a token), deleting runs
by id and in bulk (a dry run unless confirmed), pruning through the API."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pg_cluster import BACKENDS, migrated_url
from server_helpers import bundle, bundle_text

from rtbench.server.app import create_app
from rtbench.store import Store
from rtbench.store.tokens import create_token, revoke_token
from tests.parts import require_part

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(params=BACKENDS)
def lab(request: pytest.FixtureRequest, tmp_path: Path):
    """(client, store, {scope: token}) of a server that needs a token to read."""
    store = Store.open(migrated_url(request.param, tmp_path))
    tokens = {scope: create_token(store, scope, scope) for scope in ("read", "upload", "admin")}
    app = create_app(store=store, read_token_required=True)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, store, tokens
    store.close()


def auth(token: str) -> dict[str, str]:
    """The Authorization header of a token."""
    return {"Authorization": f"Bearer {token}"}


def test_each_scope_does_what_it_may(lab) -> None:
    client, store, tokens = lab
    for scope, token in tokens.items():
        assert client.get("/api/v1/runs", headers=auth(token)).status_code == 200, scope
    refused = client.post("/api/v1/runs", content=bundle_text(), headers=auth(tokens["read"]))
    assert refused.status_code == 403
    assert "scope read" in refused.json()["error"] and "--scope upload" in refused.json()["error"]
    assert client.post("/api/v1/runs", content=bundle_text(),
                       headers=auth(tokens["upload"])).status_code == 201
    assert client.post("/api/v1/runs", content=bundle_text(),
                       headers=auth(tokens["admin"])).status_code == 201
    for scope in ("read", "upload"):
        answer = client.delete("/api/v1/runs/1", headers=auth(tokens[scope]))
        assert answer.status_code == 403 and "admin" in answer.json()["error"]
    assert client.delete("/api/v1/runs/1").status_code == 401
    assert len(store.list_runs()) == 2


def test_login_cookie_is_a_session_not_a_token(lab) -> None:
    client, store, tokens = lab
    for scope, token in tokens.items():
        client.cookies.clear()
        login = client.post("/login", content=f"token={token}", headers=FORM,
                            follow_redirects=False)
        assert login.status_code == 303, scope
        cookie = login.headers["set-cookie"]
        assert token not in cookie and token.removeprefix("rtb_") not in cookie
        assert cookie.startswith("rtbench_session=") and "httponly" in cookie.lower()
        assert client.get("/runs").status_code == 200
        # the session reads, but never writes or deletes: those need a bearer token
        assert client.post("/api/v1/runs", content=bundle_text()).status_code == 401
    revoke_token(store, "admin")  # the admin's session ends with its token
    assert client.get("/runs").status_code == 401
    client.cookies.clear()
    client.post("/login", content=f"token={tokens['read']}", headers=FORM)
    assert client.post("/logout", follow_redirects=False).status_code == 303
    assert client.get("/api/v1/runs").status_code == 401


def test_delete_one_run(lab) -> None:
    client, store, tokens = lab
    first, _ = store.add_bundle(bundle())
    second, _ = store.add_bundle(bundle())
    admin = auth(tokens["admin"])
    assert client.get(f"/runs/{first}", headers=admin).status_code == 200  # cached page
    answer = client.delete(f"/api/v1/runs/{first}", headers=admin)
    assert answer.status_code == 200 and answer.json() == {"deleted": [first]}
    assert client.get(f"/runs/{first}", headers=admin).status_code == 404
    assert client.delete(f"/api/v1/runs/{first}", headers=admin).status_code == 404
    assert [r.id for r in store.list_runs()] == [second]


def test_bulk_delete_is_a_dry_run_unless_confirmed(lab) -> None:
    client, store, tokens = lab
    admin = auth(tokens["admin"])
    nightly, _ = store.add_bundle(bundle(suite="nightly"))
    smoke = [store.add_bundle(bundle(suite="smoke"))[0] for _ in range(2)]
    everything = client.delete("/api/v1/runs", headers=admin)
    assert everything.status_code == 422 and "at least one filter" in everything.json()["error"]
    dry = client.delete("/api/v1/runs?suite=smoke", headers=admin).json()
    assert dry["dry_run"] is True and [r["id"] for r in dry["runs"]] == smoke
    assert len(store.list_runs()) == 3
    done = client.delete("/api/v1/runs?suite=smoke&confirm=true", headers=admin).json()
    assert done["dry_run"] is False and done["count"] == 2
    assert [r.id for r in store.list_runs()] == [nightly]


def test_prune_through_the_api(lab) -> None:
    client, store, tokens = lab
    admin = auth(tokens["admin"])
    ids = {}
    for name, days, tags in (("old", 200, {}), ("kept", 200, {"keep": "1"}),
                             ("young", 1, {})):
        run = bundle(tags=tags)
        run.started_at = datetime.now(timezone.utc) - timedelta(days=days)
        ids[name] = store.add_bundle(run)[0]
    dry = client.post("/api/v1/prune?older_than_days=90", headers=admin).json()
    assert dry["dry_run"] is True and [r["id"] for r in dry["runs"]] == [ids["old"]]
    assert dry["exempt_tags"] == ["keep", "baseline"]
    assert client.post("/api/v1/prune?older_than_days=90",
                       headers=auth(tokens["upload"])).status_code == 403
    done = client.post("/api/v1/prune?older_than_days=90&confirm=true", headers=admin).json()
    assert done["count"] == 1
    assert {r.id for r in store.list_runs()} == {ids["kept"], ids["young"]}


def test_schemathesis_admin_endpoints(tmp_path: Path) -> None:
    """schemathesis with an admin token against the delete, prune and /metrics routes of a live
    `rtbench serve` on its own SQLite database (the shared live server's runs stay)."""
    import os
    import subprocess
    import sys
    import time

    import httpx
    from server_helpers import free_port

    cli = Path(sys.executable).parent / "schemathesis"
    if not cli.exists():
        require_part("python-dev", "schemathesis is not installed (pip install -e '.[dev]')")
    url = f"sqlite:///{tmp_path / 'admin.db'}"
    with Store.open(url) as store:
        token = create_token(store, "admin", "admin")
        for suite in ("a", "b", "c"):
            store.add_bundle(bundle(suite=suite))
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "rtbench", "serve", "--db", url,
                                 "--bind", f"127.0.0.1:{port}"], stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        done = subprocess.run(
            [str(cli), "run", f"{base}/api/v1/openapi.json", "--checks",
             "not_a_server_error,status_code_conformance,content_type_conformance",
             "-H", f"Authorization: Bearer {token}", "--include-tag-regex", "^(admin|metrics)$",
             "--max-examples", "5", "--workers", "1", "--phases",
             "examples,coverage,fuzzing", "--max-time", "30",
             "--suppress-health-check", "all"],
            capture_output=True, text=True, timeout=180, check=False, cwd=tmp_path,
            env=dict(os.environ, SCHEMATHESIS_HOOKS=""))
    finally:
        proc.terminate()
        proc.wait(20)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    # DELETE /runs/{id}, DELETE /runs, POST /prune, GET /metrics (a loaded machine may
    # reach --max-time before every one is tested)
    assert "Selected: 4/" in done.stdout
    assert "Traceback" not in log.read_text()
