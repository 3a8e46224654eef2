"""``prices``: the price catalog with the source, date and lifecycle of every entry; ``prices diff`` and
``prices update`` review and apply a newer price map to your own overrides (never to the bundled data)."""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any

from infercost.commands.common import table
from infercost.errors import InputError
from infercost.files import read_document
from infercost.pricing import ApiPrice, GpuPrice, age_days, load_api_overrides, merge, validate_entries
from infercost.pricing.catalog import (
    API_OVERRIDES_FILE,
    GPU_OVERRIDES_FILE,
    api_prices_with_home,
    gpu_prices_with_home,
    save_home_overrides,
)
from infercost.pricing.diff import (
    API_FIELDS,
    GPU_FIELDS,
    CatalogDiff,
    diff_entries,
    is_litellm_map,
    map_share,
    updated_entries,
)
from infercost.pricing.lifecycle import lifecycle, lifecycle_note
from infercost.pricing.litellm import skipped_lines
from infercost.pricing.open_weights import offers_of_weights


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "prices",
        parents=[common],
        help="list API and GPU prices with source, date and lifecycle; diff or update against a newer price map",
        description="List the price catalog. Examples: python -m infercost prices --json; "
        "python -m infercost prices --open-weights openai/gpt-oss-120b --json; "
        "python -m infercost prices diff --litellm model_prices_and_context_window.json",
    )
    _source_options(parser)
    parser.add_argument("--open-weights", metavar="MODEL",
                        help="only the API offers of one model's public weights (a Hugging Face id or its name, e.g. "
                        "gpt-oss-120b), and of checkpoints with the same architecture, marked as such")  # fmt: skip
    parser.set_defaults(handler=run, render=render)
    actions = parser.add_subparsers(dest="prices_action", parser_class=type(parser))
    for name, handler, text in (("diff", run_diff, "list what a newer price file would change"),
                                ("update", run_update, "apply a newer price file to your own overrides")):  # fmt: skip
        example = f"python -m infercost prices {name} --litellm model_prices_and_context_window.json"
        description = f"{text.capitalize()}. Example: {example}"
        action = actions.add_parser(name, parents=[common], help=text, description=description)
        _source_options(action)
        action.add_argument("--gpu", metavar="FILE", help="GPU offers (JSON/YAML, catalog schema) to diff or apply")
        action.set_defaults(handler=handler, render=render_diff)


def _source_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--overrides", metavar="FILE", help="your own API prices (JSON/YAML, catalog schema)")
    parser.add_argument("--litellm", metavar="FILE", help="LiteLLM's model_prices_and_context_window.json")


def _with_age(entry: Any, today: dt.date) -> dict[str, Any]:
    row = {**entry.model_dump(mode="json"), "age_days": age_days(entry.as_of, today=today)}
    if isinstance(entry, ApiPrice):
        row |= {"lifecycle": lifecycle(entry, today=today), "lifecycle_note": lifecycle_note(entry, today=today)}
    return row


def _imported(path: str, catalog: list[ApiPrice]) -> tuple[list[ApiPrice], dict[str, str]]:
    """The map's entries the catalog would hold (same rules as the bundled catalog's generator)."""
    document = read_document(path)
    if not is_litellm_map(document):
        raise InputError(path, "expected LiteLLM's object of model name -> prices")
    return map_share(document, catalog, today=dt.date.today())


def run(args: argparse.Namespace) -> dict[str, Any]:
    api = api_prices_with_home()
    skipped: dict[str, str] = {}
    if args.litellm:
        imported, skipped = _imported(args.litellm, api)
        api = merge(api, imported)
    if args.overrides:
        api = merge(api, load_api_overrides(args.overrides))
    today = dt.date.today()
    if args.open_weights is not None:
        found = offers_of_weights(args.open_weights, api)
        return {"model": found.model, "open_weights": list(found.open_weights), "architecture": found.architecture,
                "offers": [{"match": match, **_with_age(entry, today)} for match, entry in found.offers]}  # fmt: skip
    payload = {
        "api": [_with_age(entry, today) for entry in api],
        "gpu": [_with_age(entry, today) for entry in gpu_prices_with_home()],
    }
    if args.litellm:
        payload["litellm_skipped"] = len(skipped)
    return payload


def _proposed(args: argparse.Namespace) -> tuple[str, list[Any], list[Any], list[str], dict[str, str]]:
    """(kind, current entries, proposed entries, fields compared, skipped map entries) for diff and update."""
    sources = [name for name in ("litellm", "overrides", "gpu") if getattr(args, name)]
    if len(sources) != 1:
        raise InputError("prices diff", "give exactly one of --litellm FILE, --overrides FILE or --gpu FILE")
    if args.gpu:
        current = gpu_prices_with_home()
        offers = validate_entries(read_document(args.gpu), GpuPrice, name=args.gpu)
        return "gpu", current, merge(current, offers), list(GPU_FIELDS), {}
    current = api_prices_with_home()
    if args.litellm:
        imported, skipped = _imported(args.litellm, current)
        return "api", current, imported, list(API_FIELDS), skipped
    return "api", current, merge(current, load_api_overrides(args.overrides)), list(API_FIELDS), {}


def _diff(args: argparse.Namespace) -> tuple[str, list[Any], list[Any], CatalogDiff, dict[str, str]]:
    kind, current, proposed, fields, skipped = _proposed(args)
    return kind, current, proposed, diff_entries(current, proposed, fields, today=dt.date.today()), skipped


def run_diff(args: argparse.Namespace) -> dict[str, Any]:
    kind, _, _, diff, skipped = _diff(args)
    return {"kind": kind, **diff.to_json(), "skipped": skipped_lines(skipped)}


def run_update(args: argparse.Namespace) -> dict[str, Any]:
    kind, current, proposed, diff, skipped = _diff(args)
    entries = updated_entries(current, proposed, diff)
    path = save_home_overrides(entries, GPU_OVERRIDES_FILE if kind == "gpu" else API_OVERRIDES_FILE)
    return {"kind": kind, **diff.to_json(), "skipped": skipped_lines(skipped), "saved": len(entries),
            "overrides_file": str(path)}  # fmt: skip


def render(payload: dict[str, Any]) -> str:
    if "offers" in payload:
        return render_open_weights(payload)
    api_columns = ("id", "provider", "input_per_mtok", "output_per_mtok", "cached_input_per_mtok", "tokenizer")
    gpu_columns = ("id", "gpu", "provider", "kind", "price_per_hour")
    dated = ("as_of", "age_days")
    flagged = [row for row in payload["api"] if row["lifecycle"] != "current"]
    parts = [
        "API prices (US$ per 1M tokens)",
        table(payload["api"], api_columns + ("tokenizer_fidelity", "lifecycle") + dated),
        "GPU prices (US$ per GPU-hour)",
        table(payload["gpu"], gpu_columns + dated),
    ]
    if flagged:
        heading = "Retired or retiring within 30 days (kept for old scenarios)"
        parts += [heading, table(flagged, ("id", "lifecycle_note"))]
    return "\n\n".join(parts)


def render_open_weights(payload: dict[str, Any]) -> str:
    weights = ", ".join(payload["open_weights"]) or "no catalog offer of that exact checkpoint"
    heading = f"Offers of {weights} (architecture {payload['architecture']}; US$ per 1M tokens)"
    columns = ("match", "id", "provider", "open_weights", "input_per_mtok", "output_per_mtok", "lifecycle", "as_of")
    return heading + "\n\n" + table(payload["offers"], columns)


def _names_a_field(line: str) -> bool:
    """A skip caused by a malformed value names the field (``key: field: reason``), unlike a rule's exclusion."""
    return line.count(": ") >= 2


def render_diff(payload: dict[str, Any]) -> str:
    s = payload["summary"]
    lines = [f"{s['added']} new, {s['removed']} removed, {s['flagged']} retired or retiring, {s['changed']} changed "
             f"values, {s['deliberate']} deliberate differences (see each entry's notes)"]  # fmt: skip
    lines += [f"new: {model_id}" for model_id in payload["added"]]
    lines += [f"removed: {model_id}" for model_id in payload["removed"]]
    lines += [f"flagged: {row['id']}: {row['note']}" for row in payload["flagged"]]
    lines += [f"changed: {c['id']}.{c['field']}: {c['old']} -> {c['new']}" + (" (deliberate)" * c["deliberate"])
              for c in payload["changed"]]  # fmt: skip
    malformed = [line for line in payload["skipped"] if _names_a_field(line)]
    lines += [f"skipped: {line}" for line in malformed]
    if len(payload["skipped"]) > len(malformed):
        lines.append(f"{len(payload['skipped']) - len(malformed)} more map entries left out by the catalog's rules "
                     "(not text models, aliases, snapshots, retired; --json lists each with its reason)")
    if "overrides_file" in payload:
        lines.append(f"saved {payload['saved']} entries to {payload['overrides_file']}")
    return "\n".join(lines)
