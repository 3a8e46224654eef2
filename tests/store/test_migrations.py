"""Migrations under real processes: many opening a new database at once, and one killed inside a migration."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from infercost import store
from infercost.store.migrations import MIGRATIONS

REPO = Path(__file__).resolve().parents[2]
OPENERS = 8
DATABASES = 25  # fresh databases each process opens, in the same order: 25 races instead of one


def python(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_processes_opening_a_new_database_at_once_all_succeed(tmp_path: Path) -> None:
    go = time.time() + 3  # every process imports first, then all open at the same moment
    openers = [python(f"""
        import time
        from infercost import store
        time.sleep(max(0.0, {go} - time.time()))
        for n in range({DATABASES}):
            store.connect({str(tmp_path)!r} + f"/fresh-{{n}}.db").close()
        """) for _ in range(OPENERS)]
    results = [(opener.wait(timeout=120), opener.stderr.read()) for opener in openers]
    assert [code for code, _ in results] == [0] * OPENERS, [err for _, err in results if err][:1]
    for n in range(DATABASES):
        db = store.connect(tmp_path / f"fresh-{n}.db")
        assert [row[0] for row in db.execute("SELECT name FROM _migrations ORDER BY name")] == sorted(MIGRATIONS)
        db.close()


PAUSING_MIGRATION = """
    import sys, time
    from infercost import store

    @store.migration
    def m003a_extra(db):
        db.execute("CREATE TABLE extra (x INTEGER)")
        db.execute("INSERT INTO extra VALUES (1)")
        if {pause}:
            print("inside", flush=True)
            time.sleep(60)

    db = store.connect({path!r})
    print(db.execute("SELECT COUNT(*) FROM extra").fetchone()[0], flush=True)
"""


def test_a_process_killed_inside_a_migration_leaves_a_database_that_opens(tmp_path: Path) -> None:
    db_path = tmp_path / "crash.db"
    victim = python(PAUSING_MIGRATION.format(pause=True, path=str(db_path)))
    assert victim.stdout.readline().strip() == "inside"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    db = store.connect(db_path)  # without the migration: the database is as before it started
    assert db.execute("SELECT name FROM sqlite_master WHERE name = 'extra'").fetchone() is None
    assert "m003a_extra" not in {row[0] for row in db.execute("SELECT name FROM _migrations")}
    db.close()
    again = python(PAUSING_MIGRATION.format(pause=False, path=str(db_path)))  # with it: applied once, now
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    assert out.strip() == "1"
