"""``prices``: the price catalog with the source and date of every entry."""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any

from infercost.commands.common import table
from infercost.pricing import age_days, bundled_api_prices, bundled_gpu_prices, load_api_overrides, merge
from infercost.pricing.litellm import import_litellm


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "prices",
        parents=[common],
        help="list API and GPU prices with source and date",
        description="List the price catalog. Example: python -m infercost prices --json",
    )
    parser.add_argument("--overrides", metavar="FILE", help="your own API prices (JSON/YAML, catalog schema)")
    parser.add_argument("--litellm", metavar="FILE", help="import LiteLLM's model_prices_and_context_window.json")
    parser.set_defaults(handler=run, render=render)


def _with_age(entry: Any, today: dt.date) -> dict[str, Any]:
    return {**entry.model_dump(mode="json"), "age_days": age_days(entry.as_of, today=today)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    api = list(bundled_api_prices())
    skipped = {}
    if args.litellm:
        imported = import_litellm(args.litellm)
        api, skipped = merge(api, imported.entries), imported.skipped
    if args.overrides:
        api = merge(api, load_api_overrides(args.overrides))
    today = dt.date.today()
    payload = {
        "api": [_with_age(entry, today) for entry in api],
        "gpu": [_with_age(entry, today) for entry in bundled_gpu_prices()],
    }
    if args.litellm:
        payload["litellm_skipped"] = len(skipped)
    return payload


def render(payload: dict[str, Any]) -> str:
    api_columns = ("id", "provider", "input_per_mtok", "output_per_mtok", "cached_input_per_mtok", "tokenizer")
    gpu_columns = ("id", "gpu", "provider", "kind", "price_per_hour")
    dated = ("as_of", "age_days")
    return "\n\n".join(
        [
            "API prices (US$ per 1M tokens)",
            table(payload["api"], api_columns + ("tokenizer_fidelity",) + dated),
            "GPU prices (US$ per GPU-hour)",
            table(payload["gpu"], gpu_columns + dated),
        ]
    )
