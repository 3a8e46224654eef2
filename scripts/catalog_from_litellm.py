"""Build the bundled API price catalog from LiteLLM's price map plus the hand-kept choices.

    python scripts/catalog_from_litellm.py /tmp/litellm/litellm-1.110.2-*.whl   # or the map's .json

Reads the map (from the wheel, a zip, or the JSON file), keeps the current text models of the covered providers
(``infercost.pricing.litellm.select_catalog``), applies ``scripts/catalog_choices.yaml`` (tokenizers, corrections
with sources, derived rates, flags, successors) and writes ``infercost/pricing/data/api_prices.json`` plus
``litellm_excluded.json`` (every covered-provider map entry left out, with the reason). Models already in the
catalog stay, marked when retired. Refresh: download the new wheel, bump ``litellm_version``/``as_of`` in the
choices, run this, review ``python -m infercost prices diff --litellm MAP``, commit.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from infercost.pricing.litellm import (  # noqa: E402
    LITELLM_URL,
    catalog_id,
    import_litellm,
    select_catalog,
)
from infercost.pricing.schema import ApiPrice  # noqa: E402

DATA = ROOT / "infercost" / "pricing" / "data"
CHOICES = ROOT / "scripts" / "catalog_choices.yaml"
MAP_MEMBER = "litellm/model_prices_and_context_window_backup.json"


def map_path(path: Path, folder: Path) -> Path:
    """The map as a JSON file: itself, or extracted from a litellm wheel."""
    if path.suffix != ".whl":
        return path
    with zipfile.ZipFile(path) as wheel:
        return Path(wheel.extract(MAP_MEMBER, folder))


def _current_entries() -> list[dict[str, Any]]:
    return json.loads((DATA / "api_prices.json").read_text())["entries"]


def current_open_weights() -> dict[str, str | None]:
    """Catalog id -> the public checkpoint it serves, as reviewed by hand (the map does not say; SOURCES.md, "Open
    weights"). Carried over so a refresh keeps them; a new host entry has none until someone adds it, which the
    catalog test reports."""
    return {entry["id"]: entry["open_weights"] for entry in _current_entries() if "open_weights" in entry}


def current_keys() -> dict[str, str]:
    """Catalog id -> map key of the entries bundled now (older files name the key only in ``notes``)."""
    entries = _current_entries()
    keys = {}
    for entry in entries:
        key = entry.get("litellm_key") or re.search(r"key '([^']+)'", entry.get("notes", ""))
        keys[entry["id"]] = key if isinstance(key, str) else key.group(1)
    return keys


def tokenizer_fields(model_id: str, choices: dict[str, Any]) -> dict[str, str]:
    for rule in choices["tokenizers"]:
        if re.search(rule["match"], model_id):
            return {"tokenizer": rule["tokenizer"], "tokenizer_fidelity": rule["fidelity"],
                    "tokenizer_note": rule["note"]}  # fmt: skip
    return {"tokenizer": "o200k_base", "tokenizer_fidelity": "proxy",
            "tokenizer_note": choices["default_tokenizer_note"]}  # fmt: skip


def map_notes(raw: dict[str, Any], key: str, version: str) -> list[str]:
    """What the map says beyond the fields the catalog holds."""
    cites = f"; the map cites {raw['source']}." if isinstance(raw.get("source"), str) else "."
    notes = [f"From LiteLLM {version}'s price map, key '{key}'{cites}"]
    if isinstance(raw.get("deprecation_date"), str):
        where = raw.get("deprecation_source")
        notes.append(f"Retires {raw['deprecation_date']}" + (f" ({where})." if isinstance(where, str) else "."))
    hour = raw.get("cache_creation_input_token_cost_above_1hr")
    if isinstance(hour, int | float):
        notes.append(f"Cache write is the 5-minute TTL price; 1-hour TTL writes cost {hour * 1e6:g}/MTok.")
    tiers = [name for name in ("priority", "flex") if f"input_cost_per_token_{name}" in raw]
    if tiers:
        notes.append(f"The map also lists {' and '.join(tiers)} tiers (not represented).")
    if "off_peak_pricing" in raw:
        notes.append("Off-peak discount windows exist; standard prices recorded.")
    return notes


def apply_choices(entry: ApiPrice, raw: dict[str, Any], choices: dict[str, Any], ids: set[str]) -> ApiPrice:
    fields = entry.model_dump()
    notes = map_notes(raw, entry.litellm_key or entry.id, choices["litellm_version"])
    fields |= tokenizer_fields(entry.id, choices)
    correction = choices["corrections"].get(entry.id)
    if correction:
        fields |= {k: v for k, v in correction.items() if k not in ("reason", "source")}
        names = ", ".join(k for k in correction if k not in ("reason", "source"))
        notes.append(f"Corrected {names}: {correction['reason']} Source: {correction['source']}")
    for rule in choices["derived"].values():
        if entry.provider == rule["provider"] and fields.get(rule["field"]) is None:
            fields[rule["field"]] = round(fields["input_per_mtok"] * rule["input_multiple"], 6)
            notes.append(f"Derived {rule['field']}: {rule['reason']} Source: {rule['source']}")
    if entry.id in choices["flags"]:
        notes.append(f"Checked: {choices['flags'][entry.id]}")
    successor = choices["successors"].get(entry.id) or _map_successor(raw)
    fields["successor"] = successor if successor in ids else None
    if successor and successor not in ids:
        notes.append(f"The map names successor {successor}, which is not in the catalog.")
    fields["notes"] = " ".join(notes)
    return ApiPrice(**fields)


def _map_successor(raw: dict[str, Any]) -> str | None:
    successor, provider = raw.get("successor_model"), raw.get("litellm_provider")
    return catalog_id(successor, provider) if isinstance(successor, str) and isinstance(provider, str) else None


def build(map_file: Path) -> tuple[list[ApiPrice], dict[str, str]]:
    choices = yaml.safe_load(CHOICES.read_text())
    document = json.loads(map_file.read_text())
    imported = import_litellm(map_file, as_of=choices["as_of"], source=LITELLM_URL)
    kept = current_keys()
    selected = select_catalog(imported, keep_keys=frozenset(kept.values()))
    ids = {entry.id for entry in selected.entries}
    order = {model_id: index for index, model_id in enumerate(kept)}
    entries = sorted(selected.entries, key=lambda e: (order.get(e.id, len(order)), e.provider, e.id))
    weights = current_open_weights()
    built = [apply_choices(entry, document[entry.litellm_key], choices, ids).model_copy(
        update={"open_weights": weights.get(entry.id)}) for entry in entries]  # fmt: skip
    covered = {key: reason for key, reason in selected.skipped.items() if _covered(document.get(key))}
    return built, covered


def _covered(raw: Any) -> bool:
    from infercost.pricing.litellm import PROVIDERS, TEXT_MODES

    return isinstance(raw, dict) and raw.get("litellm_provider") in PROVIDERS and raw.get("mode") in TEXT_MODES


def _compact(entry: ApiPrice) -> dict[str, Any]:
    """The entry as JSON without the fields it leaves empty; ``open_weights`` stays when null (null says "closed")."""
    return {k: v for k, v in entry.model_dump(mode="json").items() if v not in (None, [], "") or k == "open_weights"}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        entries, excluded = build(map_path(Path(argv[0]), Path(folder)))
    payload = {"schema_version": 1, "entries": [_compact(entry) for entry in entries]}
    (DATA / "api_prices.json").write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    (DATA / "litellm_excluded.json").write_text(json.dumps(dict(sorted(excluded.items())), indent=1) + "\n")
    print(f"{len(entries)} models written; {len(excluded)} covered-provider entries left out (litellm_excluded.json)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
