"""Boards as first-class (issue 26): board identity, kernel version order, the per-run
cell summaries written at ingest (run_cells, Store.cell_rows) on SQLite and PostgreSQL,
the migration that backfills them, and bench/lab_data.py's planted regression."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path

import pytest
from alembic import command
from click.testing import CliRunner
from pg_cluster import BACKENDS, migrated_url
from server_helpers import bundle, store_synthetic

from bench.lab_data import (
    BASE_MAX_NS,
    REGRESSED_MAX_NS,
    START,
    make_lab,
    make_run,
    write_lab,
)
from rtbench.analysis.kernelver import kernel_sort_key
from rtbench.bundle import board_of
from rtbench.cli import main
from rtbench.interop.runjson import dumps, loads, run_to_json
from rtbench.store import Store
from rtbench.store.engine import _alembic_config


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path):
    """A fresh store on each backend."""
    s = Store.open(migrated_url(request.param, tmp_path))
    yield s
    s.close()


def test_kernels_sort_as_versions() -> None:
    kernels = ["6.6", "6.18", "6.1", "6.13", "6.12", "6.12-rc3", "6.12.1", "6.12.0-rt5",
               "5.10.0-23-rt-amd64"]
    assert sorted(kernels, key=kernel_sort_key) == [
        "5.10.0-23-rt-amd64", "6.1", "6.6", "6.12-rc3", "6.12", "6.12.0-rt5", "6.12.1",
        "6.13", "6.18"]


@pytest.mark.parametrize(("target", "hostname", "board"), [
    ("local", "box", "box"),
    ("ssh://root@imx8-1", "imx8", "imx8-1"),
    ("ssh://root@imx8-1:2222", "imx8", "imx8-1"),
    ("ssh://[fe80::1]:22", "x", "fe80::1"),
    ("labgrid:place-3", "buildroot", "place-3"),
    ("serial:///dev/ttyUSB0?baud=115200", "rpi4", "rpi4"),
    ("import", "", "unknown"),
])
def test_board_of_a_target(target: str, hostname: str, board: str) -> None:
    assert board_of(target, hostname) == board


def test_lab_cells_at_ingest_and_the_planted_regression(store: Store) -> None:
    lab = make_lab(20, 4, 3)
    assert write_lab(store, lab) == 240
    rows = store.cell_rows()
    assert len(rows) == 240 * 2  # two series (cells) per run
    planted = store.cell_rows(board=lab.planted_board, suite="nightly")
    assert {r.board for r in planted} == {lab.planted_board} and len(planted) == 24
    regressed = {r.kernel for r in planted if r.max_ns == REGRESSED_MAX_NS}
    assert sorted(regressed, key=kernel_sort_key) == list(
        lab.kernel_names[lab.regressed_from:])
    others = [r for r in rows if r.board != lab.planted_board]
    assert all(r.max_ns is not None and r.max_ns <= BASE_MAX_NS for r in others)
    row = planted[0]
    assert row.cell == "idle / cyclic / cpu0" and row.policy == "fifo" and row.rt_policy
    assert row.count == 100_000 and row.p99_ns is not None and row.p999_ns is not None
    assert row.exceed == [(100_000, 0)] and row.measured_ns == 100 * 10**9
    # oldest first, and a time window selects by the run's start
    assert [r.started_at for r in planted] == sorted(r.started_at for r in planted)
    late = store.cell_rows(board=lab.planted_board, since=START + timedelta(hours=6))
    assert len(late) == 12 and all(r.kernel in lab.kernel_names[2:] for r in late)
    # each stored run names its board
    assert {s.board for s in store.list_runs(300)} == {lab.board_name(i) for i in range(20)}


def test_simulated_and_non_rt_runs_only_when_asked(store: Store) -> None:
    lab = make_lab(2, 2, 1)
    store.add_bundles([make_run(lab, 0, 0, 0), make_run(lab, 0, 1, 0, simulated=True),
                       make_run(lab, 1, 0, 0, policy="other")])
    assert len(store.cell_rows()) == 4  # real runs only by default
    assert len(store.cell_rows(simulated=True)) == 2
    assert len(store.cell_rows(simulated=None)) == 6
    assert {r.policy for r in store.cell_rows(rt_only=True)} == {"fifo"}


def test_runner_path_summarizes_each_measurement(store: Store) -> None:
    run_id = store_synthetic(store, hostname="box", measurements=2)
    rows = store.cell_rows(simulated=True)
    assert {r.run_id for r in rows} == {run_id} and {r.board for r in rows} == {"box"}
    assert sorted({r.measurement for r in rows}) == ["cyclic-0", "cyclic-1"]
    run = store.get_run(run_id)
    assert run.board == "box"
    # the stored max of each cell is the series' max, the percentiles unknown when
    # there are too few samples for them (1,500 samples: p99 known, p99.9 not)
    series = {(m.name, s.label): s for sc in run.scenarios for m in sc.measurements
              for s in m.series}
    for r in rows:
        s = series[(r.measurement, r.series_label)]
        assert r.max_ns == s.max_ns and r.count == s.count
        assert (r.p999_ns is None) == (s.count < 10_000)
        assert (r.p99_ns is None) == (s.count < 1_000)


def test_bundle_carries_the_board_and_old_bundles_load(store: Store) -> None:
    run = bundle(hostname="imx8")
    run.board = "bench-7"
    doc = run_to_json(run)
    assert doc["board"] == "bench-7"
    back = loads(json.dumps(doc))
    assert back.board == "bench-7"
    del doc["board"]  # written before boards were stored
    old = loads(json.dumps(doc))
    assert old.board == board_of(old.target, "imx8")
    run_id, _ = store.add_bundle(back)
    assert store.get_run(run_id).board == "bench-7"
    assert loads(dumps(store.get_run(run_id))).board == "bench-7"


def test_migration_backfills_boards_and_cells(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with Store.open(url) as store:
        run = bundle(hostname="kbox")
        run.target = "ssh://root@board-9"
        store.add_bundle(run)
        before = [(r.cell, r.max_ns, r.p99_ns) for r in store.cell_rows(simulated=None)]
        cfg = _alembic_config(store.engine)
        command.downgrade(cfg, "-1")  # to the revision before 0004_board
        command.upgrade(cfg, "head")
        after = store.cell_rows(simulated=None)
        assert [(r.cell, r.max_ns, r.p99_ns) for r in after] == before and before
        assert {r.board for r in after} == {"board-9"}
        assert store.get_run(1).board == "board-9"


def test_board_option_checked_and_stored(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    text = dumps(copy.deepcopy(bundle(hostname="h1")))
    path = tmp_path / "run.json"
    path.write_text(text)
    cli = CliRunner()
    bad = cli.invoke(main, ["import", str(path), "--board", "no spaces", "--db", url])
    assert bad.exit_code == 2 and "--board" in bad.output
    assert len(bad.output.strip().splitlines()) == 1
    done = cli.invoke(main, ["import", str(path), "--board", "rack2-imx8", "--db", url])
    assert done.exit_code == 0, done.output
    listed = cli.invoke(main, ["ls", "board=rack2-imx8", "--json", "--db", url])
    assert [r["board"] for r in json.loads(listed.output)] == ["rack2-imx8"]
