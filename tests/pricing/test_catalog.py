"""The bundled catalog: sourced, dated, valid; and validation errors that name the entry and the field."""

import json

import pytest

from infercost.errors import InputError
from infercost.pricing import (
    ApiPrice,
    bundled_api_prices,
    bundled_gpu_prices,
    bundled_gpu_specs,
    load_api_overrides,
    merge,
    validate_entries,
)

OFFLINE_TOKENIZERS = {"o200k_base", "cl100k_base", "qwen2.5", "llama3", "deepseek", "mistral-tekken"}
REQUIRED_GPUS = {"H100 SXM", "H200", "A100 80GB", "L40S", "L4", "RTX 4090"}


def test_catalog_has_thirty_models_from_six_providers():
    prices = bundled_api_prices()
    assert len(prices) >= 30
    assert len({p.provider.split("/")[0].lower() for p in prices}) >= 6


def test_every_price_has_a_source_and_a_date():
    for entry in (*bundled_api_prices(), *bundled_gpu_prices(), *bundled_gpu_specs()):
        assert entry.source.startswith("http"), entry
        assert entry.as_of.year >= 2024, entry


def test_every_model_maps_to_an_offline_tokenizer():
    for entry in bundled_api_prices():
        assert entry.tokenizer in OFFLINE_TOKENIZERS, entry.id
        if entry.provider.lower() in {"anthropic", "google", "xai"}:
            assert entry.tokenizer_fidelity == "proxy", entry.id


def test_gpu_catalog_covers_the_common_cards_on_demand():
    on_demand = {g.gpu for g in bundled_gpu_prices() if g.kind == "on-demand"}
    assert REQUIRED_GPUS <= on_demand
    assert REQUIRED_GPUS <= {spec.gpu for spec in bundled_gpu_specs()}


VALID = {"id": "m", "provider": "p", "input_per_mtok": 1, "output_per_mtok": 2, "source": "https://x",
         "as_of": "2026-01-01"}


@pytest.mark.parametrize(
    ("change", "names"),
    [
        ({"input_per_mtok": -1}, "entries[1] (m).input_per_mtok"),
        ({"as_of": "yesterday"}, "entries[1] (m).as_of"),
        ({"output_per_mtok": "cheap"}, "entries[1] (m).output_per_mtok"),
        ({"surprise": 1}, "entries[1] (m).surprise"),
        ({"long_context_threshold": 1000}, "entries[1] (m)"),
    ],
)
def test_a_bad_entry_is_named_with_its_field(change, names):
    with pytest.raises(InputError, match=names.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        validate_entries([VALID | {"id": "ok"}, VALID | change], ApiPrice, name="prices.json")


def test_duplicate_ids_are_rejected():
    with pytest.raises(InputError, match="duplicate id 'm'"):
        validate_entries([VALID, VALID], ApiPrice, name="prices.json")


def test_overrides_from_a_file_replace_and_extend(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("- {id: gpt-4o, provider: OpenAI, input_per_mtok: 1.0, output_per_mtok: 4.0,"
                    " source: contract, as_of: 2026-11-01}\n- {id: my-model, provider: me, input_per_mtok: 0.1,"
                    " output_per_mtok: 0.2, source: contract, as_of: 2026-11-01}\n")  # fmt: skip
    merged = {p.id: p for p in merge(bundled_api_prices(), load_api_overrides(path))}
    assert merged["gpt-4o"].input_per_mtok == 1.0 and merged["my-model"].output_per_mtok == 0.2
    assert len(merged) == len(bundled_api_prices()) + 1


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"\xff\xfe\x00garbage", "binary"), (b"caf\xe9", "not UTF-8"), (b"[{]", "not valid JSON at line 1"),
     (b'{"foo": 1}', "expected a list")],
)  # fmt: skip
def test_malformed_price_files_get_a_clear_error(tmp_path, content, reason):
    path = tmp_path / "prices.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=reason):
        load_api_overrides(path)


def test_bundled_files_are_plain_json_with_a_schema_version():
    from importlib import resources

    for name in ("api_prices.json", "gpu_prices.json", "gpu_specs.json"):
        document = json.loads(resources.files("infercost.pricing").joinpath("data", name).read_text())
        assert document["schema_version"] == 1 and document["entries"]


def test_an_error_never_repeats_what_may_be_a_secret():
    with pytest.raises(InputError) as error:
        validate_entries([VALID | {"api_key": "sk-live-1234567890"}], ApiPrice, name="prices.json")
    assert "sk-live" not in str(error.value) and "api_key" in str(error.value)
    with pytest.raises(InputError) as typo:
        validate_entries([VALID | {"input_per_mtok": "sk-abc"}], ApiPrice, name="prices.json")
    assert "sk-abc" not in str(typo.value)
