"""The app's sidebar names the store it reads and writes, and never a password: SQLite by default, and the
PostgreSQL store ``INFERCOST_DB`` names (the bill page runs against that database, so this is a real server)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def sidebar_store(at: AppTest) -> str:
    return next(c.value for c in at.sidebar.caption if c.value.startswith("Store:"))


def test_the_sidebar_names_the_default_sqlite_store(infercost_home: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert sidebar_store(at) == f"Store: SQLite {infercost_home / 'infercost.db'}"


def test_the_sidebar_names_a_postgresql_store_without_its_password(postgres_server, monkeypatch) -> None:
    url = postgres_server.create_database("sidebar")
    monkeypatch.setenv("INFERCOST_DB", url.replace("infercost@", "infercost:hunter22@"))  # trust auth ignores it
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert sidebar_store(at) == f"Store: PostgreSQL {url}"
    assert all("hunter22" not in element.value for element in at.sidebar.caption)
