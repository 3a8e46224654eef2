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
    parser.add_argument("--same-weights", metavar="MODEL",
                        help="set one open model's API offers beside its ready-made self-host setups (each GPU type's "
                             "cheapest on-demand offer, the fewest GPUs that hold it): replaces the profile's "
                             "api_models and self_host; its other self-host fields (slo, mode, ...) apply to every "
                             "setup")  # fmt: skip
    add_db_argument(parser)
    parser.set_defaults(handler=run, render=render)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from infercost.band import with_bands
    from infercost.estimate import estimate, load_catalog, run_loader

    document = read_document_or_stdin(args.profile)
    profile = parse_profile(document, name=args.profile)
    catalog, load_run = load_catalog(args.prices), run_loader(args.db)
    if args.same_weights:
        from infercost.same_weights import SETUP_FIELDS, same_weights_profile

        common = {k: v for k, v in (document.get("self_host") or [{}])[0].items() if k in SETUP_FIELDS}
        profile = parse_profile(same_weights_profile(document, args.same_weights, catalog, common).document,
                                name=args.profile)  # fmt: skip
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
    listed = {row["model"]: row["same_weights"] for row in payload["self_host"] if row.get("same_weights")}
    for weights, offers in listed.items():  # once per model: every setup of it lists the same offers
        parts += [f"API offers of {weights}, the weights self-hosted above",
                  table(offers, ("model", "match", "cost_per_month", "cost_per_million_tokens"))]
    if warnings:
        parts += ["Notes", "\n".join(warnings)]
    return "\n\n".join(parts)
