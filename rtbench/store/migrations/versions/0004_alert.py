"""The lab's alerts: why a run holds no evidence (runs.reason, fleet boards unreachable
or failed), the regression board (regressions) and webhook deliveries.

Revision ID: 0004_alert
Revises: 0004_board
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_alert"
down_revision = "0004_board"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Add runs.reason and create the regressions and webhook_deliveries tables."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("reason", sa.Text))
    op.create_table(
        "regressions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("board", sa.String(255), nullable=False),
        sa.Column("suite", sa.String(255), nullable=False),
        sa.Column("kernel", sa.String(255), nullable=False),
        sa.Column("cell", sa.String(1024), nullable=False),
        sa.Column("metric", sa.String(32), nullable=False),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("baseline_kind", sa.String(32), nullable=False),
        sa.Column("baseline_kernel", sa.String(255)),
        sa.Column("baseline_runs", sa.Text, nullable=False),
        sa.Column("baseline_value", sa.Float),
        sa.Column("value", sa.Float),
        sa.Column("rel", sa.Float),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("checked_at", TZ, nullable=False),
    )
    op.create_index("ix_regressions_run_id", "regressions", ["run_id"])
    op.create_index("ix_regressions_board_outcome", "regressions", ["board", "outcome"])
    op.create_index("ix_regressions_outcome_started", "regressions",
                    ["outcome", "started_at"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("event", sa.String(64), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_code", sa.Integer),
        sa.Column("last_error", sa.Text),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("finished_at", TZ),
    )
    op.create_index("ix_webhook_deliveries_status", "webhook_deliveries", ["status"])


def downgrade() -> None:
    """Drop them again."""
    op.drop_index("ix_webhook_deliveries_status", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    for name in ("ix_regressions_outcome_started", "ix_regressions_board_outcome",
                 "ix_regressions_run_id"):
        op.drop_index(name, table_name="regressions")
    op.drop_table("regressions")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("reason")
