"""Every current text model that LiteLLM 1.110.2 prices for a covered provider is in the catalog or named in
``litellm_excluded.json`` with its reason, aliases included (judged by the model they stand for).

The fixture holds, from the map in the ``litellm`` 1.110.2 wheel on PyPI
(``litellm/model_prices_and_context_window_backup.json``), every entry whose provider is one of the catalog's hosts
or OpenAI's ``text-completion-openai``, in a text mode (chat, completion, responses), and every ``alias_of`` entry
standing for one of them (980 entries)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from importlib import resources
from pathlib import Path

import pytest

from infercost.pricing import bundled_api_prices
from infercost.pricing.litellm import TEXT_MODES, covered_text_model, import_litellm_document

MAP = json.loads(gzip.decompress((Path(__file__).with_name("fixtures") / "litellm_1.110.2_text_models.json.gz")
                                 .read_bytes()))
# The seven big providers' own LiteLLM provider names, written out here (not taken from the code under test).
FIRST_PARTY = {"openai", "text-completion-openai", "anthropic", "gemini", "xai", "deepseek", "mistral", "dashscope"}
EXCLUDED = json.loads(resources.files("infercost.pricing").joinpath("data", "litellm_excluded.json").read_text())
HELD = {entry.litellm_key for entry in bundled_api_prices()}


def _first_party_text_model(key: str) -> bool:
    raw = MAP[key]
    target = MAP.get(raw.get("alias_of"), raw)
    return target.get("litellm_provider") in FIRST_PARTY and target.get("mode") in TEXT_MODES


def test_every_first_party_text_model_is_in_the_catalog_or_excluded_with_a_reason() -> None:
    keys = [key for key in MAP if _first_party_text_model(key)]
    assert len(keys) > 300
    missing = [key for key in keys if key not in HELD and not EXCLUDED.get(key)]
    assert not missing, f"{len(missing)} neither in the catalog nor in litellm_excluded.json: {missing}"


def test_every_covered_text_model_is_in_the_catalog_or_excluded_with_a_reason() -> None:
    missing = [key for key in MAP if covered_text_model(MAP, key) and key not in HELD and not EXCLUDED.get(key)]
    assert not missing


@pytest.mark.parametrize(("key", "reason"), [
    ("claude-opus-latest", "a moving alias of claude-opus-5-5, not one model"),
    ("gpt-mini-latest", "a moving alias of gpt-5.4-mini, not one model"),
    ("gpt-3.5-turbo-instruct", "retired on 2026-09-28 (deprecation_date)"),
])
def test_aliases_and_legacy_completions_models_carry_their_reason(key: str, reason: str) -> None:
    assert EXCLUDED[key] == reason


def test_the_importer_names_an_alias_by_what_it_stands_for() -> None:
    imported = import_litellm_document({"claude-opus-latest": MAP["claude-opus-latest"]}, as_of=dt.date(2026, 11, 20))
    assert imported.skipped == {"claude-opus-latest": "a moving alias of claude-opus-5-5, not one model"}


@pytest.mark.parametrize(("key", "text_model"), [
    ("gpt-rosalind-research", True),  # "research" holds "search": it was taken for a search tool
    ("nebius/NousResearch/Hermes-4-70B", True),  # and so was every NousResearch model
    ("deepinfra/NousResearch/Hermes-3-Llama-3.1-70B", True),
    ("gpt-4o-search-preview", False),
    ("gpt-5-search-api", False),
    ("o3-deep-research", False),
])
def test_only_search_products_are_search_tools(key: str, text_model: bool) -> None:
    imported = import_litellm_document({key: MAP[key]}, as_of=dt.date(2026, 11, 20))
    assert bool(imported.entries) is text_model, imported.skipped
    assert (key in HELD) is text_model
