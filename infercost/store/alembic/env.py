"""Alembic's environment for infercost's store: one set of revisions (``versions/``) for SQLite and PostgreSQL.

``infercost.store.connect`` runs these itself, inside the transaction that holds its migration lock, and passes
that connection in ``config.attributes["connection"]``. A developer can also run ``alembic`` by hand:
``alembic -c infercost/store/alembic.ini -x db=URL upgrade heads`` (or ``revision --autogenerate``).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from infercost.store.schema import metadata

config = context.config


def _run(connection) -> None:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True,
                      compare_server_default=True)
    with context.begin_transaction():  # a no-op inside the caller's transaction, which commits everything at once
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    url = context.get_x_argument(as_dictionary=True).get("db") or config.get_main_option("sqlalchemy.url")
    with create_engine(url).begin() as connection:
        _run(connection)
