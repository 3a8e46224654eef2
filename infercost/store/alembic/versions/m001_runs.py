"""A run: one benchmark (or one imported result file) with its configuration and fingerprints as JSON."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "m001_runs"
down_revision = None
branch_labels = None
depends_on = None

def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("backend", sa.Text, nullable=False),
        sa.Column("model", sa.Text, nullable=False),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("hardware", sa.Text, nullable=False),
        sa.Column("engine", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("runs")
