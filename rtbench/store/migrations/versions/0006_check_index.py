"""The index the check at ingest reads a board's runs with: runs by board, suite, kernel
and start time.  Without it a board's candidate runs were found through the index of
one column (the kernel: every board's runs of it; or the suite: every run), which at
50,000 runs read tens of thousands of rows per check (issue 33).

Revision ID: 0006_check_index
Revises: 0005_emulated
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0006_check_index"
down_revision = "0005_emulated"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ix_runs_board_suite_kernel."""
    op.create_index("ix_runs_board_suite_kernel", "runs",
                    ["board", "suite", "kernel", "started_at"])


def downgrade() -> None:
    """Drop ix_runs_board_suite_kernel."""
    op.drop_index("ix_runs_board_suite_kernel", table_name="runs")
