"""Migrations under real processes, on SQLite and on PostgreSQL: many opening a new database at once, one killed
inside a migration, a new revision applied on the next open, and the migrated schema equal to ``schema.py``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from infercost import store
from infercost.store import migrations
from infercost.store.schema import metadata

REPO = Path(__file__).resolve().parents[2]
OPENERS = 8
DATABASES = 10  # fresh databases each process opens, in the same order: 10 races instead of one


def python(code: str, **env: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **env})


def fresh_targets(engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> list[str]:
    if engine == "sqlite":
        return [str(tmp_path / f"fresh-{n}.db") for n in range(DATABASES)]
    server = request.getfixturevalue("postgres_server")
    return [server.create_database(f"fresh_{os.getpid()}_{n}") for n in range(DATABASES)]


def versions(target: str) -> list[str]:
    db = store.connect(target)
    try:
        return [row[0] for row in db.execute("SELECT version_num FROM alembic_version")]
    finally:
        db.close()


def test_processes_opening_a_new_database_at_once_all_succeed(engine, tmp_path, request) -> None:
    targets = fresh_targets(engine, tmp_path, request)
    go = time.time() + 3  # every process imports first, then all open at the same moment
    openers = [python(f"""
        import time
        from infercost import store
        time.sleep(max(0.0, {go} - time.time()))
        for target in {targets!r}:
            store.connect(target).close()
        """) for _ in range(OPENERS)]
    results = [(opener.wait(timeout=120), opener.stderr.read()) for opener in openers]
    assert [code for code, _ in results] == [0] * OPENERS, [err for _, err in results if err][:1]
    for target in targets:
        assert versions(target) == sorted(store.heads())


def test_latest_names_alembics_head() -> None:
    """``migrations.LATEST`` spares the usual open an import of Alembic; it must be the head Alembic finds."""
    assert migrations.script_heads(tuple(migrations.VERSION_DIRS)) == {migrations.LATEST} == store.heads()


def test_the_migrated_schema_is_the_one_schema_py_describes(store_target) -> None:
    db = store.connect(store_target)
    try:
        context = MigrationContext.configure(db.connection, opts={"compare_server_default": True})
        differences = compare_metadata(context, metadata)
    finally:
        db.close()
    assert differences == []


EXTRA_REVISION = f'''
import os, time
import sqlalchemy as sa
from alembic import op

revision = "m900_extra"
down_revision = "{migrations.LATEST}"

def upgrade():
    op.create_table("extra", sa.Column("x", sa.Integer))
    op.execute("INSERT INTO extra VALUES (1)")
    if os.environ.get("PAUSE_INSIDE"):
        print("inside", flush=True)
        time.sleep(60)

def downgrade():
    op.drop_table("extra")
'''

OPEN_WITH_EXTRA = """
    from pathlib import Path
    from infercost import store
    from infercost.store import migrations

    migrations.VERSION_DIRS.append(Path({versions!r}))
    db = store.connect({target!r})
    print(db.execute("SELECT COUNT(*) FROM extra").fetchone()[0], store.apply_migrations(db), flush=True)
"""


def extra_revision(tmp_path: Path) -> Path:
    versions = tmp_path / "extra-versions"
    versions.mkdir()
    (versions / "m900_extra.py").write_text(EXTRA_REVISION)
    return versions


def test_a_new_revision_is_applied_on_the_next_open_and_once(store_target, tmp_path) -> None:
    store.connect(store_target).close()
    versions = extra_revision(tmp_path)
    opener = python(OPEN_WITH_EXTRA.format(versions=str(versions), target=store_target))
    out, err = opener.communicate(timeout=60)
    assert opener.returncode == 0, err
    assert out.strip() == "1 []"  # the table exists with its row; a second apply finds nothing to do


def test_a_process_killed_inside_a_migration_leaves_a_database_that_opens(store_target, tmp_path) -> None:
    store.connect(store_target).close()
    versions = extra_revision(tmp_path)
    victim = python(OPEN_WITH_EXTRA.format(versions=str(versions), target=store_target), PAUSE_INSIDE="1")
    assert victim.stdout.readline().strip() == "inside"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    db = store.connect(store_target)  # without the revision: the database is as before it started
    try:
        assert not inspect(db.connection).has_table("extra")
        db.connection.rollback()  # end the inspection's read
        assert [row[0] for row in db.execute("SELECT version_num FROM alembic_version")] == [migrations.LATEST]
    finally:
        db.close()
    again = python(OPEN_WITH_EXTRA.format(versions=str(versions), target=store_target))  # with it: applied now
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    assert out.strip() == "1 []"
