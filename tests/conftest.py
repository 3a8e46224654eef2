"""Every test gets its own infercost home, so no test reads or writes a person's ~/.infercost."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def infercost_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "infercost-home"
    monkeypatch.setenv("INFERCOST_HOME", str(home))
    monkeypatch.delenv("INFERCOST_DB", raising=False)  # a person's shared store is never a test's
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return home


@pytest.fixture(autouse=True)
def main_module_restored():
    """A Streamlit page run in this process (AppTest) is left as ``sys.modules["__main__"]``; a test that starts
    processes with ``spawn`` afterwards would make each child run that page as its main script and die. Put the
    real one back after every test."""
    import sys

    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main
