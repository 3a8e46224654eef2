"""Every SQL statement about saved what-if scenarios: a named workload profile with notes. Plain dicts in and out."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from infercost.errors import InputError
from infercost.profile import parse_profile

MAX_NAME_CHARS = 200


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _checked_name(name: str, field: str = "name") -> str:
    """Names are how people and URLs refer to scenarios: non-empty, one line of printable text, not padded."""
    name = name.strip() if isinstance(name, str) else ""
    if not name:
        raise InputError(field, "a scenario needs a name")
    _utf8_text(name, field)
    if len(name) > MAX_NAME_CHARS or not name.isprintable():
        raise InputError(field, f"one line of at most {MAX_NAME_CHARS} printable characters (no control characters)")
    return name


def _utf8_text(text: str, field: str) -> None:
    """SQLite stores UTF-8: a lone surrogate (a byte that is not UTF-8 in a command-line argument) cannot be saved."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(field, "not valid UTF-8 text (a byte that is not UTF-8 in the argument?)") from None


def _lookup_name(name: str) -> str:
    """A name as saved: saving strips the padding, so looking up strips it too."""
    name = name.strip() if isinstance(name, str) else ""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # no saved name holds one; SQLite could not even be asked
        raise InputError("scenario", f"no scenario named {name!r}") from None
    return name


def _scenario(row: sqlite3.Row) -> dict[str, Any]:
    scenario = dict(row)
    scenario["profile"] = json.loads(scenario["profile"])
    return scenario


def _exists(db: sqlite3.Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM scenarios WHERE name = ?", (name,)).fetchone() is not None


def _must_be_free(db: sqlite3.Connection, name: str) -> None:
    if _exists(db, name):
        raise InputError("new name", f"a scenario named {name!r} exists already")


def save_scenario(
    db: sqlite3.Connection, name: str, profile: dict[str, Any], *, notes: str | None = None
) -> dict[str, Any]:
    """Create the scenario, or replace the profile of the one with this name (its notes too, when given).

    The profile is checked first, so every saved scenario can be estimated as it is.
    """
    name = _checked_name(name)
    if notes is not None:
        _utf8_text(notes, "notes")
    parse_profile(profile, name="profile")
    try:
        text = json.dumps(profile, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InputError("profile", f"not storable as JSON: {error}") from None
    now = _now()
    with db:
        db.execute(
            "INSERT INTO scenarios (name, profile, notes, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET profile = excluded.profile, updated_at = excluded.updated_at, "
            "notes = COALESCE(?, notes)",
            (name, text, notes or "", now, now, notes),
        )
    return get_scenario(db, name)


def get_scenario(db: sqlite3.Connection, name: str) -> dict[str, Any]:
    """The scenario with its profile; an unknown name is an InputError naming it."""
    name = _lookup_name(name)
    row = db.execute("SELECT * FROM scenarios WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise InputError("scenario", f"no scenario named {name!r}")
    return _scenario(row)


def list_scenarios(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """All scenarios by name, each with its profile."""
    return [_scenario(row) for row in db.execute("SELECT * FROM scenarios ORDER BY name")]


def duplicate_scenario(db: sqlite3.Connection, name: str, new_name: str) -> dict[str, Any]:
    """A copy under a new name, to change one input and compare."""
    source = get_scenario(db, name)
    new_name = _checked_name(new_name, "new name")
    _must_be_free(db, new_name)
    now = _now()
    with _name_taken_is_an_error(new_name), db:
        db.execute(
            "INSERT INTO scenarios (name, profile, notes, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
            (new_name, json.dumps(source["profile"], ensure_ascii=False), source["notes"], now, now),
        )
    return get_scenario(db, new_name)


@contextmanager
def _name_taken_is_an_error(name: str) -> Iterator[None]:
    """Another process may take the name between the check and the write; the UNIQUE constraint then says so."""
    try:
        yield
    except sqlite3.IntegrityError:
        raise InputError("new name", f"a scenario named {name!r} exists already") from None


def rename_scenario(db: sqlite3.Connection, name: str, new_name: str) -> dict[str, Any]:
    name = get_scenario(db, name)["name"]
    new_name = _checked_name(new_name, "new name")
    if new_name != name:
        _must_be_free(db, new_name)
    with _name_taken_is_an_error(new_name), db:
        db.execute("UPDATE scenarios SET name = ?, updated_at = ? WHERE name = ?", (new_name, _now(), name))
    return get_scenario(db, new_name)


def delete_scenario(db: sqlite3.Connection, name: str) -> None:
    name = _lookup_name(name)
    with db:
        deleted = db.execute("DELETE FROM scenarios WHERE name = ?", (name,)).rowcount
    if not deleted:
        raise InputError("scenario", f"no scenario named {name!r}")
