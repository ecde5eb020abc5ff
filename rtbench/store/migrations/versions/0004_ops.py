"""Token scopes (read, upload, admin; existing tokens become upload tokens), login
sessions (the dashboard's cookie holds a random session id, never a token), and the
run_cells index GET /metrics finds each board x suite's newest run with.

Revision ID: 0004_ops
Revises: 0004_alert
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_ops"
# after the regression board (0004_alert)
down_revision = "0004_alert"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Add tokens.scope (existing rows: upload), the sessions table, the index."""
    with op.batch_alter_table("tokens") as batch:
        batch.add_column(sa.Column("scope", sa.String(16), nullable=False,
                                   server_default="upload"))
    op.create_table(
        "sessions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("session_sha256", sa.String(64), nullable=False),
        sa.Column("token_id", sa.Integer, sa.ForeignKey("tokens.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("expires_at", TZ, nullable=False),
        sa.UniqueConstraint("session_sha256", name="uq_sessions_sha256"),
    )
    op.create_index("ix_sessions_token_id", "sessions", ["token_id"])
    op.create_index("ix_run_cells_latest", "run_cells",
                    ["simulated", "board", "suite", "started_at"])


def downgrade() -> None:
    """Drop the index, the sessions table and tokens.scope."""
    op.drop_index("ix_run_cells_latest", table_name="run_cells")
    op.drop_index("ix_sessions_token_id", table_name="sessions")
    op.drop_table("sessions")
    with op.batch_alter_table("tokens") as batch:
        batch.drop_column("scope")
