"""The command line: ``python -m infercost COMMAND``.

Each command lives in ``infercost/commands/<name>.py`` and exposes ``register(subparsers, common)``; its handler
returns a JSON-able payload. ``--json`` prints that payload alone on stdout; otherwise the command's ``render``
prints a human view. Bad input (an ``InputError``) is one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from infercost.commands import (
    app,
    batch,
    bench,
    estimate,
    prices,
    report,
    runs,
    scenarios,
    serve,
    throughput,
    tokenizers,
    tokens,
)
from infercost.errors import InputError

COMMANDS = (prices, estimate, throughput, app, serve, tokenizers, tokens, bench, runs, scenarios, report, batch)


class OneLineParser(argparse.ArgumentParser):
    """argparse prints usage plus an error; the contract is one line naming the problem, then exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="infercost", description="What will this LLM workload cost, on an API or on your own GPUs?"
    )
    common = OneLineParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for command in COMMANDS:
        command.register(subparsers, common)
    return parser


def emit(payload: Any, *, as_json: bool, render: Any = None) -> None:
    """JSON on stdout for scripts; the human view otherwise."""
    if as_json:
        json.dump(payload, sys.stdout, indent=2, ensure_ascii=False, default=str)
        sys.stdout.write("\n")
    elif render is not None:
        print(render(payload))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        payload = args.handler(args)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if payload is not None:
        emit(payload, as_json=args.json, render=getattr(args, "render", None))
    return 0
