"""Store features of the results server, on SQLite and on a real PostgreSQL:
concurrent writers, race-free first use, filtered paged lists, the matrix data,
tokens, and bundles refused before anything is written."""

from __future__ import annotations

import multiprocessing
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from pg_cluster import BACKENDS, backend_url, migrated_url
from server_helpers import bundle, checksum, store_synthetic
from sqlalchemy import func, select

from rtbench.store import BundleInvalid, RunNotFound, Store, StoreError
from rtbench.store import schema as t
from rtbench.store.boards import matrix_groups
from rtbench.store.queries import RunFilter, facets, list_runs_page
from rtbench.store.tokens import check_token, create_token, list_tokens, revoke_token

HERE = Path(__file__).parent


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database URL on each backend."""
    return backend_url(request.param, tmp_path)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path):
    """A fresh store on each backend (its schema copied, not migrated: db_url's tests
    are the ones of first uses)."""
    s = Store.open(migrated_url(request.param, tmp_path))
    yield s
    s.close()


def _writer(url: str, worker: int, runs: int, queue: multiprocessing.Queue) -> None:
    """Child process: store runs bundles, report (uid, checksum) of each."""
    sys.path.insert(0, str(HERE))
    from server_helpers import bundle as make
    from server_helpers import checksum as digest

    with Store.open(url) as s:
        for i in range(runs):
            run = make(hostname=f"board{worker % 3}", suite=f"s{i % 2}")
            s.add_bundle(run)
            queue.put((run.uid, digest(run)))


def _first_use(url: str, worker: int, queue: multiprocessing.Queue) -> None:
    """Child process: open a brand-new database and store a run at once."""
    sys.path.insert(0, str(HERE))
    from server_helpers import store_synthetic as store_one

    try:
        with Store.open(url) as s:
            store_one(s, hostname="same-host", seed=worker)
        queue.put("ok")
    except Exception as exc:  # reported to the parent, which fails the test
        queue.put(f"{type(exc).__name__}: {exc}")


def _run_children(target: object, args: list[tuple[object, ...]]) -> list[object]:
    """Start one process per args tuple at once; return everything they queued."""
    ctx = multiprocessing.get_context("fork")  # no re-import: quick to start
    queue = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*a, queue)) for a in args]  # type: ignore
    for p in procs:
        p.start()
    results = []
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    while not queue.empty():
        results.append(queue.get())
    return results


def test_eight_concurrent_writers_lose_nothing(db_url: str) -> None:
    results = _run_children(_writer, [(db_url, w, 5) for w in range(8)])
    assert len(results) == 40
    with Store.open(db_url) as s:
        assert list_runs_page(s, RunFilter(), per_page=100).total == 40
        for uid, digest in results:
            run_id = s.run_id_by_uid(uid)
            assert run_id is not None
            assert checksum(s.get_run(run_id)) == digest
        with s.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(t.hosts)).scalar() == 3


def test_six_parallel_first_uses_of_a_new_database(db_url: str) -> None:
    results = _run_children(_first_use, [(db_url, w) for w in range(6)])
    assert results == ["ok"] * 6
    with Store.open(db_url) as s:
        assert len(s.list_runs()) == 6
        with s.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(t.hosts)).scalar() == 1


def test_same_uid_stored_once(store: Store) -> None:
    run = bundle()
    first, created = store.add_bundle(run)
    again, created_again = store.add_bundle(run)
    assert created and not created_again and first == again
    assert checksum(store.get_run(first)) == checksum(run)


def test_filtered_paged_list(store: Store) -> None:
    for i in range(7):
        store.add_bundle(bundle(hostname="a" if i < 4 else "b", suite="x" if i % 2 else "y",
                                kernel="k1" if i < 2 else "k2",
                                tags={"ci": "nightly"} if i == 3 else {"n": str(i)}))
    page = list_runs_page(store, RunFilter(), page=2, per_page=3)
    assert page.total == 7 and page.pages == 3 and [r.id for r in page.runs] == [4, 3, 2]
    assert list_runs_page(store, RunFilter(host="a")).total == 4
    assert list_runs_page(store, RunFilter(host="a", suite="x")).total == 2
    assert list_runs_page(store, RunFilter(kernel="k1")).total == 2
    assert [r.id for r in list_runs_page(store, RunFilter(tag="ci=nightly")).runs] == [4]
    assert list_runs_page(store, RunFilter(tag="ci")).total == 1
    assert list_runs_page(store, RunFilter(tag="n")).total == 6
    assert list_runs_page(store, RunFilter(tag="ci=night")).total == 0
    assert list_runs_page(store, RunFilter(tag="%")).total == 0  # wildcards are literal
    assert list_runs_page(store, RunFilter(status="ok")).total == 7
    assert list_runs_page(store, RunFilter(status="fail")).total == 0
    started = store.get_run(1).started_at
    assert list_runs_page(store, RunFilter(since=started + timedelta(days=1))).total == 0
    assert list_runs_page(store, RunFilter(until=started + timedelta(days=1))).total == 7
    worst = list_runs_page(store, RunFilter()).runs[0].worst_max_ns
    assert worst == max(s.max_ns for s in store.get_run(7).scenarios[0].measurements[0].series)
    assert facets(store)["host"] == ["a", "b"]
    assert facets(store)["kernel"] == ["k1", "k2"]


def test_matrix_cells(store: Store) -> None:
    for host, kernel in (("a", "k1"), ("a", "k1"), ("a", "k2"), ("b", "k1")):
        store.add_bundle(bundle(hostname=host, kernel=kernel))
    assert matrix_groups(store) == []  # these runs are simulated: only when asked
    cells = sorted(matrix_groups(store, simulated=None), key=lambda c: (c.board, c.kernel))
    assert [(c.board, c.kernel, c.runs) for c in cells] == [
        ("a", "k1", 2), ("a", "k2", 1), ("b", "k1", 1)]
    assert cells[0].newest_run_id == 2
    assert all(c.worst_max_ns is not None and c.worst_p999_ns is None for c in cells)
    # 50 us threshold, synthetic samples far below it
    assert all(c.threshold_ns == 50_000 and c.under and not c.over for c in cells)


def test_tokens(store: Store) -> None:
    token = create_token(store, "lab-ci")
    assert token.startswith("rtb_") and len(token) > 40
    assert check_token(store, token) == "lab-ci"
    assert check_token(store, token + "x") is None
    with store.engine.connect() as conn:  # only the hash is stored
        stored = conn.execute(select(t.tokens.c.token_sha256)).scalar()
    assert token not in str(stored)
    with pytest.raises(StoreError, match="exists already"):
        create_token(store, "lab-ci")
    with pytest.raises(StoreError, match="not valid"):
        create_token(store, "bad name;")
    revoke_token(store, "lab-ci")
    assert check_token(store, token) is None
    [info] = list_tokens(store)
    assert info.revoked_at is not None and info.last_used_at is not None
    with pytest.raises(StoreError, match="no token"):
        revoke_token(store, "nope")


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: setattr(r, "suite", "s" * 256), "run.suite: 256 characters"),
    (lambda r: setattr(r, "status", "great"), "run.status"),
    (lambda r: setattr(r, "hostname", "a\x00b"), "NUL"),
    (lambda r: r.tags.update({"k": "\x00"}), "NUL"),
    (lambda r: setattr(r.scenarios[0].measurements[0].series[0], "cpu", 2**40), "32-bit"),
    (lambda r: r.scenarios[0].measurements[0].windows.append(
        r.scenarios[0].measurements[0].windows[0]), "two windows"),
])
def test_bundle_refused_before_writing(store: Store, change, message: str) -> None:
    run = bundle()
    change(run)
    with pytest.raises(BundleInvalid, match=message):
        store.add_bundle(run)
    assert store.list_runs() == []


def test_run_not_found_and_utc(store: Store) -> None:
    with pytest.raises(RunNotFound):
        store.get_run(5)
    run_id = store_synthetic(store)
    assert store.get_run(run_id).started_at.tzinfo == timezone.utc
    assert store.get_run(run_id).started_at <= datetime.now(timezone.utc)


def test_windows_round_trip_through_copy_and_lz4(store: Store) -> None:
    """PostgreSQL stores windows with COPY, their histograms lz4-compressed (where the
    server has lz4); on both backends a stored run reads back as it was sent."""
    from sqlalchemy import text

    sent = bundle(windows=40, per_window=200)
    run_id, created = store.add_bundle(sent)
    assert created
    assert checksum(store.get_run(run_id)) == checksum(sent)
    if store.engine.dialect.name == "postgresql":
        with store.engine.connect() as conn:
            has_lz4 = conn.execute(text(
                "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
                "AND 'lz4' = ANY(enumvals)")).scalar()
            method = conn.execute(text(
                "SELECT attcompression FROM pg_attribute WHERE attrelid = "
                "'windows'::regclass AND attname = 'hist'")).scalar()
        assert method == ("l" if has_lz4 else "")
