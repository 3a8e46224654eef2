"""``estimate``: a workload profile to API bills and self-host estimates."""

from __future__ import annotations

import argparse
from typing import Any

from infercost.commands.common import add_db_argument, table
from infercost.files import read_document_or_stdin
from infercost.profile import parse_profile


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


def run(args: argparse.Namespace) -> dict[str, Any]:
    from infercost.band import with_bands
    from infercost.estimate import estimate, load_catalog, run_loader

    profile = parse_profile(read_document_or_stdin(args.profile), name=args.profile)
    catalog, load_run = load_catalog(args.prices), run_loader(args.db)
    return with_bands(estimate(profile, catalog=catalog, load_run=load_run), profile, catalog, load_run)


def render(payload: dict[str, Any]) -> str:
    from infercost.estimate import cost_range_text  # the wording the app and the reports use

    api = table(
        [{**row, "cost_per_month_p10_p90": cost_range_text(row) or None} for row in payload["api"]],
        ("model", "tokenizer", "fidelity", "cost_per_day", "cost_per_month", "cost_per_month_p10_p90", "cost_per_call",
         "cost_per_million_tokens"),
    )
    self_host = table(
        [{**row, "cost_per_month_p10_p90": cost_range_text(row) or None} for row in payload["self_host"]],
        ("name", "basis", "meets_slo", "replicas", "gpu_hours_per_day", "cost_per_month", "cost_per_month_p10_p90",
         "cost_per_million_tokens"),
    )
    warnings = [
        f"  {row.get('model') or row.get('name')}: {w}"
        for row in payload["api"] + payload["self_host"]
        for w in row["warnings"]
    ]
    parts = [f"Workload {payload['profile']['name']!r} (US$; an API model's P10–P90 is its bill band's)", api]
    if payload.get("band_note"):
        parts.append(payload["band_note"])
    if payload["self_host"]:
        parts += ["Self-hosted", self_host]
    if warnings:
        parts += ["Notes", "\n".join(warnings)]
    return "\n\n".join(parts)
