"""What a price update would change, entry by entry, so that a person reviews it before it applies.

Works on any catalog entries with an ``id`` (API prices and GPU offers). A change the bundled catalog makes on
purpose (a correction or a derived rate, named in the entry's ``notes`` as "Corrected <field>" or "Derived
<field>") is marked ``deliberate``, so a refresh shows what is new and what the catalog chose to differ on.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel

from infercost.pricing.catalog import validate_entries
from infercost.pricing.lifecycle import lifecycle, lifecycle_note
from infercost.pricing.litellm import PRICE_FIELDS, import_litellm_document, select_catalog
from infercost.pricing.schema import ApiPrice

API_FIELDS = (*PRICE_FIELDS, "context_window", "deprecation_date")
GPU_FIELDS = ("gpu", "provider", "price_per_hour", "kind", "gpus_per_instance")


@dataclass(frozen=True)
class Change:
    id: str
    field: str
    old: Any
    new: Any
    deliberate: bool = False


@dataclass
class CatalogDiff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    flagged: list[dict[str, str]] = field(default_factory=list)  # retired or retiring in the new data
    changed: list[Change] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        deliberate = sum(change.deliberate for change in self.changed)
        summary = {"added": len(self.added), "removed": len(self.removed), "flagged": len(self.flagged),
                   "changed": len(self.changed) - deliberate, "deliberate": deliberate}  # fmt: skip
        return {"summary": summary, **asdict(self)}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value.isoformat() if isinstance(value, dt.date) else value


def _is_deliberate(entry: BaseModel, name: str) -> bool:
    notes = getattr(entry, "notes", "")
    return f"Corrected {name}" in notes or f"Derived {name}" in notes


def diff_entries(
    old: Sequence[BaseModel], new: Sequence[BaseModel], fields: Sequence[str], *, today: dt.date
) -> CatalogDiff:
    """Added, removed, flagged (retired/retiring) and changed entries from ``old`` to ``new``, by id."""
    before = {entry.id: entry for entry in old}  # type: ignore[attr-defined]
    after = {entry.id: entry for entry in new}  # type: ignore[attr-defined]
    result = CatalogDiff(added=[i for i in after if i not in before], removed=[i for i in before if i not in after])
    for model_id, entry in after.items():
        if isinstance(entry, ApiPrice) and lifecycle(entry, today=today) != "current":
            known = before.get(model_id)
            if entry.successor is None and isinstance(known, ApiPrice):  # a price map names no successor itself
                entry = entry.model_copy(update={"successor": known.successor})
            result.flagged.append({"id": model_id, "note": lifecycle_note(entry, today=today)})
        if model_id not in before:
            continue
        for name in fields:
            was, now = _plain(getattr(before[model_id], name)), _plain(getattr(entry, name))
            if was != now:
                deliberate = _is_deliberate(before[model_id], name)
                result.changed.append(Change(model_id, name, was, now, deliberate))
    return result


def updated_entries(old: Sequence[BaseModel], new: Sequence[BaseModel], diff: CatalogDiff) -> list[BaseModel]:
    """What ``prices update`` saves: every added entry, and each changed one with its non-deliberate changes applied
    (the catalog's tokenizer, notes and deliberate corrections kept), dated and sourced from the new data."""
    before = {entry.id: entry for entry in old}  # type: ignore[attr-defined]
    after = {entry.id: entry for entry in new}  # type: ignore[attr-defined]
    updates: dict[str, dict[str, Any]] = {}
    for change in diff.changed:
        if not change.deliberate:
            updates.setdefault(change.id, {})[change.field] = getattr(after[change.id], change.field)
    changed = [
        before[i].model_copy(update=fields | {"source": after[i].source, "as_of": after[i].as_of})  # type: ignore[attr-defined]
        for i, fields in updates.items()
    ]
    return [after[i] for i in diff.added] + changed


def map_share(
    document: Any, catalog: Sequence[ApiPrice], *, today: dt.date
) -> tuple[list[ApiPrice], dict[str, str]]:
    """The entries of a LiteLLM map that the catalog would hold (the generator's rules), and the covered providers'
    entries it leaves out, each with its reason."""
    keys = frozenset(entry.litellm_key for entry in catalog if entry.litellm_key)
    selected = select_catalog(import_litellm_document(document, as_of=today), keep_keys=keys)
    return selected.entries, {k: v for k, v in selected.skipped.items() if v != "provider not covered by the catalog"}


def is_litellm_map(document: Any) -> bool:
    """LiteLLM's map is an object of model name -> prices; a catalog file is a list or ``{"entries": [...]}``."""
    return isinstance(document, dict) and "entries" not in document


def review_api_upload(
    document: Any, catalog: Sequence[ApiPrice], *, name: str, today: dt.date
) -> tuple[list[ApiPrice], CatalogDiff, dict[str, str]]:
    """(entries to apply, the diff a person reviews first, map entries skipped with reasons) for an uploaded file."""
    if is_litellm_map(document):
        imported, skipped = map_share(document, catalog, today=today)
        diff = diff_entries(catalog, imported, API_FIELDS, today=today)
        return updated_entries(catalog, imported, diff), diff, skipped  # type: ignore[return-value]
    entries = validate_entries(document, ApiPrice, name=name)
    merged = {entry.id: entry for entry in catalog} | {entry.id: entry for entry in entries}
    return entries, diff_entries(catalog, list(merged.values()), API_FIELDS, today=today), {}
