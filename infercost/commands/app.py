"""``app``: start the Streamlit app on 127.0.0.1 (its embedded defaults need no GPU and no internet)."""

from __future__ import annotations

import argparse
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from infercost.batch.background import LOCAL_PATHS_ENV
from infercost.errors import InputError

APP_SCRIPT = Path(__file__).resolve().parents[2] / "app.py"
CONFIG = APP_SCRIPT.parent / ".streamlit" / "config.toml"


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "app",
        parents=[common],
        help="start the web app",
        description="Start the Streamlit app. Example: python -m infercost app --port 8501",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    parser.add_argument("--allow-local-paths", action="store_true",
                        help="let the Batch page read any file of this machine by its path (default: only the "
                             "app's own uploads; anyone who reaches the app could have any file sent to a URL)")
    parser.set_defaults(handler=run, render=None)


def config_flags() -> list[str]:
    """Every setting of the app's ``.streamlit/config.toml`` as Streamlit flags: Streamlit reads that file only from
    the directory it is started in, and the app needs them wherever it starts (errors without tracebacks in the
    browser, the upload limit, loopback only)."""
    flags = []
    for section, settings in tomllib.loads(CONFIG.read_text(encoding="utf-8")).items():
        for name, value in settings.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            flags += [f"--{section}.{name}", text]
    return flags


def streamlit_command(host: str, port: int) -> list[str]:
    return [
        sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT), *config_flags(),
        "--server.address", host, "--server.port", str(port),
    ]  # fmt: skip


def run(args: argparse.Namespace) -> None:
    """Replace this process with Streamlit's, so a stop signal reaches the server itself and leaves no orphan."""
    if not APP_SCRIPT.is_file() or not CONFIG.is_file():
        raise InputError("app", f"{APP_SCRIPT} or {CONFIG} not found: run from a checkout of the repository")
    if not 0 < args.port < 65536:
        raise InputError("--port", f"must be 1..65535, got {args.port}")
    print(f"infercost: http://{args.host}:{args.port}", file=sys.stderr)
    sys.stderr.flush()
    command = streamlit_command(args.host, args.port)
    env = {**os.environ, **({LOCAL_PATHS_ENV: "1"} if args.allow_local_paths else {})}  # or set by the operator
    os.execve(command[0], command, env)
