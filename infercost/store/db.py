"""Opening a store: a SQLite file (the default, no server) or a shared PostgreSQL database, migrated on open.

Both are a SQLAlchemy engine behind one ``Store`` object, which every function of ``infercost.store`` takes as
``db`` and which behaves like the sqlite3 connection it replaced: ``with db:`` is one transaction (a block inside
it, a savepoint), a statement outside one commits at once, rows answer ``row["column"]`` and ``row[0]``.

SQLite keeps its pragmas: WAL with ``synchronous=NORMAL`` (a commit survives SIGKILL of this process, not a power
cut, without an fsync per request, so committing every request as it completes stays cheap) and foreign keys on.
Python's sqlite3 module would open transactions behind SQLAlchemy's back (and never before DDL), so it is told to
keep out of it and ``BEGIN`` is ours: a ``with db:`` block starts ``BEGIN IMMEDIATE``, taking the write lock before
it reads, so two writers queue on the busy timeout instead of one failing at once with "database is locked" when
both try to upgrade a read lock (the SQLite recipe in SQLAlchemy's pysqlite documentation).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Table, create_engine, event, exc, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import NullPool

from infercost.errors import InputError
from infercost.home import default_db_path
from infercost.store.migrations import pending, upgrade

POSTGRES_SCHEMES = {"postgresql", "postgres", "postgresql+psycopg"}
CONNECT_TIMEOUT_S = 10  # an unreachable PostgreSQL server is an error after this long, not a hang
# SQLite answers "database is locked" at once, without waiting out the busy timeout, on some lock changes (switching
# a new file to WAL, WAL recovery) that processes opening one new database at the same moment run into.
LOCKED_RETRY_S = 30.0
BUSY_TIMEOUT_S = 30  # how long a SQLite writer waits for another's transaction to end
_WRITE = "infercost_write"  # in Connection.info while a ``with db:`` block begins: BEGIN IMMEDIATE on SQLite


class Row(Sequence):
    """One result row by position (``row[0]``) or by column name (``row["name"]``); ``dict(row)`` works."""

    __slots__ = ("_values", "_index")

    def __init__(self, values: tuple, index: dict[str, int]) -> None:
        self._values = values
        self._index = index

    def __getitem__(self, key):  # type: ignore[override]
        return self._values[self._index[key]] if isinstance(key, str) else self._values[key]

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        return list(self._index)

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._index, self._values, strict=True))!r})"


class Rows:
    """A statement's rows, read in full before its transaction ends, and how many rows it changed."""

    def __init__(self, rows: list[Row], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def __iter__(self) -> Iterator[Row]:
        return iter(self._rows)

    def fetchone(self) -> Row | None:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Row]:
        return list(self._rows)

    def scalar(self) -> Any:
        return self._rows[0][0] if self._rows else None


class Store:
    """One open store, SQLite or PostgreSQL. ``label`` names it for people and never holds a password."""

    def __init__(self, engine: Engine, label: str) -> None:
        self.engine = engine
        self.label = label
        self.dialect = engine.dialect.name  # "sqlite" or "postgresql"
        self._connection: Connection = engine.connect()
        self._depth = 0
        self._savepoints: list[Any] = []

    def execute(self, statement: Any, params: Any = None) -> Rows:
        """Run a SQLAlchemy statement, or SQL text (``:name`` parameters with a dict; the driver's own paramstyle
        with a tuple), inside the open ``with db:`` block or, outside one, in a transaction of its own."""
        if self._depth:
            return self._run(statement, params)
        with self._connection.begin():
            return self._run(statement, params)

    def executemany(self, statement: Any, rows: Iterable[Any]) -> Rows:
        rows = list(rows)
        return self.execute(statement, rows) if rows else Rows([], 0)

    def _run(self, statement: Any, params: Any) -> Rows:
        if isinstance(statement, str) and isinstance(params, tuple | list) and not _dicts(params):
            result = self._connection.exec_driver_sql(statement, tuple(params))
        else:
            result = self._connection.execute(text(statement) if isinstance(statement, str) else statement, params)
        if not result.returns_rows:
            return Rows([], result.rowcount)
        index = {key: i for i, key in enumerate(result.keys())}
        return Rows([Row(tuple(row), index) for row in result], result.rowcount)

    def __enter__(self) -> Store:
        if self._depth:  # a block inside a block: a savepoint, so its error undoes only its own part
            self._savepoints.append(self._connection.begin_nested())
        else:
            self._connection.info[_WRITE] = True
            try:
                self._connection.begin()
            finally:
                self._connection.info.pop(_WRITE, None)
        self._depth += 1
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self._depth -= 1
        if self._depth:
            savepoint = self._savepoints.pop()
            if kind is None:
                savepoint.commit()
            else:
                savepoint.rollback()
        elif kind is None:
            self._connection.commit()
        else:
            self._connection.rollback()

    @property
    def connection(self) -> Connection:
        """The SQLAlchemy connection, for code that needs it whole (migrations)."""
        return self._connection

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def close(self) -> None:
        self._connection.close()
        self.engine.dispose()


def set_lock_wait(db: Store, seconds: float) -> None:
    """How long this store's statements wait for another writer's lock before failing (SQLite's busy timeout,
    PostgreSQL's ``lock_timeout``), for a caller that retries on its own rather than block for the default."""
    milliseconds = max(1, int(seconds * 1000))
    if db.dialect == "sqlite":
        db.execute(f"PRAGMA busy_timeout = {milliseconds}")
    else:
        db.execute(f"SET lock_timeout = {milliseconds}")


def upsert(dialect: str, table: Table) -> Any:
    """An INSERT for engine ``dialect`` (``db.dialect``) that can take ``.on_conflict_do_nothing()`` /
    ``.on_conflict_do_update()``: both engines have ``INSERT ... ON CONFLICT``, each in its own SQLAlchemy module."""
    return (postgresql if dialect == "postgresql" else sqlite).insert(table)


def storable_text(value: Any) -> Any:
    """Text a server sent, storable on both engines: PostgreSQL's text cannot hold NUL, so it becomes U+FFFD (the
    replacement character) on both, rather than a record lost to a hostile server's error body."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value


def _dicts(params: Sequence[Any]) -> bool:
    return bool(params) and isinstance(params[0], dict)


def resolve(target: str | Path | None = None) -> str | Path:
    """What ``connect`` opens: ``target``, else ``$INFERCOST_DB``, else the home's ``infercost.db``."""
    return target or os.environ.get("INFERCOST_DB") or default_db_path()


def describe(target: str | Path | None = None) -> str:
    """Which store ``connect(target)`` opens, for people: ``SQLite /path`` or ``PostgreSQL user@host:port/db``,
    never a password."""
    target = resolve(target)
    if not is_server(target):
        return f"SQLite {Path(str(target).removeprefix('sqlite:///'))}"
    try:
        url = _postgres_url(str(target))
    except InputError:
        return "PostgreSQL (an invalid URL)"
    return f"PostgreSQL {_postgres_label(url)}"


def connect(target: str | Path | None = None) -> Store:
    """Open (creating and migrating if needed) the store at ``target``: a file path, ``sqlite:///PATH`` or
    ``postgresql://USER@HOST[:PORT]/DB`` (the password from ``PGPASSWORD`` or ``~/.pgpass``). A bad URL, an
    unreachable server or a file that is not a database is an ``InputError("db", ...)`` naming the reason."""
    target = resolve(target)
    if is_server(target):
        url = _postgres_url(str(target))
        return _open(_postgres_engine(url), _postgres_label(url), str(url.password or ""))
    path = Path(str(target).removeprefix("sqlite:///")) if _is_url(target) else Path(target)
    if path.exists() and path.is_dir():
        raise InputError("db", f"{path} is a directory, not a database file")
    return _open(_sqlite_engine(path), str(path), "")


def _open(engine: Engine, label: str, password: str) -> Store:
    deadline = time.monotonic() + LOCKED_RETRY_S
    while True:
        try:
            return _migrated(Store(engine, label))
        except exc.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                engine.dispose()
                raise InputError("db", f"{label}: {_reason(error, password)}") from None
            time.sleep(0.02)  # another process is switching the new file to WAL or migrating it: try again
        except exc.DBAPIError as error:
            engine.dispose()
            raise InputError("db", f"{label}: {_reason(error, password)}") from None


def apply_migrations(db: Store) -> list[str]:
    """Apply the revisions the store lacks, under the migration lock; returns those applied now (oldest first).
    The usual open is one read and no lock."""
    todo = pending(db.connection)
    db.connection.rollback()  # end the check's read: hold no snapshot or lock, and let ``with db:`` begin
    if not todo:
        return []
    with db:
        return upgrade(db.connection)


def _migrated(db: Store) -> Store:
    try:
        apply_migrations(db)
    except BaseException:
        db.close()
        raise
    return db


def _reason(error: exc.DBAPIError, password: str) -> str:
    """The driver's first line, without the statement SQLAlchemy appends, and never the password."""
    reason = (str(error.orig).strip().splitlines() or ["unknown error"])[0]
    return reason.replace(password, "***") if password else reason


def store_failed(error: exc.DBAPIError, target: str | Path | None = None) -> InputError:
    """What to say when the store fails after it opened (a server that went away mid-sweep): which store, the
    driver's reason, and that what was committed before is still there (each request commits as it is recorded)."""
    target = resolve(target)
    password = ""
    if is_server(target):
        try:
            password = _postgres_url(str(target)).password or ""
        except InputError:
            pass
    return InputError("db", f"{describe(target)}: {_reason(error, password)} (what was stored before is kept)")


def _is_url(target: str | Path) -> bool:
    return isinstance(target, str) and "://" in target


def is_server(target: str | Path | None = None) -> bool:
    """Whether ``connect(target)`` opens a database server (PostgreSQL) rather than a SQLite file."""
    target = resolve(target)
    return _is_url(target) and not str(target).startswith("sqlite:")


def _postgres_url(target: str) -> URL:
    scheme = target.split("://", 1)[0].lower()
    if scheme not in POSTGRES_SCHEMES:
        raise InputError("db", f"{scheme}:// is not a store infercost opens; give a file path or "
                               "postgresql://USER@HOST[:PORT]/DB")
    try:
        url = make_url("postgresql+psycopg://" + target.split("://", 1)[1])
        url.port  # noqa: B018 - a port that is not a number raises here
    except (exc.ArgumentError, ValueError) as error:
        reason = str(error).split(":", 1)[0] if "port" not in str(error).lower() else "the port is not a number"
        raise InputError("db", f"not a valid PostgreSQL URL ({reason}); expected postgresql://USER@HOST[:PORT]/DB")\
            from None
    if not url.database:
        raise InputError("db", "the PostgreSQL URL names no database; expected postgresql://USER@HOST[:PORT]/DB")
    return url


def _postgres_label(url: URL) -> str:
    user = f"{url.username}@" if url.username else ""
    host = url.host or url.query.get("host") or "localhost"
    port = f":{url.port}" if url.port else ""
    return f"postgresql://{user}{host}{port}/{url.database}"


def _postgres_engine(url: URL) -> Engine:
    # NullPool: a Store holds one connection for its life, as a sqlite3 connection did; a pool would keep idle
    # server connections open after close().
    return create_engine(url, poolclass=NullPool,
                         connect_args={"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "infercost"})


def _sqlite_engine(path: Path) -> Engine:
    engine = create_engine(f"sqlite:///{path}", poolclass=NullPool,
                           connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False})
    event.listen(engine, "connect", _sqlite_pragmas)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # sqlite3 emits no BEGIN of its own; _sqlite_begin does
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON"):
        dbapi_connection.execute(f"PRAGMA {pragma}")


def _sqlite_begin(connection: Connection) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.info.get(_WRITE) else "BEGIN")
