"""Import of LiteLLM's price map, on a file in its real format (per-token US$ prices), and the catalog's rules."""

import datetime as dt
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infercost.pricing.litellm import (
    import_litellm,
    import_litellm_document,
    select_catalog,
    skipped_lines,
    tokenizer_for,
)

EXCERPT = Path(__file__).with_name("fixtures") / "litellm_1.110.2_excerpt.json"
DAY = dt.date(2026, 11, 20)
SAMPLE = {
    "sample_spec": {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0, "litellm_provider": "one of ...",
                    "mode": "one of: chat, embedding, completion, image_generation, audio_transcription"},
    "gpt-4o": {"input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05, "cache_read_input_token_cost": 1.25e-06,
               "input_cost_per_token_batches": 1.25e-06, "output_cost_per_token_batches": 5e-06,
               "litellm_provider": "openai", "mode": "chat", "max_input_tokens": 128000},
    "gemini-2.5-pro": {"input_cost_per_token": 1.25e-06, "output_cost_per_token": 1e-05,
                       "input_cost_per_token_above_200k_tokens": 2.5e-06,
                       "output_cost_per_token_above_200k_tokens": 1.5e-05,
                       "litellm_provider": "gemini", "mode": "chat"},
    "text-embedding-3-small": {"input_cost_per_token": 2e-08, "output_cost_per_token": 0,
                               "litellm_provider": "openai", "mode": "embedding"},
    "dall-e-3": {"litellm_provider": "openai", "mode": "image_generation"},
}  # fmt: skip


def test_litellm_map_becomes_catalog_entries(tmp_path):
    path = tmp_path / "model_prices_and_context_window.json"
    path.write_text(json.dumps(SAMPLE))
    result = import_litellm(path, as_of=dt.date(2026, 11, 1))
    by_id = {entry.id: entry for entry in result.entries}
    assert by_id["gpt-4o"].input_per_mtok == pytest.approx(2.5)
    assert by_id["gpt-4o"].batch_output_per_mtok == pytest.approx(5.0)
    assert by_id["gpt-4o"].tokenizer == "o200k_base" and by_id["gpt-4o"].tokenizer_fidelity == "exact"
    assert by_id["gpt-4o"].litellm_key == "gpt-4o"
    assert by_id["gemini-2.5-pro"].long_context_threshold == 200_000
    assert by_id["gemini-2.5-pro"].long_context_output_per_mtok == pytest.approx(15.0)
    assert by_id["gemini-2.5-pro"].tokenizer_fidelity == "proxy"
    assert set(result.skipped) == {"sample_spec", "text-embedding-3-small", "dall-e-3"}


@pytest.mark.parametrize(
    ("model", "tokenizer", "fidelity"),
    [("gpt-4.1-mini", "o200k_base", "exact"), ("gpt-3.5-turbo", "cl100k_base", "exact"),
     ("claude-sonnet-4-5", "o200k_base", "proxy"), ("deepseek-chat", "deepseek", "exact"),
     ("together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", "llama3", "exact"), ("qwen-plus", "qwen2.5", "exact")],
)  # fmt: skip
def test_models_map_to_their_tokenizer(model, tokenizer, fidelity):
    assert tokenizer_for(model) == (tokenizer, fidelity)


GOOD = {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "litellm_provider": "openai", "mode": "chat"}


@pytest.mark.parametrize(
    ("change", "field"),
    [({"input_cost_per_token": "0.000001"}, "input_cost_per_token"),
     ({"output_cost_per_token": [2e-06]}, "output_cost_per_token"),
     ({"cache_read_input_token_cost": {"usd": 1e-07}}, "cache_read_input_token_cost"),
     ({"input_cost_per_token": True}, "input_cost_per_token"),
     ({"input_cost_per_token": -1e-06}, "input_cost_per_token"),
     ({"output_cost_per_token": math.nan}, "output_cost_per_token"),
     ({"output_cost_per_token": math.inf}, "output_cost_per_token"),
     ({"input_cost_per_token": 1e300}, "input_cost_per_token"),
     ({"input_cost_per_token": 10**400}, "input_cost_per_token"),
     ({"max_input_tokens": "128k"}, "max_input_tokens"),
     ({"input_cost_per_token_above_200k_tokens": "2e-06", "output_cost_per_token_above_200k_tokens": 3e-06},
      "input_cost_per_token_above_200k_tokens"),
     ({"tiered_pricing": "cheap"}, "tiered_pricing"),
     ({"tiered_pricing": [{"range": "0-32k", "input_cost_per_token": 1e-06, "output_cost_per_token": 1e-06}]},
      "tiered_pricing[0].range"),
     ({"deprecation_date": 20261211}, "deprecation_date"),
     ({"deprecation_date": "soon"}, "deprecation_date"),
     ({"litellm_provider": ["openai"]}, "litellm_provider")],
)  # fmt: skip
def test_a_malformed_entry_is_skipped_with_a_reason_naming_its_field(change, field):
    result = import_litellm_document({"m": GOOD | change, "fine": GOOD}, as_of=DAY)
    assert [entry.id for entry in result.entries] == ["fine"]
    assert result.skipped["m"].startswith(field), result.skipped["m"]
    assert skipped_lines(result.skipped) == [f"m: {result.skipped['m']}"] and "\n" not in result.skipped["m"]


def test_keys_that_are_not_text_and_entries_that_are_not_objects_are_skipped():
    result = import_litellm_document({1: GOOD, None: GOOD, "list": [GOOD], "fine": GOOD}, as_of=DAY)
    assert [entry.id for entry in result.entries] == ["fine"]
    assert result.skipped == {"1": "model name: expected text", "None": "model name: expected text",
                              "list": "expected an object of prices"}  # fmt: skip


def test_a_malformed_map_on_the_command_line_is_lines_not_a_traceback(tmp_path, cli):
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"gpt-4o": GOOD | {"input_cost_per_token": "free"}, "gpt-4o-mini": GOOD}))
    done = cli("prices", "diff", "--litellm", str(path))
    assert done.code == 0 and "Traceback" not in done.stderr
    assert "skipped: gpt-4o: input_cost_per_token: expected a number, got str" in done.stdout


JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
JSON_VALUE = st.recursive(
    JSON_LEAF, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
FIELDS = st.sampled_from(["input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost",
                          "cache_creation_input_token_cost", "input_cost_per_token_batches",
                          "output_cost_per_token_batches", "cache_read_input_token_cost_batches",
                          "output_cost_per_reasoning_token", "input_cost_per_token_above_128k_tokens",
                          "output_cost_per_token_above_128k_tokens", "max_input_tokens", "deprecation_date",
                          "litellm_provider", "mode", "tiered_pricing", "successor_model"])  # fmt: skip
PLAUSIBLE = st.fixed_dictionaries(
    {"mode": st.just("chat"), "litellm_provider": st.sampled_from(["openai", "dashscope"])},
    optional={"input_cost_per_token": JSON_VALUE, "output_cost_per_token": JSON_VALUE},
)
ENTRY = PLAUSIBLE | st.dictionaries(FIELDS, JSON_VALUE, max_size=6)
MAP = st.dictionaries(st.text(max_size=12) | st.integers(), ENTRY | JSON_VALUE, max_size=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MAP)
def test_no_map_like_document_raises_and_every_entry_is_priced_or_explained(document):
    result = select_catalog(import_litellm_document(document, as_of=DAY))
    assert len(result.entries) + len(result.skipped) <= len(document)
    for entry in result.entries:
        assert all(math.isfinite(v) for v in (entry.input_per_mtok, entry.output_per_mtok))
    assert all(isinstance(reason, str) and reason and "\n" not in reason for reason in result.skipped.values())


def load_excerpt():
    return select_catalog(import_litellm(EXCERPT, as_of=DAY), keep_keys=frozenset({"deepseek-chat"}))


def test_the_catalog_takes_current_text_models_of_covered_providers():
    result = load_excerpt()
    ids = {entry.id for entry in result.entries}
    assert {"gpt-5", "claude-opus-4-6", "gemini-2.5-pro", "grok-4.7", "qwen3-max", "deepseek-chat"} <= ids
    assert "fireworks/deepseek-v3" in ids and "together/meta-llama-3.1-8b-instruct-turbo" not in ids
    assert result.skipped["claude-opus-4-6-20260205"] == "dated snapshot of claude-opus-4-6, same prices"
    assert result.skipped["vertex_ai/claude-opus-4-6"] == "provider not covered by the catalog"
    assert result.skipped["gemini/gemma-3-27b-it"] == "no price (free or experimental)"
    assert result.skipped["gpt-4-0613"].startswith("retired on 2026-10-23")
    assert result.skipped["together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo"].startswith("retired on")
    assert result.skipped["gpt-4o-audio-preview-2024-12-17"] == "an audio or omni-modal model"


def test_a_model_the_catalog_already_holds_stays_when_retired_and_keeps_its_date():
    deepseek = next(entry for entry in load_excerpt().entries if entry.id == "deepseek-chat")
    assert deepseek.deprecation_date == dt.date(2026, 7, 24)


def test_alibabas_tiers_thinking_price_and_googles_batch_cached_rate_come_in():
    by_id = {entry.id: entry for entry in load_excerpt().entries}
    qwen3_max = by_id["qwen3-max"]
    assert (qwen3_max.input_per_mtok, qwen3_max.output_per_mtok) == (1.2, 6.0)
    assert [(t.above_tokens, t.input_per_mtok, t.output_per_mtok) for t in qwen3_max.price_tiers] == [
        (32_000, 2.4, 12.0), (128_000, 3.0, 15.0)]  # fmt: skip
    assert by_id["qwen3.7-plus"].long_context_threshold == 256_000
    assert by_id["qwen3.7-plus"].cached_input_per_mtok == 0.08
    assert by_id["qwen-turbo"].thinking_output_per_mtok == 0.5
    assert by_id["gemini-2.5-pro"].batch_cached_input_per_mtok == 0.125  # the standard cached rate, per the map
    assert by_id["gemini-3.5-flash"].batch_cached_input_per_mtok is None  # half the cached rate: the batch factor


def test_a_yaml_copy_of_the_map_may_hold_dates_as_dates():
    result = import_litellm_document({"m": GOOD | {"deprecation_date": dt.date(2026, 12, 11)}}, as_of=DAY)
    assert result.entries[0].deprecation_date == dt.date(2026, 12, 11)


def test_every_covered_text_model_of_the_map_is_in_the_catalog_or_listed_with_its_reason():
    from importlib import resources

    from infercost.pricing import bundled_api_prices
    from infercost.pricing.litellm import PROVIDERS, TEXT_MODES

    excluded = json.loads(resources.files("infercost.pricing").joinpath("data", "litellm_excluded.json").read_text())
    held = {entry.litellm_key for entry in bundled_api_prices()}
    document = json.loads(EXCERPT.read_text())
    covered = [k for k, v in document.items() if v.get("litellm_provider") in PROVIDERS and v.get("mode") in TEXT_MODES]
    assert len(covered) >= 15
    for key in covered:
        assert key in held or excluded.get(key), key
