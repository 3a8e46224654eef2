"""The store's tables, written once for SQLite and PostgreSQL with SQLAlchemy Core.

Why SQLAlchemy Core with Alembic, and not an ORM or DDL per engine: the store's code is a handful of set-based
statements (upserts on a partial unique index, batched inserts, aggregate reports) whose SQL we want to see and
keep; Core writes each once and compiles it for each engine (``INSERT ... ON CONFLICT`` included), with no object
identity or session state to reason about across processes. Alembic is SQLAlchemy's own migration tool: numbered,
transactional revisions for both engines, and ``compare_metadata`` checks that the migrations build exactly these
tables (``tests/store/test_schema.py``). Hand-written DDL per engine would be two schemas that drift apart.

These tables describe the schema as the migrations in ``infercost/store/alembic/versions`` leave it: a change to the
schema is a new revision there and the matching change here.
"""

from __future__ import annotations

from sqlalchemy import (
    REAL,
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)

metadata = MetaData()

# A surrogate key that counts up: INTEGER PRIMARY KEY (the rowid) on SQLite, BIGSERIAL on PostgreSQL.
SerialId = BigInteger().with_variant(Integer(), "sqlite")
# A float64: REAL on SQLite (as the hand-written migrations declared it), double precision on PostgreSQL.
Real = Float().with_variant(REAL(), "sqlite")

runs = Table(
    "runs", metadata,
    Column("id", Text, primary_key=True),
    Column("created_at", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("backend", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("config", Text, nullable=False),
    Column("hardware", Text, nullable=False),
    Column("engine", Text, nullable=False),
)

levels = Table(
    "levels", metadata,
    Column("run_id", Text, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("repeat", Integer, nullable=False),
    Column("pattern", Text, nullable=False),
    Column("load", Real, nullable=False),
    Column("status", Text, nullable=False),
    Column("summary", Text),
    PrimaryKeyConstraint("run_id", "idx", "repeat"),
)

requests = Table(
    "requests", metadata,
    Column("id", SerialId, primary_key=True),
    Column("run_id", Text, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("repeat", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("phase", Text, nullable=False),
    Column("session", Integer, nullable=False),
    Column("t0", Real),
    Column("t_first", Real),
    Column("t_last", Real),
    Column("itl", LargeBinary, nullable=False),
    Column("n_in", Integer),
    Column("n_in_source", Text),
    Column("n_out", Integer),
    Column("n_out_source", Text),
    Column("n_out_expected", Integer),
    Column("status", Text, nullable=False),
    Column("error", Text),
)
MEASURED = text("phase = 'measure'")
MEASURED_KEY = ("run_id", "idx", "repeat", "seq")  # a measured request exists once: a resumed sweep cannot repeat it
Index("requests_measured", *(requests.c[name] for name in MEASURED_KEY), unique=True, sqlite_where=MEASURED,
      postgresql_where=MEASURED)
Index("requests_level", requests.c.run_id, requests.c.idx, requests.c.repeat)

scenarios = Table(
    "scenarios", metadata,
    Column("id", SerialId, primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("profile", Text, nullable=False),
    Column("notes", Text, nullable=False, server_default=text("''")),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
)

batch_jobs = Table(
    "batch_jobs", metadata,
    Column("id", Text, primary_key=True),
    Column("created_at", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("control", Text),
    Column("input_path", Text, nullable=False),
    Column("input_sha256", Text, nullable=False),
    Column("out_dir", Text, nullable=False),
    Column("config", Text, nullable=False),
    Column("budget", Text, nullable=False),
    Column("actual", Text),
    Column("pid", Integer),
    Column("heartbeat_at", Real),  # the store's clock (epoch seconds) at the last beat
    Column("active_s", Real, nullable=False, server_default=text("0")),
    Column("host", Text),  # the host (and pid namespace) of the process running it, where ``pid`` means something
    Column("heartbeat_s", Real),  # how often that process beats: its job is alive while a beat is this fresh × 3
)

batch_shards = Table(
    "batch_shards", metadata,
    Column("job_id", Text, ForeignKey("batch_jobs.id", ondelete="CASCADE"), nullable=False),
    Column("shard", Integer, nullable=False),
    Column("first_idx", Integer, nullable=False),
    Column("records", Integer, nullable=False),
    Column("status", Text, nullable=False),
    Column("files", Text, nullable=False, server_default=text("'[]'")),
    PrimaryKeyConstraint("job_id", "shard"),
)

batch_records = Table(
    "batch_records", metadata,
    Column("job_id", Text, ForeignKey("batch_jobs.id", ondelete="CASCADE"), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("shard", Integer, nullable=False),
    Column("custom_id", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("attempts", Integer, nullable=False, server_default=text("0")),
    Column("reason", Text),
    Column("n_in_est", Integer, nullable=False),
    Column("max_out", Integer),
    Column("n_in", Integer),
    Column("n_out", Integer),
    Column("usage_reported", Integer, nullable=False, server_default=text("0")),
    Column("cost", Real, nullable=False, server_default=text("0")),
    Column("latency_ms", Real),
    Column("status_code", Integer),
    Column("request_id", Text),
    Column("body", Text),
    Column("pass", Integer, nullable=False, server_default=text("0")),
    PrimaryKeyConstraint("job_id", "idx"),
)
Index("batch_records_custom_id", batch_records.c.job_id, batch_records.c.custom_id, unique=True)
Index("batch_records_shard", batch_records.c.job_id, batch_records.c.shard, batch_records.c.state)
