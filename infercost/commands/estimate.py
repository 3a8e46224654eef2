"""``estimate``: a workload profile to API bills and self-host estimates."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from infercost.commands.common import add_db_argument, table
from infercost.errors import InputError
from infercost.files import parse_document
from infercost.profile import load_profile, parse_profile


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "estimate",
        parents=[common],
        help="price a workload profile on APIs and self-hosted GPUs",
        description="Price a workload profile (JSON or YAML; - reads stdin). "
        "Example: python -m infercost estimate profile.json --json",
    )
    parser.add_argument("profile", metavar="PROFILE", help="workload profile file, or - for stdin")
    parser.add_argument("--prices", metavar="FILE", help="your own API prices, overriding the catalog")
    add_db_argument(parser)
    parser.set_defaults(handler=run, render=render)


def _read_profile(path: str) -> Any:
    if path != "-":
        return load_profile(path)
    try:
        text = sys.stdin.buffer.read().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError("stdin", f"not UTF-8 text (byte {error.start})") from None
    return parse_profile(parse_document(text, name="stdin"), name="stdin")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from infercost.estimate import estimate, load_catalog, run_loader

    profile = _read_profile(args.profile)
    return estimate(profile, catalog=load_catalog(args.prices), load_run=run_loader(args.db))


def render(payload: dict[str, Any]) -> str:
    api = table(
        payload["api"],
        (
            "model",
            "tokenizer",
            "fidelity",
            "cost_per_day",
            "cost_per_month",
            "cost_per_call",
            "cost_per_million_tokens",
        ),
    )
    self_host = table(
        payload["self_host"],
        ("name", "basis", "meets_slo", "replicas", "gpu_hours_per_day", "cost_per_month", "cost_per_million_tokens"),
    )
    warnings = [
        f"  {row.get('model') or row.get('name')}: {w}"
        for row in payload["api"] + payload["self_host"]
        for w in row["warnings"]
    ]
    parts = [f"Workload {payload['profile']['name']!r} (US$)", api]
    if payload["self_host"]:
        parts += ["Self-hosted", self_host]
    if warnings:
        parts += ["Notes", "\n".join(warnings)]
    return "\n\n".join(parts)
