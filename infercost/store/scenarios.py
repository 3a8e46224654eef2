"""Every SQL statement about saved what-if scenarios: a named workload profile with notes. Plain dicts in and out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, exc, select, update

from infercost.errors import InputError
from infercost.profile import parse_profile
from infercost.store.db import Row, Store, upsert
from infercost.store.schema import scenarios

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
    if "\x00" in text:  # PostgreSQL's text cannot hold one; refused on both engines alike
        raise InputError(field, "contains a NUL character")


def _lookup_name(name: str) -> str:
    """A name as saved: saving strips the padding, so looking up strips it too."""
    name = name.strip() if isinstance(name, str) else ""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # no saved name holds one; SQLite could not even be asked
        raise InputError("scenario", f"no scenario named {name!r}") from None
    return name


def _scenario(row: Row) -> dict[str, Any]:
    scenario = dict(row)
    scenario["profile"] = json.loads(scenario["profile"])
    return scenario


def _exists(db: Store, name: str) -> bool:
    return db.execute(select(scenarios.c.id).where(scenarios.c.name == name)).fetchone() is not None


def _must_be_free(db: Store, name: str) -> None:
    if _exists(db, name):
        raise InputError("new name", f"a scenario named {name!r} exists already")


def save_scenario(
    db: Store, name: str, profile: dict[str, Any], *, notes: str | None = None
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
    insert = upsert(db.dialect, scenarios).values(name=name, profile=text, notes=notes or "", created_at=now,
                                                  updated_at=now)
    # One statement: two people saving the same name at once both succeed, the later profile wins, nothing repeats.
    with db:
        db.execute(insert.on_conflict_do_update(index_elements=["name"], set_={
            "profile": insert.excluded.profile, "updated_at": insert.excluded.updated_at,
            "notes": insert.excluded.notes if notes is not None else scenarios.c.notes,
        }))
    return get_scenario(db, name)


def get_scenario(db: Store, name: str) -> dict[str, Any]:
    """The scenario with its profile; an unknown name is an InputError naming it."""
    name = _lookup_name(name)
    row = db.execute(select(scenarios).where(scenarios.c.name == name)).fetchone()
    if row is None:
        raise InputError("scenario", f"no scenario named {name!r}")
    return _scenario(row)


def list_scenarios(db: Store) -> list[dict[str, Any]]:
    """All scenarios by name, each with its profile."""
    return [_scenario(row) for row in db.execute(select(scenarios).order_by(scenarios.c.name))]


def duplicate_scenario(db: Store, name: str, new_name: str) -> dict[str, Any]:
    """A copy under a new name, to change one input and compare."""
    source = get_scenario(db, name)
    new_name = _checked_name(new_name, "new name")
    _must_be_free(db, new_name)
    now = _now()
    with _name_taken_is_an_error(new_name), db:
        db.execute(scenarios.insert().values(
            name=new_name, profile=json.dumps(source["profile"], ensure_ascii=False), notes=source["notes"],
            created_at=now, updated_at=now,
        ))
    return get_scenario(db, new_name)


@contextmanager
def _name_taken_is_an_error(name: str) -> Iterator[None]:
    """Another process may take the name between the check and the write; the UNIQUE constraint then says so."""
    try:
        yield
    except exc.IntegrityError:
        raise InputError("new name", f"a scenario named {name!r} exists already") from None


def rename_scenario(db: Store, name: str, new_name: str) -> dict[str, Any]:
    name = get_scenario(db, name)["name"]
    new_name = _checked_name(new_name, "new name")
    if new_name != name:
        _must_be_free(db, new_name)
    with _name_taken_is_an_error(new_name), db:
        db.execute(update(scenarios).where(scenarios.c.name == name).values(name=new_name, updated_at=_now()))
    return get_scenario(db, new_name)


def delete_scenario(db: Store, name: str) -> None:
    name = _lookup_name(name)
    with db:
        deleted = db.execute(delete(scenarios).where(scenarios.c.name == name)).rowcount
    if not deleted:
        raise InputError("scenario", f"no scenario named {name!r}")
