"""The price catalog: bundled, dated, sourced prices, plus a person's overrides.

Bundled data lives in ``pricing/data/*.json`` as ``{"schema_version": 1, "entries": [...]}``. Overrides use the
same schema (a list of entries is accepted too) and replace bundled entries with the same ``id``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from infercost.errors import InputError, from_pydantic
from infercost.files import parse_document, read_document
from infercost.home import home_dir
from infercost.pricing.schema import ApiPrice, GpuPrice, GpuSpec

Entry = TypeVar("Entry", bound=BaseModel)


def _entries_of(document: Any, *, name: str) -> list[Any]:
    if isinstance(document, dict) and "entries" in document:
        document = document["entries"]
    if not isinstance(document, list):
        raise InputError(name, 'expected a list of entries or {"entries": [...]}')
    return document


def validate_entries(document: Any, model: type[Entry], *, name: str) -> list[Entry]:
    """Validate every entry; the error names the file, the entry (index and id) and the field."""
    entries = []
    for index, raw in enumerate(_entries_of(document, name=name)):
        label = f"{name}: entries[{index}]"
        if isinstance(raw, dict) and raw.get("id"):
            label += f" ({raw['id']})"
        if not isinstance(raw, dict):
            raise InputError(label, "expected an object")
        try:
            entries.append(model(**raw))
        except ValidationError as error:
            raise from_pydantic(error, prefix=label) from None
    ids = [getattr(entry, "id", None) for entry in entries]
    duplicates = sorted({i for i in ids if i is not None and ids.count(i) > 1})
    if duplicates:
        raise InputError(name, f"duplicate id {duplicates[0]!r}")
    return entries


def _bundled(filename: str) -> Any:
    text = resources.files("infercost.pricing").joinpath("data", filename).read_text(encoding="utf-8")
    return parse_document(text, name=f"bundled {filename}")


@cache
def bundled_api_prices() -> tuple[ApiPrice, ...]:
    return tuple(validate_entries(_bundled("api_prices.json"), ApiPrice, name="api_prices.json"))


@cache
def bundled_gpu_prices() -> tuple[GpuPrice, ...]:
    return tuple(validate_entries(_bundled("gpu_prices.json"), GpuPrice, name="gpu_prices.json"))


@cache
def bundled_gpu_specs() -> tuple[GpuSpec, ...]:
    return tuple(validate_entries(_bundled("gpu_specs.json"), GpuSpec, name="gpu_specs.json"))


# Names as drivers report them (``NVIDIA H100 80GB HBM3``, ``AMD Instinct MI300X``) and as people write them (``H100``,
# ``a100-80gb``) to the catalog's GPU names, whose datasheets (bandwidth, peak FLOPs, native dtypes, with sources) are
# gpu_specs.json. A bare "H100" is the SXM part and a bare "A100" the 80 GB one, as NVIDIA's datasheets and published
# benchmark tables name them. First match wins, and a pattern is a substring, so one that is inside another name
# comes after it: "gb200" before "b200", "gh200" and "h200" before "h20", "l40s" before "l40".
GPU_NAME_PATTERNS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("gh200",), "GH200"),
    (("gb300",), "GB300"),
    (("gb200",), "GB200"),
    (("h200",), "H200"),
    (("h20",), "H20"),
    (("h100", "pcie"), "H100 PCIe"),
    (("h100", "nvl"), "H100 NVL"),
    (("h100",), "H100 SXM"),
    (("b300",), "B300"),
    (("b200",), "B200"),
    (("rtx pro 6000", "server"), "RTX PRO 6000 Blackwell Server"),
    (("mi300x",), "MI300X"),
    (("mi325x",), "MI325X"),
    (("mi355x",), "MI355X"),
    (("a100", "pcie", "40gb"), "A100 40GB PCIe"),
    (("a100", "40gb"), "A100 40GB"),
    (("a100", "pcie"), "A100 80GB PCIe"),
    (("a100",), "A100 80GB"),
    (("l40s",), "L40S"),
    (("l40",), "L40"),
    (("l20",), "L20"),
    (("a10g",), "A10G"),
    (("a10",), "A10"),
    (("l4",), "L4"),
    (("4090",), "RTX 4090"),
    (("v100",), "V100"),
    (("t4",), "T4"),
)


def canonical_gpu_name(driver_name: str) -> str | None:
    """The catalog's name for a GPU as its driver reports it, or None for one we do not know."""
    lowered = driver_name.lower()
    for patterns, name in GPU_NAME_PATTERNS:
        if all(pattern in lowered for pattern in patterns):
            return name
    return None


def gpu_spec(gpu: str) -> GpuSpec:
    """A GPU's datasheet by any name ``catalog_gpu_name`` reads; InputError naming ``gpu`` (with the known ones)
    where none is bundled."""
    name = catalog_gpu_name(gpu)
    for spec in bundled_gpu_specs():
        if spec.gpu == name:
            return spec
    known = ", ".join(spec.gpu for spec in bundled_gpu_specs())
    raise InputError("gpu", f"no datasheet for {gpu!r}; known: {known}")


@cache
def catalog_gpu_name(written: str) -> str:
    """The catalog's name for a GPU as people and drivers write it: a datasheet's own name in any case, spacing or
    hyphens ("h100-sxm"), else ``canonical_gpu_name``'s ("H100", "NVIDIA H100 80GB HBM3"), else the name as written.
    Before, only the first was read, and ``roofline:MODEL@8xH100:fp8`` was refused."""
    for spec in bundled_gpu_specs():
        if _squeezed(spec.gpu) == _squeezed(written):
            return spec.gpu
    return canonical_gpu_name(written) or written


def _squeezed(name: str) -> str:
    """A GPU name without case, spaces, hyphens or underscores: "H100-SXM" and "h100 sxm" are one GPU."""
    return "".join(c for c in name.lower() if c not in " -_")


def cheapest_offer(gpu: str, offers: Sequence[GpuPrice] | None = None) -> GpuPrice | None:
    """The cheapest on-demand offer for a GPU in the catalog (spot can vanish; on-demand is the honest default)."""
    name = catalog_gpu_name(gpu)
    offers = offers or bundled_gpu_prices()
    matching = [o for o in offers if catalog_gpu_name(o.gpu) == name and o.kind == "on-demand"]
    return min(matching, key=lambda o: o.price_per_hour, default=None)


def load_api_overrides(path: str | Path) -> list[ApiPrice]:
    """A person's own API prices (negotiated, new models), from a JSON or YAML file."""
    return validate_entries(read_document(path), ApiPrice, name=str(path))


BATCH_PRICES = {"input_per_mtok": "batch_input_per_mtok", "output_per_mtok": "batch_output_per_mtok"}


def apply_override(base: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """A catalog entry with a partial override: fields not given keep the catalog's values.

    A new regular price without a batch price keeps the catalog's batch discount (a negotiated rate applies to the
    batch tier too), so the Batch switch never falls back to the old list price.
    """
    merged = {**base, **given}
    for regular, batch in BATCH_PRICES.items():
        if regular in given and batch not in given and base.get(batch) is not None and base.get(regular):
            merged[batch] = given[regular] * base[batch] / base[regular]
    return merged


def merge(base: Iterable[Entry], overrides: Iterable[Entry]) -> list[Entry]:
    """Overrides replace entries with the same id and add new ones; order: base first, then new."""
    merged = {entry.id: entry for entry in base}  # type: ignore[attr-defined]
    merged.update({entry.id: entry for entry in overrides})  # type: ignore[attr-defined]
    return list(merged.values())


def find_price(prices: Sequence[ApiPrice], model_id: str) -> ApiPrice:
    """The entry for ``model_id``, or an InputError that suggests close ids."""
    for entry in prices:
        if entry.id == model_id:
            return entry
    close = [entry.id for entry in prices if model_id.lower() in entry.id.lower()][:5]
    hint = f"; did you mean {', '.join(close)}?" if close else "; see `python -m infercost prices`"
    raise InputError("api_models", f"unknown model {model_id!r}{hint}")


def age_days(as_of: dt.date, *, today: dt.date | None = None) -> int:
    """How old a price is: the app shows it, and old prices are flagged. A date after tomorrow (time zones) is a
    typo that would never look stale, so it is refused."""
    age = ((today or dt.date.today()) - as_of).days
    if age < -1:
        raise InputError("as_of", f"{as_of.isoformat()} is in the future; date a price when it was seen")
    return max(age, 0)


API_OVERRIDES_FILE = "price_overrides.json"
GPU_OVERRIDES_FILE = "gpu_price_overrides.json"


def home_overrides(model: type[Entry], filename: str) -> list[Entry]:
    """The person's own prices kept under ``$INFERCOST_HOME`` (written by ``prices update``); none if absent."""
    path = home_dir() / filename
    return validate_entries(read_document(path), model, name=str(path)) if path.exists() else []


def save_home_overrides(entries: Sequence[BaseModel], filename: str) -> Path:
    """Merge ``entries`` into the overrides file under ``$INFERCOST_HOME`` (same id replaced); never bundled data."""
    model = type(entries[0]) if entries else ApiPrice
    merged = merge(home_overrides(model, filename), entries)
    path = home_dir(create=True) / filename
    document = {"schema_version": 1, "entries": [entry.model_dump(mode="json", exclude_none=True) for entry in merged]}
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def api_prices_with_home() -> list[ApiPrice]:
    """The bundled catalog with the person's saved overrides on top."""
    return merge(bundled_api_prices(), home_overrides(ApiPrice, API_OVERRIDES_FILE))


def gpu_prices_with_home() -> list[GpuPrice]:
    return merge(bundled_gpu_prices(), home_overrides(GpuPrice, GPU_OVERRIDES_FILE))
