"""cell_groups: the matrix's aggregate of run_cells per board x kernel x suite x simulated
x emulated, kept in the transaction that writes or deletes the cells
(rtbench/store/cellgroups.py), so that GET /matrix and the boards list read tens of rows
instead of every run's cells (issue 33: at 50,000 runs the matrix aggregated 100,000
rows per request).  Filled here from the cells already stored.  Also a partial index of
the short runs (scale < 1), which the matrix's run markers look for: without it every
request read every run's row.

Revision ID: 0007_cell_groups
Revises: 0006_check_index
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_cell_groups"
down_revision = "0006_check_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create cell_groups and fill it from run_cells; add ix_runs_short."""
    op.create_table(
        "cell_groups",
        sa.Column("board", sa.String(255), primary_key=True),
        sa.Column("kernel", sa.String(255), primary_key=True),
        sa.Column("suite", sa.String(255), primary_key=True),
        sa.Column("simulated", sa.Boolean, primary_key=True),
        sa.Column("emulated", sa.Boolean, primary_key=True),
        sa.Column("runs", sa.Integer, nullable=False),
        sa.Column("newest_run_id", sa.Integer, nullable=False),
        sa.Column("worst_max_ns", sa.BigInteger),
        sa.Column("worst_p999_ns", sa.BigInteger),
        sa.Column("over_cells", sa.Integer, nullable=False),
        sa.Column("under_cells", sa.Integer, nullable=False),
        sa.Column("unknown_cells", sa.Integer, nullable=False),
        sa.Column("threshold_ns", sa.BigInteger),
    )
    from rtbench.store.cellgroups import rebuild_groups

    rebuild_groups(op.get_bind())
    op.create_index("ix_runs_short", "runs", ["board", "suite", "kernel", "scale"],
                    sqlite_where=sa.text("scale < 1"),
                    postgresql_where=sa.text("scale < 1"))


def downgrade() -> None:
    """Drop ix_runs_short and cell_groups."""
    op.drop_index("ix_runs_short", table_name="runs")
    op.drop_table("cell_groups")
