"""``app``: start the Streamlit app on 127.0.0.1 (its embedded defaults need no GPU and no internet)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from infercost.errors import InputError

APP_SCRIPT = Path(__file__).resolve().parents[2] / "app.py"


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "app",
        parents=[common],
        help="start the web app",
        description="Start the Streamlit app. Example: python -m infercost app --port 8501",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    parser.set_defaults(handler=run, render=None)


def streamlit_command(host: str, port: int) -> list[str]:
    return [
        sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT),
        "--server.address", host, "--server.port", str(port),
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
    ]  # fmt: skip


def run(args: argparse.Namespace) -> None:
    """Replace this process with Streamlit's, so a stop signal reaches the server itself and leaves no orphan."""
    if not APP_SCRIPT.is_file():
        raise InputError("app", f"{APP_SCRIPT} not found: run from a checkout of the repository")
    if not 0 < args.port < 65536:
        raise InputError("--port", f"must be 1..65535, got {args.port}")
    print(f"infercost: http://{args.host}:{args.port}", file=sys.stderr)
    sys.stderr.flush()
    command = streamlit_command(args.host, args.port)
    os.execv(command[0], command)
