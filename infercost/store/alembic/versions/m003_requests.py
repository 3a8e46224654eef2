"""One row per request, written as it completes. A measured (run, level, repeat, seq) exists once, so a resumed
sweep cannot duplicate it; warm-up rows are kept but never enter a summary. ``itl`` holds the gaps between
token-bearing chunks as little-endian float64 seconds: packing is microseconds, JSON a millisecond."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "m003_requests"
down_revision = 'm002_levels'
branch_labels = None
depends_on = None

# A float64: REAL on SQLite, double precision on PostgreSQL.
FLOAT64 = sa.Float().with_variant(sa.REAL(), "sqlite")

# A surrogate key that counts up: INTEGER PRIMARY KEY (the rowid) on SQLite, BIGSERIAL on PostgreSQL.
SERIAL_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

def upgrade() -> None:
    op.create_table(
        "requests",
        sa.Column("id", SERIAL_ID, primary_key=True),
        sa.Column("run_id", sa.Text, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("repeat", sa.Integer, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("phase", sa.Text, nullable=False),
        sa.Column("session", sa.Integer, nullable=False),
        sa.Column("t0", FLOAT64),
        sa.Column("t_first", FLOAT64),
        sa.Column("t_last", FLOAT64),
        sa.Column("itl", sa.LargeBinary, nullable=False),
        sa.Column("n_in", sa.Integer),
        sa.Column("n_in_source", sa.Text),
        sa.Column("n_out", sa.Integer),
        sa.Column("n_out_source", sa.Text),
        sa.Column("n_out_expected", sa.Integer),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("error", sa.Text),
    )
    measured = sa.text("phase = 'measure'")
    op.create_index("requests_measured", "requests", ["run_id", "idx", "repeat", "seq"], unique=True,
                    sqlite_where=measured, postgresql_where=measured)
    op.create_index("requests_level", "requests", ["run_id", "idx", "repeat"])


def downgrade() -> None:
    op.drop_table("requests")
