"""One load level (a concurrency, batch size or rate) and repeat of a run, with its summary once done."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "m002_levels"
down_revision = 'm001_runs'
branch_labels = None
depends_on = None

# A float64: REAL on SQLite, double precision on PostgreSQL.
FLOAT64 = sa.Float().with_variant(sa.REAL(), "sqlite")

def upgrade() -> None:
    op.create_table(
        "levels",
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("repeat", sa.Integer, nullable=False),
        sa.Column("pattern", sa.Text, nullable=False),
        sa.Column("load", FLOAT64, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("summary", sa.Text),
        sa.PrimaryKeyConstraint("run_id", "idx", "repeat"),
    )


def downgrade() -> None:
    op.drop_table("levels")
