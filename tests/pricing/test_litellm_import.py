"""Import of LiteLLM's price map, on a file in its real format (per-token US$ prices)."""

import datetime as dt
import json

import pytest

from infercost.pricing.litellm import import_litellm, tokenizer_for

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
