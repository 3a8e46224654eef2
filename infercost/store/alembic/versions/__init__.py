"""The store's Alembic revisions, oldest first: m001_runs .. (never edit one that has shipped)."""
