"""The results server: upload tokens (stored hashed) and the indexes the runs
list filters on (host, suite, kernel, status); on PostgreSQL, windows' histogram
texts compressed with lz4 where the server has it (pglz made storing a one-hour
run's 7 200 windows 2-3x slower).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create the tokens table and the runs indexes."""
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("token_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("revoked_at", TZ),
        sa.Column("last_used_at", TZ),
        sa.UniqueConstraint("name", name="uq_tokens_name"),
        sa.UniqueConstraint("token_sha256", name="uq_tokens_sha256"),
    )
    op.create_index("ix_runs_host_id", "runs", ["host_id"])
    op.create_index("ix_runs_suite", "runs", ["suite"])
    op.create_index("ix_runs_kernel", "runs", ["kernel"])
    op.create_index("ix_runs_status", "runs", ["status"])
    if _has_lz4():
        op.execute("ALTER TABLE windows ALTER COLUMN hist SET COMPRESSION lz4")


def _has_lz4() -> bool:
    """True on a PostgreSQL server (14 or newer) built with lz4."""
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return False
    return bool(conn.execute(sa.text(
        "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
        "AND 'lz4' = ANY(enumvals)")).scalar())


def downgrade() -> None:
    """Drop them again."""
    if _has_lz4():
        op.execute("ALTER TABLE windows ALTER COLUMN hist SET COMPRESSION default")
    for name in ("ix_runs_status", "ix_runs_kernel", "ix_runs_suite", "ix_runs_host_id"):
        op.drop_index(name, table_name="runs")
    op.drop_table("tokens")
