"""Batch jobs record which host runs them and how often it beats: a job is alive while its heartbeat is fresh
(three beats), which a process on another host (a container, a second machine on a shared PostgreSQL store) can
tell, where a process id can only be checked on its own host. ``heartbeat_at`` is the store's own clock from now on
(not the writer's), so hosts whose clocks differ agree on a heartbeat's age."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "m006_batch_job_host"
down_revision = "m005_batch_jobs"
branch_labels = None
depends_on = None

# A float64: REAL on SQLite, double precision on PostgreSQL.
FLOAT64 = sa.Float().with_variant(sa.REAL(), "sqlite")


def upgrade() -> None:
    op.add_column("batch_jobs", sa.Column("host", sa.Text))
    op.add_column("batch_jobs", sa.Column("heartbeat_s", FLOAT64))


def downgrade() -> None:
    op.drop_column("batch_jobs", "heartbeat_s")
    op.drop_column("batch_jobs", "host")
