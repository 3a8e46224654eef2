"""The app's Streamlit settings: what a person using it may see, and where it listens."""

import tomllib
from pathlib import Path

CONFIG = tomllib.loads((Path(__file__).parents[2] / ".streamlit" / "config.toml").read_text(encoding="utf-8"))


def test_an_unexpected_error_never_shows_a_traceback_in_the_browser():
    assert CONFIG["client"]["showErrorDetails"] in ("type", "none")  # "full" and "stacktrace" print the traceback


def test_the_server_listens_on_loopback_only():
    assert CONFIG["server"]["address"] == "127.0.0.1"
