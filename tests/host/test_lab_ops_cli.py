"""`rtbench rm`, `rtbench db prune`, `rtbench token create --scope` and the server's
retention thread (in-process through click's CliRunner, SQLite)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from server_helpers import bundle

from rtbench.cli import main
from rtbench.server.retention import Retention
from rtbench.server.writequeue import WriteQueue
from rtbench.store import Store
from rtbench.store.tokens import list_tokens


@pytest.fixture()
def db(tmp_path: Path) -> str:
    """A database URL with five runs: suites a, a, b, b (200 days old), b (tagged keep,
    200 days old)."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with Store.open(url) as store:
        for suite, days, tags in (("a", 1, {}), ("a", 1, {}), ("b", 200, {}),
                                  ("b", 200, {}), ("b", 200, {"keep": "yes"})):
            run = bundle(suite=suite, tags=tags)
            run.started_at = datetime.now(timezone.utc) - timedelta(days=days)
            store.add_bundle(run)
    return url


def rtbench(*args: str) -> Result:
    """rtbench ARGS in-process."""
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "160"})


def ids(url: str) -> list[int]:
    """The stored run ids, oldest first."""
    with Store.open(url) as store:
        return sorted(r.id for r in store.list_runs())


def test_rm_one_run_at_once(db: str) -> None:
    done = rtbench("rm", "1", "--db", db)
    assert done.exit_code == 0 and "deleted 1 run(s): 1" in done.output
    assert ids(db) == [2, 3, 4, 5]
    missing = rtbench("rm", "1", "--db", db)
    assert missing.exit_code == 2 and "run 1 is not stored" in missing.output


def test_rm_bulk_is_a_dry_run_unless_yes(db: str) -> None:
    for args in (("suite=a",), ("1", "2")):
        dry = rtbench("rm", *args, "--db", db)
        assert dry.exit_code == 0 and "would delete 2 run(s)" in dry.output, args
        assert ids(db) == [1, 2, 3, 4, 5]
    done = rtbench("rm", "suite=a", "--yes", "--db", db)
    assert done.exit_code == 0 and "deleted 2 run(s): 1 2" in done.output
    assert ids(db) == [3, 4, 5]
    nothing = rtbench("rm", "suite=zzz", "--db", db)
    assert nothing.exit_code == 2 and "matches no stored run" in nothing.output
    ref = rtbench("rm", "ref:nonexistent-ref", "--db", db)
    assert ref.exit_code == 2


def test_db_prune(db: str) -> None:
    bad = rtbench("db", "prune", "--older-than", "ninety", "--db", db)
    assert bad.exit_code == 2 and "90d" in bad.output
    dry = rtbench("db", "prune", "--older-than", "90d", "--db", db)
    assert dry.exit_code == 0 and "would delete 2 run(s)" in dry.output
    assert ids(db) == [1, 2, 3, 4, 5]
    done = rtbench("db", "prune", "--older-than", "12w", "--yes", "--db", db)
    assert done.exit_code == 0 and "deleted 2 run(s)" in done.output
    assert ids(db) == [1, 2, 5]


def test_token_create_with_scope(db: str) -> None:
    made = rtbench("token", "create", "grafana", "--scope", "read", "--db", db)
    assert made.exit_code == 0 and made.output.startswith("rtb_")
    assert rtbench("token", "create", "x", "--scope", "root", "--db", db).exit_code == 2
    listed = rtbench("token", "list", "--db", db)
    assert "grafana" in listed.output and "read" in listed.output
    with Store.open(db) as store:
        assert [(i.name, i.scope) for i in list_tokens(store)] == [("grafana", "read")]


def test_retention_thread_prunes_at_start(db: str) -> None:
    with Store.open(db) as store:
        retention = Retention(store, WriteQueue(store), keep_days=90, interval_s=3600)
        retention.start()
        retention.stop()  # waits for the first pass
        assert sorted(r.id for r in store.list_runs()) == [1, 2, 5]
        assert retention.prune_once() == 0
