"""The indexes the check at ingest reads a board's runs with (issue 33): runs by board,
suite, simulated, kernel and start (with status and id: a board's kernels are read from
the index alone), and a partial index of the runs that carry tags (the tagged baseline
is looked for among those only).  Without them a board's candidate runs were found
through the index of one column (the kernel: every board's runs of it; or the suite:
every run) and each of the board's runs was read for its tags: at 50,000 runs tens of
thousands of rows, most from disk, per check.

Revision ID: 0006_check_index
Revises: 0005_emulated
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_check_index"
down_revision = "0005_emulated"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ix_runs_board_suite_kernel and ix_runs_tagged."""
    op.create_index("ix_runs_board_suite_kernel", "runs",
                    ["board", "suite", "simulated", "kernel", "started_at", "status", "id"])
    op.create_index("ix_runs_tagged", "runs", ["board", "suite", "simulated", "status"],
                    sqlite_where=sa.text("tags != '{}'"),
                    postgresql_where=sa.text("tags != '{}'"))


def downgrade() -> None:
    """Drop the two indexes."""
    op.drop_index("ix_runs_tagged", table_name="runs")
    op.drop_index("ix_runs_board_suite_kernel", table_name="runs")
