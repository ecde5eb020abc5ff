"""runs.emulated: the run was measured under CPU emulation (QEMU's TCG), so its figures
describe the emulator, not a board (issue 34).  Runs already stored are filled from the
`emulated` fact their sysinfo holds (rtprobe sysinfo writes it since this revision);
older runs have none and stay false.

Revision ID: 0005_emulated
Revises: 0004_ops
Create Date: 2026-11-28
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0005_emulated"
down_revision = "0004_ops"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add runs.emulated (false) and set it where a run's sysinfo says emulated."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("emulated", sa.Boolean, nullable=False,
                                   server_default=sa.false()))
    runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("sysinfo", sa.Text),
                    sa.column("emulated", sa.Boolean))
    conn = op.get_bind()
    marked = [row.id for row in conn.execute(
        sa.select(runs.c.id, runs.c.sysinfo).where(runs.c.sysinfo.like('%"emulated"%')))
        if _says_emulated(row.sysinfo)]
    if marked:
        conn.execute(runs.update().where(runs.c.id.in_(marked)).values(emulated=True))


def _says_emulated(text: str | None) -> bool:
    """Whether a stored sysinfo JSON says "emulated": true."""
    try:
        info = json.loads(text or "{}")
    except ValueError:
        return False
    return isinstance(info, dict) and info.get("emulated") is True


def downgrade() -> None:
    """Drop runs.emulated."""
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("emulated")
