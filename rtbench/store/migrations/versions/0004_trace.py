"""Trace records of spikes and the trace summary of a measurement (issue 23).

Revision ID: 0004_trace
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_trace"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create trace_spikes and trace_info."""
    op.create_table(
        "trace_spikes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("measurement_id", sa.Integer,
                  sa.ForeignKey("measurements.id", ondelete="CASCADE"), nullable=False),
        sa.Column("series_index", sa.Integer),
        sa.Column("t_ns", sa.BigInteger),
        sa.Column("latency_ns", sa.BigInteger),
        sa.Column("record", sa.Text, nullable=False),
    )
    op.create_index("ix_trace_spikes_measurement_id", "trace_spikes", ["measurement_id"])
    op.create_table(
        "trace_info",
        sa.Column("measurement_id", sa.Integer,
                  sa.ForeignKey("measurements.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("info", sa.Text, nullable=False),
    )


def downgrade() -> None:
    """Drop them again."""
    op.drop_table("trace_info")
    op.drop_index("ix_trace_spikes_measurement_id", table_name="trace_spikes")
    op.drop_table("trace_spikes")
