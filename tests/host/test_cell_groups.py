"""The cell_groups summary (issue 33): after inserts (a bulk load, one upload, a runner's
measurement), deletions and a prune it equals the aggregate of run_cells computed from
scratch, and the matrix read from it equals the matrix aggregated from run_cells, on
SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from pg_cluster import BACKENDS, migrated_url
from server_helpers import bundle
from sqlalchemy import select, true

from bench.lab_data import make_lab, make_run
from rtbench.store import Store
from rtbench.store import schema as t
from rtbench.store.boards import board_names, matrix_groups
from rtbench.store.cellgroups import group_aggregate
from rtbench.store.removal import delete_runs, prune

LAB = make_lab(3, 2, 3)


def _summary(store: Store) -> list[tuple[object, ...]]:
    """The stored cell_groups rows, sorted."""
    with store.transaction("read") as conn:
        return sorted(tuple(r) for r in conn.execute(select(t.cell_groups)))


def _from_scratch(store: Store) -> list[tuple[object, ...]]:
    """The same rows aggregated from run_cells now."""
    with store.transaction("read") as conn:
        return sorted(tuple(r) for r in conn.execute(group_aggregate(true())))


def _matrices_agree(store: Store) -> None:
    """The matrix from the summary equals the one aggregated from run_cells (a span of
    every night reads run_cells), for each filter the pages use."""
    for simulated in (False, None):
        for emulated in (False, True):
            fast = matrix_groups(store, simulated=simulated, emulated=emulated)
            slow = matrix_groups(store, simulated=simulated, emulated=emulated,
                                 last_nights=100_000)
            key = lambda g: (g.board, g.kernel, g.suite)  # noqa: E731
            assert sorted(fast, key=key) == sorted(slow, key=key)
            with store.transaction("read") as conn:
                c = t.run_cells.c
                query = select(c.board).where(t.runs.c.id == c.run_id).distinct()
                if simulated is not None:
                    query = query.where(c.simulated == simulated)
                if not emulated:
                    query = query.where(t.runs.c.emulated.is_(False))
                boards = sorted(str(b) for (b,) in conn.execute(query))
            assert board_names(store, simulated=simulated, emulated=emulated) == \
                (boards, len(boards))


@pytest.mark.parametrize("backend", BACKENDS)
def test_summary_equals_the_aggregate_after_writes(backend: str, tmp_path: Path) -> None:
    store = Store.open(migrated_url(backend, tmp_path))
    try:
        assert _summary(store) == []
        ids = store.add_bundles([make_run(LAB, b, k, n) for k in range(LAB.kernels)
                                 for b in range(LAB.boards) for n in range(3)])
        store.add_bundles([make_run(LAB, 0, 0, 7, simulated=True)])
        emulated = replace(make_run(LAB, 1, 1, 8), emulated=True)
        emulated_id, _ = store.add_bundle(emulated)
        old = replace(make_run(LAB, 2, 0, 9),
                      started_at=datetime(2020, 1, 1, tzinfo=timezone.utc))
        store.add_bundle(old)
        store.add_bundle(bundle(hostname="box"))
        assert _summary(store) == _from_scratch(store) != []
        _matrices_agree(store)
        # a runner's measurement stored after its run was created
        detail = make_run(LAB, 0, 1, 10)
        run_id = store.create_run(
            suite=detail.suite, suite_source="", scale=1.0, hostname=detail.hostname,
            target=detail.target, sysinfo=dict(detail.sysinfo), preflight=[],
            tool_versions={}, command_line=[], simulated=False, board=detail.board)
        sc = detail.scenarios[0]
        scenario_id = store.add_scenario(run_id, name=sc.name, loads=sc.loads,
                                         load_cpus=sc.load_cpus,
                                         measure_cpus=sc.measure_cpus)
        store.add_measurement_detail(scenario_id, sc.measurements[0])
        assert _summary(store) == _from_scratch(store)
        # deletions: the newest run of a group, an emulated run, an old one by prune
        delete_runs(store, [ids[-1], emulated_id, ids[0]])
        assert _summary(store) == _from_scratch(store)
        pruned = prune(store, datetime.now(timezone.utc) - timedelta(days=3650 * 2))
        assert pruned == []
        pruned = prune(store, datetime(2021, 1, 1, tzinfo=timezone.utc))
        assert len(pruned) == 1
        assert _summary(store) == _from_scratch(store)
        _matrices_agree(store)
        # every run gone: no group left
        with store.transaction("read") as conn:
            left = [int(i) for i in conn.execute(select(t.runs.c.id)).scalars()]
        delete_runs(store, left)
        assert _summary(store) == _from_scratch(store) == []
    finally:
        store.close()
