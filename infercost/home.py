"""Where infercost keeps its state: one directory, overridden by ``INFERCOST_HOME``."""

from __future__ import annotations

import os
from pathlib import Path

from infercost.errors import InputError


def home_dir(*, create: bool = False) -> Path:
    """``$INFERCOST_HOME`` or ``~/.infercost``. Created only with ``create``, by what writes there (a store, saved
    prices, the app's files): commands that only read it (``estimate``, ``prices``) work where it cannot be made."""
    path = Path(os.environ.get("INFERCOST_HOME") or Path.home() / ".infercost")
    if create:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError("INFERCOST_HOME", f"cannot create {path}: {error.strerror or error}") from None
    return path


def default_db_path() -> Path:
    """The SQLite file every command that reads or writes runs or scenarios uses by default (the home is created
    when it is asked for: a store is about to open)."""
    return home_dir(create=True) / "infercost.db"
