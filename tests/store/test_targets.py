"""What ``--db`` / ``INFERCOST_DB`` may name, and the one-line errors for what cannot be opened: never a traceback,
never the password of a URL."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from infercost import store
from infercost.errors import InputError

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "s3cret-Pa55"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens there once the probe closes


@pytest.mark.parametrize(("target", "reason"), [
    ("mysql://u@h/db", "not a store infercost opens"),
    ("postgresql://u@h", "names no database"),
    ("postgresql://u@h:notaport/db", "not a valid PostgreSQL URL"),
])
def test_a_bad_url_is_one_line_naming_the_reason(target: str, reason: str) -> None:
    with pytest.raises(InputError, match=reason) as error:
        store.connect(target)
    assert error.value.field == "db" and "\n" not in error.value.reason


def test_an_unreachable_server_is_an_input_error_without_the_password() -> None:
    with pytest.raises(InputError) as error:
        store.connect(f"postgresql://alice:{PASSWORD}@127.0.0.1:{closed_port()}/team")
    assert "postgresql://alice@127.0.0.1" in error.value.reason and "refused" in error.value.reason.lower()
    assert PASSWORD not in str(error.value)


def test_the_cli_says_so_in_one_line_with_exit_2() -> None:
    url = f"postgresql://alice:{PASSWORD}@127.0.0.1:{closed_port()}/team"
    result = subprocess.run([sys.executable, "-m", "infercost", "runs", "--db", url, "--json"], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert PASSWORD not in result.stderr


def test_describe_names_the_store_without_its_password(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert store.describe(tmp_path / "a.db") == f"SQLite {tmp_path / 'a.db'}"
    monkeypatch.setenv("INFERCOST_DB", f"postgresql://alice:{PASSWORD}@db.internal:5433/infercost")
    assert store.describe() == "PostgreSQL postgresql://alice@db.internal:5433/infercost"


def test_infercost_db_selects_the_store(store_target, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INFERCOST_DB", store_target)
    db = store.connect()
    try:
        store.save_scenario(db, "via env", {"calls_per_day": 1, "prompt_tokens": 1, "output_tokens": 1})
    finally:
        db.close()
    again = store.connect(store_target)
    assert [s["name"] for s in store.list_scenarios(again)] == ["via env"]
    again.close()


def test_cli_commands_work_on_a_postgresql_store(store_target, tmp_path: Path) -> None:
    profile = tmp_path / "p.json"
    profile.write_text('{"calls_per_day": 10, "prompt_tokens": 5, "output_tokens": 2}')
    saved = subprocess.run([sys.executable, "-m", "infercost", "scenarios", "save", "cli", str(profile),
                            "--db", store_target, "--json"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert saved.returncode == 0, saved.stderr
    listed = subprocess.run([sys.executable, "-m", "infercost", "scenarios", "list", "--db", store_target, "--json"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and '"cli"' in listed.stdout
