"""Initial schema: hosts, runs, scenarios, measurements, series,
histogram buckets, windows, spikes.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def _fk(table: str) -> sa.ForeignKey:
    """A cascading foreign key to table.id."""
    return sa.ForeignKey(f"{table}.id", ondelete="CASCADE")


def upgrade() -> None:
    """Create every table of the first schema version."""
    op.create_table(
        "hosts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("arch", sa.String(64), nullable=False),
        sa.Column("cpu_model", sa.String(255), nullable=False),
        sa.Column("first_seen", TZ, nullable=False),
        sa.UniqueConstraint("hostname", "arch", "cpu_model",
                            name="uq_hosts_identity"),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("host_id", sa.Integer, sa.ForeignKey("hosts.id"),
                  nullable=False),
        sa.Column("suite", sa.String(255), nullable=False),
        sa.Column("suite_source", sa.Text, nullable=False),
        sa.Column("scale", sa.Float, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("finished_at", TZ),
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("kernel", sa.String(255), nullable=False),
        sa.Column("simulated", sa.Boolean, nullable=False),
        sa.Column("tool_versions", sa.Text, nullable=False),
        sa.Column("sysinfo", sa.Text, nullable=False),
        sa.Column("preflight", sa.Text, nullable=False),
        sa.Column("command_line", sa.Text, nullable=False),
    )
    op.create_index("ix_runs_started_at", "runs", ["started_at"])
    op.create_table(
        "scenarios",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, _fk("runs"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("loads", sa.Text, nullable=False),
        sa.Column("load_cpus", sa.String(255)),
        sa.Column("measure_cpus", sa.String(255)),
        sa.Column("intensity", sa.Text),
    )
    op.create_index("ix_scenarios_run_id", "scenarios", ["run_id"])
    op.create_table(
        "measurements",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("scenario_id", sa.Integer, _fk("scenarios"),
                  nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("test", sa.String(64), nullable=False),
        sa.Column("params", sa.Text, nullable=False),
        sa.Column("command", sa.Text, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("exit_code", sa.Integer),
        sa.Column("reason", sa.Text),
        sa.Column("thresholds_ns", sa.Text, nullable=False),
        sa.Column("simulated", sa.Boolean, nullable=False),
        sa.Column("probe_version", sa.String(64), nullable=False),
        sa.Column("t0_unix_ns", sa.BigInteger),
        sa.Column("measured_ns", sa.BigInteger),
        sa.Column("elapsed_ns", sa.BigInteger),
        sa.Column("verdicts", sa.Text, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("start", sa.Text, nullable=False),
        sa.Column("created_at", TZ, nullable=False),
    )
    op.create_index("ix_measurements_scenario_id", "measurements",
                    ["scenario_id"])
    op.create_table(
        "series",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("measurement_id", sa.Integer, _fk("measurements"),
                  nullable=False),
        sa.Column("series_index", sa.Integer, nullable=False),
        sa.Column("label", sa.String(255), nullable=False),
        sa.Column("cpu", sa.Integer),
        sa.Column("count", sa.BigInteger, nullable=False),
        sa.Column("min_ns", sa.BigInteger),
        sa.Column("max_ns", sa.BigInteger),
        sa.Column("sum_ns", sa.BigInteger, nullable=False),
        sa.Column("overruns", sa.BigInteger, nullable=False),
        sa.Column("early", sa.BigInteger, nullable=False),
        sa.Column("exceed", sa.Text, nullable=False),
        sa.Column("worst", sa.Text, nullable=False),
        sa.Column("warmup", sa.Text, nullable=False),
        sa.Column("spikes_dropped", sa.BigInteger, nullable=False),
        sa.Column("raw_dropped", sa.BigInteger, nullable=False),
        sa.Column("error", sa.Text),
        sa.UniqueConstraint("measurement_id", "series_index",
                            name="uq_series_measurement_index"),
    )
    op.create_table(
        "hist_buckets",
        sa.Column("measurement_id", sa.Integer, _fk("measurements"),
                  primary_key=True),
        sa.Column("series_index", sa.Integer, primary_key=True),
        sa.Column("bucket", sa.Integer, primary_key=True),
        sa.Column("count", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "windows",
        sa.Column("measurement_id", sa.Integer, _fk("measurements"),
                  primary_key=True),
        sa.Column("series_index", sa.Integer, primary_key=True),
        sa.Column("window_index", sa.Integer, primary_key=True),
        sa.Column("warmup", sa.Boolean, nullable=False),
        sa.Column("start_ns", sa.BigInteger, nullable=False),
        sa.Column("end_ns", sa.BigInteger, nullable=False),
        sa.Column("count", sa.BigInteger, nullable=False),
        sa.Column("min_ns", sa.BigInteger),
        sa.Column("max_ns", sa.BigInteger),
        sa.Column("sum_ns", sa.BigInteger, nullable=False),
        sa.Column("overruns", sa.BigInteger, nullable=False),
        sa.Column("early", sa.BigInteger, nullable=False),
        sa.Column("exceed", sa.Text, nullable=False),
        sa.Column("hist", sa.Text, nullable=False),
    )
    op.create_table(
        "spikes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("measurement_id", sa.Integer, _fk("measurements"),
                  nullable=False),
        sa.Column("series_index", sa.Integer, nullable=False),
        sa.Column("t_ns", sa.BigInteger, nullable=False),
        sa.Column("latency_ns", sa.BigInteger, nullable=False),
        sa.Column("threshold_ns", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_spikes_measurement_id", "spikes", ["measurement_id"])


def downgrade() -> None:
    """Drop every table (children first)."""
    op.drop_index("ix_spikes_measurement_id", table_name="spikes")
    for table in ("spikes", "windows", "hist_buckets", "series"):
        op.drop_table(table)
    op.drop_index("ix_measurements_scenario_id", table_name="measurements")
    op.drop_table("measurements")
    op.drop_index("ix_scenarios_run_id", table_name="scenarios")
    op.drop_table("scenarios")
    op.drop_index("ix_runs_started_at", table_name="runs")
    op.drop_table("runs")
    op.drop_table("hosts")
