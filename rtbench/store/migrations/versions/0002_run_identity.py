"""Run identity and labels: runs.uid (unique across databases), runs.tags and
runs.source (where an imported or uploaded run came from).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add uid, tags and source to runs; give every existing run a uid."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("uid", sa.String(64), nullable=True))
        batch.add_column(sa.Column("tags", sa.Text, nullable=False,
                                   server_default="{}"))
        batch.add_column(sa.Column("source", sa.Text, nullable=False,
                                   server_default="{}"))
    conn = op.get_bind()
    runs = sa.table("runs", sa.column("id", sa.Integer),
                    sa.column("uid", sa.String))
    for (run_id,) in conn.execute(sa.select(runs.c.id)).all():
        conn.execute(sa.update(runs).where(runs.c.id == run_id)
                     .values(uid=uuid.uuid4().hex))
    with op.batch_alter_table("runs") as batch:
        batch.alter_column("uid", existing_type=sa.String(64), nullable=False)
        batch.create_unique_constraint("uq_runs_uid", ["uid"])


def downgrade() -> None:
    """Drop the columns again."""
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint("uq_runs_uid", type_="unique")
        batch.drop_column("source")
        batch.drop_column("tags")
        batch.drop_column("uid")
