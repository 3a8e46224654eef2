"""A store that a newer infercost migrated (a revision this version does not know): every command says so in one
line and exits 2, instead of Alembic's ResolutionError traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy import text

from infercost import store

REPO = Path(__file__).resolve().parents[2]
FUTURE = "m099_from_a_newer_infercost"


def test_a_store_from_a_newer_version_is_one_line_and_exit_2(store_target) -> None:
    db = store.connect(store_target)
    with db:
        db.connection.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": FUTURE})
    db.close()
    for command in (["runs"], ["batch", "list"], ["scenarios", "list"]):
        done = subprocess.run([sys.executable, "-m", "infercost", *command, "--db", store_target, "--json"],
                              cwd=REPO, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and done.stdout == "", (command, done.stderr)
        assert done.stderr == (f"error: db: written by a newer version of infercost (revision {FUTURE}); "
                               "upgrade infercost\n")
