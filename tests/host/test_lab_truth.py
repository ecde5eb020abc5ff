"""The noisy lab of bench/lab_noisy.py through a store (bench/lab_truth.py): its runs
are the same wherever they are made, and checked at ingest on SQLite and PostgreSQL
they get the decisions bench/lab_decisions.py takes in memory, check by check, so that
the correctness table of either is the other's (issue 33)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pg_cluster import BACKENDS, migrated_url

from bench.lab_decisions import simulate
from bench.lab_noisy import lab_order, make_run, plan, where_run
from bench.lab_truth import outcome_of, stored_checks
from rtbench.analysis.runmodel import STATES
from rtbench.regress.board import recheck
from rtbench.store import Store


def test_a_run_is_the_same_wherever_it_is_made() -> None:
    lab = plan(8, 2, 30, 3, seed=4)
    a, b = make_run(lab, 5, 1, 17), make_run(lab, 5, 1, 17)
    assert a == b and a.uid != make_run(lab, 5, 0, 17).uid
    assert where_run(lab, a.board or "", a.suite, a.started_at) == (5, 1, 17)
    assert a.kernel == lab.kernel_name(lab.kernel_of(5, 17))
    # staggered: the boards do not all change kernel on the same night
    assert len({lab.first_night(b, 1) for b in range(lab.boards)}) > 1
    cells = [sc.measurements[0] for sc in a.scenarios]
    assert [sc.name for sc in a.scenarios] == ["idle", "load"]
    assert all(len(m.windows) == 20 and m.series[0].count == 20_000 for m in cells)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_store_decides_the_lab_as_memory_does(backend: str, tmp_path: Path) -> None:
    lab = plan(4, 1, 16, 2, seed=1)
    url = migrated_url(backend, tmp_path)
    with Store.open(url) as store:
        store.add_bundles([make_run(lab, *key) for key in lab_order(lab)])
        recheck(store)
    stored = stored_checks(url, lab, list(range(lab.boards)))
    states: dict[tuple[int, int, int, str, str], str | None] = {}
    memory = simulate(lab, record=states)
    assert len(stored) == len(states) > 100
    assert {k: (o if o in STATES else None) for k, (o, _) in stored.items()} == states
    got = outcome_of(lab, stored)
    assert (got.runs, got.false_suspected_runs, got.found) == \
        (memory.runs, memory.false_suspected_runs, memory.found)
    assert len(got.found) == 4 and all(g[1] is not None for g in got.found.values())
