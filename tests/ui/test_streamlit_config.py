"""The app's Streamlit settings: what a person using it may see, and where it listens."""

import tomllib
from pathlib import Path

CONFIG = tomllib.loads((Path(__file__).parents[2] / ".streamlit" / "config.toml").read_text(encoding="utf-8"))


def test_an_unexpected_error_never_shows_a_traceback_in_the_browser():
    assert CONFIG["client"]["showErrorDetails"] in ("type", "none")  # "full" and "stacktrace" print the traceback


def test_the_server_listens_on_loopback_only():
    assert CONFIG["server"]["address"] == "127.0.0.1"


def _flags(command: list[str]) -> dict[str, str]:
    options = command[command.index("run") + 2:]
    return dict(zip(options[::2], options[1::2], strict=True))


def test_the_app_command_carries_every_setting_of_the_config():
    """Streamlit reads ``.streamlit/config.toml`` only from the directory it starts in: ``python -m infercost app``
    started anywhere else must still show no traceback in the browser, and keep the upload limit."""
    from infercost.commands.app import streamlit_command

    flags = _flags(streamlit_command("127.0.0.1", 8501))
    for section, settings in CONFIG.items():
        for name, value in settings.items():
            assert flags[f"--{section}.{name}"] == (str(value).lower() if isinstance(value, bool) else str(value))
    assert flags["--server.address"] == "127.0.0.1" and flags["--server.port"] == "8501"


def test_the_app_started_outside_the_checkout_takes_every_flag(tmp_path):
    """A real start from an unrelated directory: Streamlit accepts every flag (it exits on an unknown one)."""
    import os
    import subprocess
    import sys

    from tests.ui.conftest import free_port, wait_for

    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    process = subprocess.Popen([sys.executable, "-m", "infercost", "app", "--port", str(port)], cwd=tmp_path,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/_stcore/health", process)
    finally:
        process.terminate()
        process.wait(timeout=20)
