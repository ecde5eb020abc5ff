"""data_columns: a measurement's long arrays of numbers stored apart from its data, a
piece of 4,096 elements a row (rtbench/store/datacolumns.py), so that storing an
imported run never writes one database value as large as the file (issue 36: Python
and SQLite each copied it).  Measurements stored before keep their arrays in their data
and read as they did: nothing is moved.

Revision ID: 0008_data_columns
Revises: 0007_cell_groups
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_data_columns"
down_revision = "0007_cell_groups"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create data_columns."""
    op.create_table(
        "data_columns",
        sa.Column("measurement_id", sa.Integer,
                  sa.ForeignKey("measurements.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("column_index", sa.Integer, primary_key=True),
        sa.Column("piece", sa.Integer, primary_key=True),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
    )


def downgrade() -> None:
    """Put each stored column back into its measurement's data, then drop data_columns."""
    import json

    from rtbench.store.datacolumns import fill

    conn = op.get_bind()
    measurements = sa.table("measurements", sa.column("id", sa.Integer),
                            sa.column("data", sa.Text))
    ids = [row[0] for row in conn.execute(sa.text(
        "SELECT DISTINCT measurement_id FROM data_columns"))]
    for mid in ids:
        text = conn.execute(sa.select(measurements.c.data)
                            .where(measurements.c.id == mid)).scalar_one()
        datas = {mid: json.loads(text)}
        fill(conn, datas)
        conn.execute(sa.update(measurements).where(measurements.c.id == mid).values(
            data=json.dumps(datas[mid], separators=(",", ":"), sort_keys=True)))
    op.drop_table("data_columns")
