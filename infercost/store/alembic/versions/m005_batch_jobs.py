"""Batch jobs (``infercost/batch``): a job, its shards and one row per input record, each record's outcome committed
as it completes so a killed job resumes without losing or resending a finished record. ``body`` is the response
body (JSON text) the shard's output file is written from; the input itself stays in the input file, whose SHA-256
(``input_sha256``) a resume checks."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "m005_batch_jobs"
down_revision = 'm004_scenarios'
branch_labels = None
depends_on = None

# A float64: REAL on SQLite, double precision on PostgreSQL.
FLOAT64 = sa.Float().with_variant(sa.REAL(), "sqlite")

def upgrade() -> None:
    zero = sa.text("0")
    op.create_table(
        "batch_jobs",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("control", sa.Text),
        sa.Column("input_path", sa.Text, nullable=False),
        sa.Column("input_sha256", sa.Text, nullable=False),
        sa.Column("out_dir", sa.Text, nullable=False),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("budget", sa.Text, nullable=False),
        sa.Column("actual", sa.Text),
        sa.Column("pid", sa.Integer),
        sa.Column("heartbeat_at", FLOAT64),
        sa.Column("active_s", FLOAT64, nullable=False, server_default=zero),
    )
    op.create_table(
        "batch_shards",
        sa.Column("job_id", sa.Text, sa.ForeignKey("batch_jobs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("shard", sa.Integer, nullable=False),
        sa.Column("first_idx", sa.Integer, nullable=False),
        sa.Column("records", sa.Integer, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("files", sa.Text, nullable=False, server_default="[]"),
        sa.PrimaryKeyConstraint("job_id", "shard"),
    )
    op.create_table(
        "batch_records",
        sa.Column("job_id", sa.Text, sa.ForeignKey("batch_jobs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("shard", sa.Integer, nullable=False),
        sa.Column("custom_id", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default=zero),
        sa.Column("reason", sa.Text),
        sa.Column("n_in_est", sa.Integer, nullable=False),
        sa.Column("max_out", sa.Integer),
        sa.Column("n_in", sa.Integer),
        sa.Column("n_out", sa.Integer),
        sa.Column("usage_reported", sa.Integer, nullable=False, server_default=zero),
        sa.Column("cost", FLOAT64, nullable=False, server_default=zero),
        sa.Column("latency_ms", FLOAT64),
        sa.Column("status_code", sa.Integer),
        sa.Column("request_id", sa.Text),
        sa.Column("body", sa.Text),
        sa.Column("pass", sa.Integer, nullable=False, server_default=zero),
        sa.PrimaryKeyConstraint("job_id", "idx"),
    )
    op.create_index("batch_records_custom_id", "batch_records", ["job_id", "custom_id"], unique=True)
    op.create_index("batch_records_shard", "batch_records", ["job_id", "shard", "state"])


def downgrade() -> None:
    for table in ("batch_records", "batch_shards", "batch_jobs"):
        op.drop_table(table)
