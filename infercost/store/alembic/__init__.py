"""Alembic environment and revisions of the store (a package so that an installed infercost ships them)."""
