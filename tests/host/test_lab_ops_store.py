"""Issue 26 item 6 in the store, on SQLite and a real PostgreSQL: token scopes, login
sessions (ended by expiry and by revoking the token), deleting runs by id and by
filter, retention with its exempt tags, each in one transaction."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from pg_cluster import BACKENDS, migrated_url
from server_helpers import bundle
from sqlalchemy import func, select

from rtbench.store import RunNotFound, Store, StoreError
from rtbench.store import schema as t
from rtbench.store.queries import RunFilter
from rtbench.store.removal import (
    cutoff_of,
    delete_matching,
    delete_runs,
    expired_runs,
    matching_runs,
    prune,
)
from rtbench.store.sessions import create_session, end_session, session_identity
from rtbench.store.tokens import (
    check_token,
    create_token,
    find_token,
    list_tokens,
    note_token_use,
    revoke_token,
    token_identity,
)

NOW = datetime.now(timezone.utc)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path):
    """A fresh store on each backend."""
    s = Store.open(migrated_url(request.param, tmp_path))
    yield s
    s.close()


def _add(store: Store, days_ago: float, **kw: object) -> int:
    """Store a run started days_ago days before now; its id."""
    run = bundle(**kw)  # type: ignore[arg-type]
    run.started_at = NOW - timedelta(days=days_ago)
    run_id, _ = store.add_bundle(run)
    return run_id


def _rows(store: Store) -> dict[str, int]:
    """Rows per table."""
    with store.engine.connect() as conn:
        return {tab.name: int(conn.execute(select(func.count()).select_from(tab))
                              .scalar_one()) for tab in t.metadata.sorted_tables}


def test_scopes_nest(store: Store) -> None:
    tokens = {scope: create_token(store, f"t-{scope}", scope)
              for scope in ("read", "upload", "admin")}
    allowed = {(scope, needed) for scope, text in tokens.items()
               for needed in ("read", "upload", "admin")
               if check_token(store, text, needed) is not None}
    assert allowed == {("read", "read"), ("upload", "read"), ("upload", "upload"),
                       ("admin", "read"), ("admin", "upload"), ("admin", "admin")}
    assert check_token(store, tokens["upload"]) == "t-upload"  # default: upload
    assert {i.name: i.scope for i in list_tokens(store)} == {
        "t-read": "read", "t-upload": "upload", "t-admin": "admin"}
    with pytest.raises(StoreError, match="scope 'root' is not one of read, upload, admin"):
        create_token(store, "x", "root")


def test_session_holds_no_token_and_ends_with_it(store: Store) -> None:
    token = create_token(store, "reader", "read")
    who = token_identity(store, token)
    assert who is not None and who.scope == "read"
    session_id = create_session(store, who)
    assert token not in session_id and len(session_id) >= 40
    with store.engine.connect() as conn:
        stored = conn.execute(select(t.sessions.c.session_sha256)).scalar_one()
    assert stored != session_id and session_id not in stored  # only the hash is kept
    assert session_identity(store, session_id) == who
    assert session_identity(store, session_id + "x") is None
    revoke_token(store, "reader")
    assert session_identity(store, session_id) is None
    assert _rows(store)["sessions"] == 0


def test_token_check_reads_and_notes_use_apart(store: Store) -> None:
    token = create_token(store, "up", "upload")
    found = find_token(store, token)
    assert found is not None and found[0].name == "up" and found[1]  # never used: note it
    assert list_tokens(store)[0].last_used_at is None  # the check itself wrote nothing
    note_token_use(store, found[0].token_id)
    assert list_tokens(store)[0].last_used_at is not None
    again = find_token(store, token)
    assert again is not None and not again[1]  # noted within the minute: no write due
    assert find_token(store, token + "x") is None


def test_session_expires_and_logout_ends_it(store: Store) -> None:
    who = token_identity(store, create_token(store, "u"))
    assert who is not None
    expired = create_session(store, who, lifetime=timedelta(seconds=-1))
    assert session_identity(store, expired) is None
    live = create_session(store, who)  # creating one clears expired ones
    assert _rows(store)["sessions"] == 1
    end_session(store, live)
    assert session_identity(store, live) is None


def test_delete_by_id_takes_every_row_or_none(store: Store) -> None:
    before = _rows(store)
    first, second = _add(store, 1), _add(store, 1)
    with pytest.raises(RunNotFound, match="nothing was deleted"):
        delete_runs(store, [first, 10**6])
    assert {r.id for r in store.list_runs()} == {first, second}
    assert delete_runs(store, [first, second]) == [first, second]
    after = _rows(store)
    assert {k: v for k, v in after.items() if k != "hosts"} == {
        k: v for k, v in before.items() if k != "hosts"}


def test_delete_by_filter(store: Store) -> None:
    keep = _add(store, 1, suite="nightly")
    smoke = [_add(store, 1, suite="smoke") for _ in range(3)]
    flt = RunFilter(suite="smoke")
    assert [r.id for r in matching_runs(store, flt)] == smoke
    assert [r.id for r in store.list_runs()] == [*reversed(smoke), keep]  # dry run: all kept
    assert [r.id for r in delete_matching(store, flt)] == smoke
    assert [r.id for r in store.list_runs()] == [keep]


def test_retention_spares_keep_baseline_and_young_runs(store: Store) -> None:
    old = _add(store, 100)
    kept = _add(store, 100, tags={"keep": "yes"})
    baseline = _add(store, 100, tags={"baseline": "6.6"})
    near = _add(store, 100, tags={"keeper": "x"})  # not the keep tag
    young = _add(store, 10)
    cutoff = cutoff_of(timedelta(days=90))
    assert [r.id for r in expired_runs(store, cutoff)] == [old, near]
    assert [r.id for r in prune(store, cutoff)] == [old, near]
    assert {r.id for r in store.list_runs()} == {kept, baseline, young}
    assert prune(store, cutoff) == []


def test_tokens_made_before_scopes_become_upload_tokens(tmp_path: Path) -> None:
    from alembic import command
    from sqlalchemy import create_engine, text

    from rtbench.store.engine import _alembic_config

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_engine(url)
    cfg = _alembic_config(engine)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0004_board")  # the schema before 0004_ops
        conn.execute(text("INSERT INTO tokens (name, token_sha256, created_at) "
                          "VALUES ('old-ci', :h, :now)"), {"h": "0" * 64, "now": NOW})
    engine.dispose()
    with Store.open(url) as store:  # migrates to head
        assert [(i.name, i.scope) for i in list_tokens(store)] == [("old-ci", "upload")]
