"""Offers name the public weights they serve, and ``prices --open-weights`` lists the offers of one model's weights."""

import json
from importlib import resources

import pytest

from infercost.errors import InputError
from infercost.pricing import ApiPrice, bundled_api_prices, validate_entries
from infercost.pricing.open_weights import (
    OPEN_WEIGHT_HOSTS,
    architecture_key,
    closed_reason,
    offers_of_weights,
)

VALID = {"id": "m", "provider": "p", "input_per_mtok": 1, "output_per_mtok": 2, "source": "https://x",
         "as_of": "2026-01-01"}  # fmt: skip


def test_every_bundled_entry_carries_the_key_null_for_closed():
    document = json.loads(resources.files("infercost.pricing").joinpath("data", "api_prices.json").read_text())
    missing = [entry["id"] for entry in document["entries"] if "open_weights" not in entry]
    assert not missing, missing[:5]


def test_every_entry_names_its_weights_or_is_named_closed_with_a_reason():
    """A new host entry without ``open_weights`` fails here until someone names its checkpoint or its reason."""
    wrong = [(p.id, p.open_weights, closed_reason(p.id)) for p in bundled_api_prices()
             if (p.open_weights is None) != (closed_reason(p.id) is not None)]  # fmt: skip
    assert not wrong, wrong[:5]
    hosted = [p for p in bundled_api_prices() if p.provider in OPEN_WEIGHT_HOSTS]
    assert sum(p.open_weights is not None for p in hosted) > 0.9 * len(hosted)


@pytest.mark.parametrize(("entry_id", "weights"), [
    ("together/gpt-oss-120b", "openai/gpt-oss-120b"),
    ("deepinfra/deepseek-v3-0324", "deepseek-ai/DeepSeek-V3-0324"),
    ("fireworks/llama-v3p1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct"),
    ("together/meta-llama-3.1-8b-instruct-turbo", "meta-llama/Llama-3.1-8B-Instruct"),  # a host's quantization
    ("together/qwen-2-1.5b-instruct", "arize-ai/qwen-2-1.5b-instruct"),  # a fine-tune names its own repository
    ("open-mistral-nemo", "mistralai/Mistral-Nemo-Instruct-2407"),  # a first-party API with a documented version
    ("deepseek-chat", None),  # an alias DeepSeek re-points
    ("deepinfra/claude-4-opus", None),
])  # fmt: skip
def test_entries_name_the_checkpoint_they_serve(entry_id, weights):
    assert {p.id: p for p in bundled_api_prices()}[entry_id].open_weights == weights


@pytest.mark.parametrize("value", ["gpt-oss-120b", "openai/gpt oss", "a/b/c", "/gpt-oss-120b", ""])
def test_open_weights_must_be_a_hugging_face_id(value):
    with pytest.raises(InputError, match=r"entries\[0\] \(m\)\.open_weights"):
        validate_entries([VALID | {"open_weights": value}], ApiPrice, name="prices.json")


@pytest.mark.parametrize(("a", "b", "same"), [
    ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-0324", True),
    ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1-0528", True),
    ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3.1-Terminus", True),
    ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3.2", False),  # sparse attention: another architecture
    ("Qwen/Qwen3-235B-A22B", "Qwen/Qwen3-235B-A22B-Thinking-2507", True),
    ("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct", True),
    ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3-8B-Instruct", False),
    ("openai/gpt-oss-120b", "openai/gpt-oss-safeguard-120b", True),
    ("openai/gpt-oss-120b", "openai/gpt-oss-20b", False),
    ("Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B", False),
])  # fmt: skip
def test_architecture_key_groups_checkpoints_of_one_architecture(a, b, same):
    assert (architecture_key(a) == architecture_key(b)) is same


@pytest.mark.parametrize("typed", ["openai/gpt-oss-120b", "gpt-oss-120b", "OpenAI/GPT-OSS-120B"])
def test_open_weights_lists_the_offers_of_those_weights_first(cli, typed):
    done = cli("prices", "--open-weights", typed, "--json")
    assert done.code == 0, done.stderr
    payload = done.json()
    exact = [o for o in payload["offers"] if o["match"] == "exact"]
    assert payload["open_weights"] == ["openai/gpt-oss-120b"]
    assert {o["provider"] for o in exact} == {"Groq", "Together AI", "DeepInfra", "Nebius"}
    assert all(o["open_weights"] == "openai/gpt-oss-120b" for o in exact)
    others = payload["offers"][len(exact):]
    assert others and all(o["match"] == "same_architecture" for o in others)
    assert {"source", "as_of", "age_days", "lifecycle"} <= set(exact[0])


@pytest.mark.parametrize(("model", "providers"), [
    ("DeepSeek-V3", {"Together AI", "Fireworks AI", "DeepInfra", "Nebius", "DeepSeek"}),
    ("Qwen3-235B-A22B", {"Fireworks AI", "DeepInfra", "Nebius"}),
    ("Llama-3.1-8B-Instruct", {"Together AI", "Fireworks AI", "DeepInfra", "Nebius"}),
])  # fmt: skip
def test_offers_of_the_models_people_compare(model, providers):
    found = offers_of_weights(model, bundled_api_prices())
    assert {entry.provider for match, entry in found.offers if match == "exact"} == providers
    same = [entry for match, entry in found.offers if match == "same_architecture"]
    assert all(architecture_key(entry.open_weights) == found.architecture for entry in same)


def test_a_name_that_is_only_an_architecture_lists_its_checkpoints_as_such():
    found = offers_of_weights("Qwen3-30B-A3B-Instruct", bundled_api_prices())
    assert found.open_weights == () and found.offers
    assert {match for match, _ in found.offers} == {"same_architecture"}


def test_an_override_with_open_weights_is_listed(cli, tmp_path):
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps([VALID | {"id": "my-gpt-oss", "open_weights": "openai/gpt-oss-120b"}]))
    done = cli("prices", "--overrides", str(mine), "--open-weights", "gpt-oss-120b", "--json")
    assert "my-gpt-oss" in {o["id"] for o in done.json()["offers"]}


def test_an_unknown_model_is_one_line_naming_close_names(cli):
    done = cli("prices", "--open-weights", "gpt-oss-130b", "--json")
    assert done.code == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "open-weights" in done.stderr and "gpt-oss-120b" in done.stderr


def test_an_empty_model_is_an_error_not_the_whole_catalog(cli):
    done = cli("prices", "--open-weights", " ", "--json")
    assert done.code == 2 and done.stdout == "" and "open-weights: give a model" in done.stderr


def test_prices_json_carries_open_weights(cli):
    api = {row["id"]: row for row in cli("prices", "--json").json()["api"]}
    assert api["groq/gpt-oss-120b"]["open_weights"] == "openai/gpt-oss-120b"
    assert api["gpt-4o"]["open_weights"] is None
