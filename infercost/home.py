"""Where infercost keeps its state: one directory, overridden by ``INFERCOST_HOME``."""

from __future__ import annotations

import os
from pathlib import Path


def home_dir() -> Path:
    """``$INFERCOST_HOME`` or ``~/.infercost``, created on first use."""
    path = Path(os.environ.get("INFERCOST_HOME") or Path.home() / ".infercost")
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_db_path() -> Path:
    """The SQLite file every command that reads or writes runs or scenarios uses by default."""
    return home_dir() / "infercost.db"
