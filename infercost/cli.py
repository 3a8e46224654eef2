"""The command line: ``python -m infercost COMMAND``.

Each command lives in ``infercost/commands/<name>.py`` and exposes ``register(subparsers, common)``; its handler
returns a JSON-able payload. ``--json`` prints that payload alone on stdout; otherwise the command's ``render``
prints a human view. Bad input (an ``InputError``) is one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from sqlalchemy.exc import DBAPIError

from infercost.commands import (
    app,
    batch,
    bench,
    diagnose,
    estimate,
    models,
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
from infercost.store.db import store_failed

COMMANDS = (prices, estimate, throughput, models, app, serve, tokenizers, tokens, bench, runs, diagnose, scenarios,
            report, batch)


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


def json_text(payload: Any) -> str:
    """The payload as strict JSON: ``NaN``/``Infinity`` are a bug (every input is bounded), never printed as JSON.

    A string that cannot be written as UTF-8 (a lone surrogate stored by an older version) falls back to ASCII
    escapes, which is still the same JSON document."""
    try:
        text = json.dumps(payload, indent=2, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError as error:  # "Out of range float values are not JSON compliant"
        raise InputError("output", f"a figure is not a finite number ({error}); please report the input") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(payload, indent=2, ensure_ascii=True, default=str, allow_nan=False)
    return text + "\n"


# C0 and C1 control characters but newline and tab: a name holding ESC [ ... could recolour, retitle or clear the
# terminal it is printed on. They are shown as escapes instead (JSON escapes C0 itself).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_text(text: str) -> str:
    """Human text as it is safe to print: control characters and unencodable code points shown as escapes."""
    text = _CONTROL.sub(lambda match: ascii(match.group())[1:-1], text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def emit(payload: Any, *, as_json: bool, render: Any = None) -> None:
    """JSON on stdout for scripts; the human view otherwise. The whole text is built before the first byte is
    written, so a failure never leaves half a document on stdout."""
    if as_json:
        text = json_text(payload)
    elif render is not None:
        text = terminal_text(render(payload)) + "\n"
    else:
        return
    sys.stdout.write(text)
    sys.stdout.flush()


def error_line(error: BaseException) -> str:
    """One line on stderr, whatever the message holds."""
    return "error: " + terminal_text(str(error)).replace("\n", " ")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # the reader (``| head``) has gone: nothing more to say, and Python must not complain at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        payload = args.handler(args)
        if payload is not None:
            emit(payload, as_json=args.json, render=getattr(args, "render", None))
    except InputError as error:
        print(error_line(error), file=sys.stderr)
        return 2
    except DBAPIError as error:  # the store failed after it opened: a server gone mid-sweep, a full disk
        print(error_line(store_failed(error, getattr(args, "db", None))), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0
