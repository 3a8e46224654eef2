"""A saved what-if scenario: a named workload profile (JSON, as the person wrote it) with notes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "m004_scenarios"
down_revision = 'm003_requests'
branch_labels = None
depends_on = None

# A surrogate key that counts up: INTEGER PRIMARY KEY (the rowid) on SQLite, BIGSERIAL on PostgreSQL.
SERIAL_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

def upgrade() -> None:
    op.create_table(
        "scenarios",
        sa.Column("id", SERIAL_ID, primary_key=True),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        sa.Column("profile", sa.Text, nullable=False),
        sa.Column("notes", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("scenarios")
