"""Boards as first-class: runs.board (backfilled from each run's target host, or its
host name), and run_cells, the per-run cell summaries the matrix and history read,
backfilled here from the stored series and histograms.

Revision ID: 0004_board
Revises: 0004_trace
Create Date: 2026-11-25
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0004_board"
down_revision = "0004_trace"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Add runs.board and run_cells, and fill both for the runs already stored."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("board", sa.String(255), nullable=False,
                                   server_default=""))
    op.create_index("ix_runs_board", "runs", ["board"])
    op.create_table(
        "run_cells",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("measurement_id", sa.Integer,
                  sa.ForeignKey("measurements.id", ondelete="CASCADE"), nullable=False),
        sa.Column("board", sa.String(255), nullable=False),
        sa.Column("suite", sa.String(255), nullable=False),
        sa.Column("kernel", sa.String(255), nullable=False),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("simulated", sa.Boolean, nullable=False),
        sa.Column("policy", sa.String(32)),
        sa.Column("scenario", sa.String(255), nullable=False),
        sa.Column("measurement", sa.String(255), nullable=False),
        sa.Column("test", sa.String(64), nullable=False),
        sa.Column("series_label", sa.String(255), nullable=False),
        sa.Column("count", sa.BigInteger, nullable=False),
        sa.Column("max_ns", sa.BigInteger),
        sa.Column("p99_ns", sa.BigInteger),
        sa.Column("p999_ns", sa.BigInteger),
        sa.Column("measured_ns", sa.BigInteger),
        sa.Column("exceed", sa.Text, nullable=False),
        sa.Column("threshold_ns", sa.BigInteger),
        sa.Column("above_threshold", sa.BigInteger),
        sa.Column("overruns", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_run_cells_board_suite", "run_cells",
                    ["board", "suite", "started_at"])
    op.create_index("ix_run_cells_run_id", "run_cells", ["run_id"])
    op.create_index("ix_run_cells_measurement_id", "run_cells", ["measurement_id"])
    op.create_index("ix_run_cells_matrix", "run_cells",
                    ["simulated", "board", "kernel", "suite"])
    _backfill(op.get_bind())


def _backfill(conn: Any) -> None:
    """Name every stored run's board and summarize its measurements."""
    from rtbench.bundle import board_of
    from rtbench.store import schema as t

    for run in conn.execute(sa.select(t.runs.c.id, t.runs.c.target, t.hosts.c.hostname)
                            .join(t.hosts, t.hosts.c.id == t.runs.c.host_id)).all():
        conn.execute(sa.update(t.runs).where(t.runs.c.id == run.id)
                     .values(board=board_of(run.target, run.hostname)))
    r = t.runs.c
    for run in conn.execute(sa.select(r.id, r.board, r.suite, r.kernel, r.started_at,
                                      r.simulated)).all():
        _backfill_run(conn, run)


# the columns as revision 0003 left them (later revisions may add others)
_MEASUREMENT_COLUMNS = ("id", "name", "test", "status", "exit_code", "reason", "simulated",
                        "probe_version", "t0_unix_ns", "measured_ns", "elapsed_ns", "data",
                        "start")
_SERIES_COLUMNS = ("series_index", "label", "cpu", "count", "min_ns", "max_ns", "sum_ns",
                   "overruns", "early", "exceed")


def _backfill_run(conn: Any, run: Any) -> None:
    """The run_cells rows of one stored run, from its series and histograms."""
    from rtbench.bundle import MeasurementDetail, SeriesDetail
    from rtbench.store import schema as t
    from rtbench.store.cells import RunFacts, insert_cells

    started = run.started_at
    facts = RunFacts(run_id=run.id, board=run.board, suite=run.suite, kernel=run.kernel,
                     started_at=started, simulated=bool(run.simulated))
    for m in conn.execute(
            sa.select(*(t.measurements.c[name] for name in _MEASUREMENT_COLUMNS),
                      t.scenarios.c.name.label("scenario"))
            .join(t.scenarios, t.scenarios.c.id == t.measurements.c.scenario_id)
            .where(t.scenarios.c.run_id == run.id)).all():
        hists: dict[int, list[tuple[int, int]]] = {}
        for b in conn.execute(sa.select(t.hist_buckets.c.series_index,
                                        t.hist_buckets.c.bucket, t.hist_buckets.c.count)
                              .where(t.hist_buckets.c.measurement_id == m.id)
                              .order_by(t.hist_buckets.c.bucket)):
            hists.setdefault(b.series_index, []).append((b.bucket, b._mapping["count"]))
        detail = MeasurementDetail(
            id=m.id, name=m.name, test=m.test, params={}, command=[], status=m.status,
            exit_code=m.exit_code, reason=m.reason, thresholds_ns=[],
            simulated=bool(m.simulated), probe_version=m.probe_version,
            t0_unix_ns=m.t0_unix_ns, measured_ns=m.measured_ns, elapsed_ns=m.elapsed_ns,
            verdicts=[], data=json.loads(m.data), start=json.loads(m.start))
        for s in conn.execute(sa.select(*(t.series.c[name] for name in _SERIES_COLUMNS))
                              .where(t.series.c.measurement_id == m.id)
                              .order_by(t.series.c.series_index)):
            detail.series.append(SeriesDetail(
                index=s.series_index, label=s.label, cpu=s.cpu,
                count=int(s._mapping["count"]), min_ns=s.min_ns, max_ns=s.max_ns,
                sum_ns=int(s.sum_ns), overruns=int(s.overruns), early=int(s.early),
                exceed=[(int(a), int(b)) for a, b in json.loads(s.exceed)], worst=[],
                warmup={}, hist=hists.get(s.series_index, [])))
        insert_cells(conn, facts, m.scenario, m.id, detail)


def downgrade() -> None:
    """Drop them again."""
    for name in ("ix_run_cells_matrix", "ix_run_cells_measurement_id",
                 "ix_run_cells_run_id", "ix_run_cells_board_suite"):
        op.drop_index(name, table_name="run_cells")
    op.drop_table("run_cells")
    op.drop_index("ix_runs_board", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("board")
