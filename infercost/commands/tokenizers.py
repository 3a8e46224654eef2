"""``tokenizers``: the tokenizers that work here. Example: python -m infercost tokenizers --json"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from infercost.commands.common import table
from infercost.tokenizers import list_tokenizers


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "tokenizers",
        parents=[common],
        help="list the offline tokenizers and whether their data is installed",
        description="List tokenizers: id, family, fidelity, source, available. "
        "Beyond these, any Hugging Face repo id, local directory or tiktoken encoding name works where reachable. "
        "Example: python -m infercost tokenizers --json",
    )
    parser.set_defaults(handler=run, render=render)


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    return [dataclasses.asdict(info) for info in list_tokenizers()]


def render(payload: list[dict[str, Any]]) -> str:
    return table(payload, ("id", "family", "fidelity", "source", "available", "note"))
