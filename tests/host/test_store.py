"""The results store: round trip, atomicity, listing, migrations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from pg_cluster import BACKENDS, backend_url
from sqlalchemy import func, select, text
from synth_probe import synth_lines

import rtbench.store.write as store_write
from rtbench.rtprobe.wire import loglin7 as hist
from rtbench.rtprobe.wire.records import ProbeOutput
from rtbench.store import Store, StoreError, default_db_url
from rtbench.store import schema as t
from rtbench.store.engine import head_revision

SYSINFO = {"uname": {"release": "6.1.0-test", "machine": "x86_64"},
           "cpu_model": "Test CPU"}


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database URL: SQLite in a new directory, or a new PostgreSQL database."""
    return backend_url(request.param, tmp_path)


@pytest.fixture()
def store(db_url: str):
    """A fresh store on each backend."""
    s = Store.open(db_url)
    yield s
    s.close()


def new_run(store: Store, **kw: object) -> int:
    """A run with default facts."""
    args: dict[str, object] = dict(
        suite="smoke", suite_source="[suite]\nname='smoke'\n", scale=0.5,
        hostname="box", target="local", sysinfo=SYSINFO,
        preflight=[{"name": "governor", "severity": "warn",
                    "value": "powersave", "advice": "use performance"}],
        tool_versions={"rtbench": "0.1.0", "rtprobe": "0.1.0"},
        command_line=["rtbench", "run"], simulated=True)
    args.update(kw)
    return store.create_run(**args)  # type: ignore[arg-type]


def add(store: Store, scenario_id: int, output: ProbeOutput,
        name: str = "cyclic-1ms") -> int:
    """Store output as a measurement."""
    return store.add_measurement(
        scenario_id, name=name, test="cyclic", params={"interval_ns": 10**6},
        command=["rtprobe", "cyclic"], output=output, status="ok",
        thresholds_ns=[50_000])


def count_rows(store: Store) -> dict[str, int]:
    """Rows per table."""
    with store.engine.connect() as conn:
        return {tab.name: conn.execute(select(func.count()).select_from(tab))
                .scalar_one() for tab in t.metadata.sorted_tables}


def test_default_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RTBENCH_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db_url() == f"sqlite:///{tmp_path}/rtbench/results.db"
    monkeypatch.setenv("RTBENCH_DB", "sqlite:////x/y.db")
    assert default_db_url() == "sqlite:////x/y.db"


def test_wal_mode_and_migrations_match_metadata(store: Store) -> None:
    with store.engine.connect() as conn:
        if store.engine.dialect.name == "sqlite":
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        # the newest revision the files name (the lead re-chains revisions at merges)
        assert conn.execute(text("SELECT version_num FROM alembic_version")
                            ).scalar() == head_revision()
        diff = compare_metadata(MigrationContext.configure(conn), t.metadata)
        assert diff == []


def test_reopen_is_idempotent(db_url: str) -> None:
    url = db_url
    with Store.open(url) as s:
        run_id = new_run(s)
    with Store.open(url) as s:
        assert [r.id for r in s.list_runs()] == [run_id]


def test_round_trip(store: Store) -> None:
    lines, measured = synth_lines(series=2, windows=3, per_window=400)
    output = ProbeOutput.from_lines(lines)
    run_id = new_run(store)
    sc = store.add_scenario(run_id, name="idle", loads=[],
                            load_cpus=None, measure_cpus="0-1")
    store.set_scenario_intensity(sc, {"cpu_busy_pct": 3.5, "irq_per_s": 900})
    mid = add(store, sc, output)
    store.finish_run(run_id, "ok")

    run = store.get_run(run_id)
    assert run.status == "ok" and run.finished_at is not None
    assert run.simulated and run.kernel == "6.1.0-test"
    assert run.arch == "x86_64" and run.hostname == "box"
    assert run.preflight[0]["advice"] == "use performance"
    assert run.started_at.tzinfo is not None
    [scenario] = run.scenarios
    assert scenario.intensity == {"cpu_busy_pct": 3.5, "irq_per_s": 900}
    assert scenario.measure_cpus == "0-1"
    [m] = scenario.measurements
    assert m.id == mid and m.status == "ok" and m.thresholds_ns == [50_000]
    assert m.measured_ns == 3 * 10**9 and m.simulated
    assert "sysinfo" not in m.start and m.start["test"] == "cyclic"
    assert [s.label for s in m.series] == ["cpu0", "cpu1"]
    for s in m.series:
        values = measured[s.index]
        idx, cnt = hist.from_values(values)
        assert s.hist == [(int(i), int(c)) for i, c in zip(idx, cnt, strict=True)]
        assert (s.count, s.min_ns, s.max_ns, s.sum_ns) == (
            values.size, values.min(), values.max(), values.sum())
        assert s.exceed == [(50_000, int((values >= 50_000).sum()))]
        assert s.worst[0][1] == values.max()
        assert s.warmup["count"] == 400
        hi, hc = s.hist_arrays()
        assert hi.dtype == np.int64 and int(hc.sum()) == s.count
    assert len(m.windows) == 8 and sum(w.warmup for w in m.windows) == 2
    assert m.windows == sorted(output.windows,
                               key=lambda w: (w.series, w.index))
    assert m.spikes == output.spikes


def test_histograms_merge_in_sql(store: Store) -> None:
    lines, measured = synth_lines(series=2, windows=2, per_window=300)
    run_id = new_run(store)
    sc = store.add_scenario(run_id, name="idle", loads=[], load_cpus=None,
                            measure_cpus=None)
    mid = add(store, sc, ProbeOutput.from_lines(lines))
    hb = t.hist_buckets
    with store.engine.connect() as conn:
        rows = conn.execute(select(hb.c.bucket, func.sum(hb.c.count))
                            .where(hb.c.measurement_id == mid)
                            .group_by(hb.c.bucket).order_by(hb.c.bucket)).all()
    idx, cnt = hist.from_values(np.concatenate(list(measured.values())))
    assert [(int(b), int(c)) for b, c in rows] == list(
        zip(idx.tolist(), cnt.tolist(), strict=True))


def test_output_without_result_rebuilt_from_windows(store: Store) -> None:
    lines, measured = synth_lines(series=2, windows=3, with_result=False)
    run_id = new_run(store)
    sc = store.add_scenario(run_id, name="idle", loads=[], load_cpus=None,
                            measure_cpus=None)
    store.add_measurement(sc, name="m", test="cyclic", params={},
                          command=["rtprobe"], output=ProbeOutput.from_lines(
                              lines), status="interrupted",
                          thresholds_ns=[50_000])
    store.finish_run(run_id, "interrupted")
    run = store.get_run(run_id)
    m = run.scenarios[0].measurements[0]
    assert m.status == "interrupted" and m.exit_code is None
    for s in m.series:
        values = measured[s.index]
        assert (s.count, s.max_ns, s.sum_ns) == (values.size, values.max(),
                                                 values.sum())
        assert s.overruns == 1
        assert s.exceed == [(50_000, int((values >= 50_000).sum()))]
        assert s.warmup["count"] == 500
    assert store.list_runs()[0].status == "interrupted"


def test_failure_mid_measurement_leaves_nothing(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    lines, _ = synth_lines(series=2, windows=2)
    output = ProbeOutput.from_lines(lines)
    run_id = new_run(store)
    sc = store.add_scenario(run_id, name="idle", loads=[], load_cpus=None,
                            measure_cpus=None)
    before = count_rows(store)
    original = store_write._insert_measurement

    def broken(conn, scenario_id, position, detail) -> int:  # type: ignore
        original(conn, scenario_id, position, detail)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store_write, "_insert_measurement", broken)
    with pytest.raises(RuntimeError):
        add(store, sc, output)
    assert count_rows(store) == before
    # a database-level failure (duplicate window) also rolls back
    monkeypatch.setattr(store_write, "_insert_measurement", original)
    output.windows.append(output.windows[0])
    with pytest.raises(StoreError, match="store measurement"):
        add(store, sc, output)
    assert count_rows(store) == before


def test_list_runs_newest_first_with_worst_max(store: Store) -> None:
    first = new_run(store, suite="a")
    second = new_run(store, suite="b", hostname="other")
    sc = store.add_scenario(second, name="idle", loads=[], load_cpus=None,
                            measure_cpus=None)
    lines, measured = synth_lines(series=2, windows=2)
    add(store, sc, ProbeOutput.from_lines(lines))
    runs = store.list_runs()
    assert [r.id for r in runs] == [second, first]
    assert runs[0].worst_max_ns == max(int(v.max()) for v in measured.values())
    assert runs[1].worst_max_ns is None and runs[1].status == "running"
    assert runs[0].kernel == "6.1.0-test" and runs[0].hostname == "other"
    assert store.list_runs(limit=1)[0].id == second


def test_errors_are_one_line(store: Store, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="run 999 is not in"):
        store.get_run(999)
    with pytest.raises(StoreError, match="run 999 does not exist"):
        store.add_scenario(999, name="x", loads=[], load_cpus=None,
                           measure_cpus=None)
    with pytest.raises(StoreError, match="status"):
        store.finish_run(1, "maybe")
    with pytest.raises(StoreError, match="not valid"):
        Store.open("::nonsense::")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot create the directory"):
        Store.open(f"sqlite:///{blocker}/sub/r.db")
