"""The rates the catalog derives or corrects, billed on the bundled entries and checked against hand arithmetic."""

import pytest

from infercost.costmodel import Workload, api_bill
from infercost.pricing import bundled_api_prices

CATALOG = {entry.id: entry for entry in bundled_api_prices()}


def per_day(model_id: str, **fields) -> float:
    base = {"calls_per_day": 1000, "prompt_tokens": 1000, "output_tokens": 200}
    return float(api_bill(Workload(**(base | fields)).validate(), CATALOG[model_id].token_prices()).cost_per_day)


def test_qwen_turbo_bills_thinking_mode_output_at_its_own_rate():
    # 1e6 input tokens x $0.05 + 1000 x (200 + 300) output tokens x $0.50 (thinking mode) = $0.05 + $0.25
    assert per_day("qwen-turbo", reasoning_tokens=300) == pytest.approx(0.30)
    assert per_day("qwen-turbo") == pytest.approx(0.05 + 0.2e6 * 0.2 / 1e6)  # no reasoning: $0.20 output


@pytest.mark.parametrize(
    ("prompt_tokens", "dollars"),
    [(10_000, 1e6 * 1.2 / 1e6 + 1e5 * 6 / 1e6), (50_000, 5e6 * 2.4 / 1e6 + 1e5 * 12 / 1e6),
     (200_000, 2e7 * 3.0 / 1e6 + 1e5 * 15 / 1e6)],
)  # fmt: skip
def test_qwen3_max_prices_each_prompt_length_tier(prompt_tokens, dollars):
    cost = per_day("qwen3-max", calls_per_day=100, prompt_tokens=prompt_tokens, output_tokens=1000)
    assert cost == pytest.approx(dollars)


def test_gemini_2_5_pro_bills_cached_input_in_a_batch_at_its_listed_batch_cached_rate():
    # 1000 calls x 10k prompt, half cached: 5e6 x $0.625 (batch input) + 5e6 x $0.125 (the map's batch cached rate,
    # which is the standard cached rate for this model) + 1e5 output x $5 (batch output)
    cost = per_day("gemini-2.5-pro", prompt_tokens=10_000, output_tokens=100, cached_prompt_fraction=0.5, batch=True)
    assert cost == pytest.approx(3.125 + 0.625 + 0.5)


def test_gemini_3_5_flash_halves_cached_input_in_a_batch_as_its_batch_table_does():
    # 5e6 x $0.75 + 5e6 x $0.075 (= $0.15 cached x 0.5) + 1e5 x $4.50
    cost = per_day("gemini-3.5-flash", prompt_tokens=10_000, output_tokens=100, cached_prompt_fraction=0.5, batch=True)
    assert cost == pytest.approx(3.75 + 0.375 + 0.45)


@pytest.mark.parametrize(("model_id", "cached"), [("claude-sonnet-5-5", 0.2), ("claude-opus-5-5", 0.2)])
def test_claude_5_5_cache_reads_follow_anthropics_model_pages(model_id, cached):
    entry = CATALOG[model_id]
    assert entry.cached_input_per_mtok == cached
    cost = per_day(model_id, prompt_tokens=10_000, output_tokens=0, cached_prompt_fraction=0.5)
    assert cost == pytest.approx(5e6 * entry.input_per_mtok / 1e6 + 5e6 * cached / 1e6)


def test_fireworks_models_without_a_cached_price_get_fireworks_default_half_rate():
    fireworks = [entry for entry in CATALOG.values() if entry.provider == "Fireworks AI"]
    assert fireworks and all(e.cached_input_per_mtok is not None for e in fireworks)
    assert CATALOG["fireworks/deepseek-v3"].cached_input_per_mtok == pytest.approx(0.45)
    assert "Derived cached_input_per_mtok" in CATALOG["fireworks/deepseek-v3"].notes


def test_deepseek_v4_cache_writes_are_regular_input_not_free():
    assert CATALOG["deepseek-v4-flash"].cache_write_per_mtok is None
    cost = per_day("deepseek-v4-flash", output_tokens=0, cache_write_fraction=1.0)
    assert cost == pytest.approx(1e6 * CATALOG["deepseek-v4-flash"].input_per_mtok / 1e6)
