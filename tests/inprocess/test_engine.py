"""The in-process engine on tiny random models: exact output lengths, honest timings, clear errors."""

import time

import pytest

from infercost.errors import InputError
from infercost.performance.roofline import model_shape_from_config
from infercost.runner.inprocess import (
    RANDOM_ARCHITECTURES,
    InProcessModel,
    load_model,
    make_prompt_ids,
    resolve_device,
    resolve_dtype,
)


def test_fixed_batch_generates_exactly_the_requested_tokens(tiny_llama):
    prompts = [make_prompt_ids(tiny_llama, n, seed=n) for n in (5, 17, 9)]
    timing = tiny_llama.generate_timed(prompts, max_new_tokens=12)
    assert timing.n_in == [5, 17, 9]
    assert timing.n_out == [12, 12, 12]
    assert [len(ids) for ids in timing.output_ids] == [12, 12, 12]
    assert len(timing.token_times) == 12


def test_timestamps_start_before_prefill_and_increase(tiny_llama):
    before = time.perf_counter()
    timing = tiny_llama.generate_timed([make_prompt_ids(tiny_llama, 8, seed=1)], max_new_tokens=6)
    times = [timing.t_start, *timing.token_times]
    assert before <= timing.t_start
    assert all(a < b for a, b in zip(times, times[1:], strict=False))
    assert timing.ttft_s > 0 and timing.tpot_s > 0
    assert timing.e2e_s == pytest.approx(timing.ttft_s + 5 * timing.tpot_s)


def test_left_padding_does_not_change_what_a_request_generates(tiny_llama):
    prompts = [make_prompt_ids(tiny_llama, n, seed=n) for n in (3, 20, 11)]
    batched = tiny_llama.generate_timed(prompts, max_new_tokens=8).output_ids
    alone = [list(tiny_llama.stream(prompt, 8, 8)) for prompt in prompts]
    assert batched == alone
    assert len({tuple(ids) for ids in alone}) == 3  # the synthetic weights are not degenerate


def test_eos_is_suppressed_until_min_tokens_then_ends_a_stream():
    model = load_model("random:tiny-llama", device="cpu")
    prompt = make_prompt_ids(model, 10, seed=3)
    first = next(model.stream(prompt, 4, 0))
    model.eos_ids = (first,)  # the token this prompt produces first now counts as EOS
    assert list(model.stream(prompt, 4, 0)) == [first]
    forced = list(model.stream(prompt, 4, 4))
    assert len(forced) == 4 and first not in forced
    assert first not in model.generate_timed([prompt], 4).output_ids[0]


def test_stream_batch_finishes_each_request_at_its_own_length(tiny_llama):
    prompts = [make_prompt_ids(tiny_llama, 6, seed=s) for s in (1, 2)]
    rows = list(tiny_llama.stream_batch(prompts, [2, 4], [2, 4]))
    assert len(rows) == 4
    assert [row[0] is None for row in rows] == [False, False, True, True]
    assert [item[1] for item in (rows[1][0], rows[3][1])] == [True, True]


def test_prompt_ids_are_ordinary_tokens_and_reproducible(tiny_llama):
    ids = make_prompt_ids(tiny_llama, 2000, seed=7)
    assert ids == make_prompt_ids(tiny_llama, 2000, seed=7)
    assert ids != make_prompt_ids(tiny_llama, 2000, seed=8)
    assert not set(ids) & tiny_llama.special_ids
    assert all(tiny_llama.regular_ids[0] <= t < tiny_llama.regular_ids[1] for t in ids)


@pytest.mark.parametrize("name", ["random:tiny-llama", "random:tiny-qwen"])
def test_info_describes_the_model(name):
    model = load_model(name, device="cpu")
    info = model.info
    assert info["dtype"] == "float32" and info["device"] == "cpu" and info["random_weights"]
    assert info["weight_bytes"] == 4 * info["n_params"]
    kwargs = {k: v for k, v in RANDOM_ARCHITECTURES[name.split(":")[1]].items() if k != "regular_ids"}
    assert model_shape_from_config(kwargs).n_params == info["n_params"]  # the roofline counts what was built


def test_dtype_choice_is_applied():
    model = load_model("random:tiny-qwen", dtype="bfloat16", device="cpu")
    assert model.info["dtype"] == "bfloat16"
    assert model.info["weight_bytes"] == 2 * model.info["n_params"]
    assert len(model.generate_timed([[5, 6, 7]], 3).output_ids[0]) == 3


def test_auto_dtype_is_float32_on_cpu():
    assert str(resolve_dtype("auto", resolve_device("cpu"))) == "torch.float32"


@pytest.mark.parametrize("call, field", [
    (lambda: load_model("random:no-such-model"), "model"),
    (lambda: load_model("random:tiny-llama", dtype="float8"), "dtype"),
    (lambda: load_model("random:tiny-llama", device="tpu"), "device"),
    (lambda: load_model("not a model name"), "model"),
])
def test_bad_choices_name_the_field(call, field):
    with pytest.raises(InputError) as raised:
        call()
    assert raised.value.field == field


def test_a_hub_id_offline_fails_fast_and_clearly():
    started = time.monotonic()
    with pytest.raises(InputError) as raised:
        load_model("some-org/some-model-that-is-not-cached")  # conftest sets HF_HUB_OFFLINE=1
    assert time.monotonic() - started < 10
    assert "not in the local Hugging Face cache" in str(raised.value)


def test_a_local_model_directory_loads(tmp_path, tiny_llama):
    tiny_llama.model.save_pretrained(tmp_path)
    model = load_model(str(tmp_path), device="cpu")
    assert model.info["n_params"] == tiny_llama.info["n_params"]
    assert not model.info["random_weights"]
    assert model.generate_timed([[5, 6, 7]], 4).output_ids == tiny_llama.generate_timed([[5, 6, 7]], 4).output_ids


@pytest.mark.parametrize("bad, field", [([[]], "prompts"), ([[1, 2]], "max_new_tokens"), ([[99999]], "prompt")])
def test_bad_generation_requests_name_the_field(tiny_llama: InProcessModel, bad, field):
    max_new = 5000 if field == "max_new_tokens" else 2
    with pytest.raises(InputError) as raised:
        tiny_llama.generate_timed(bad, max_new)
    assert raised.value.field == field


def test_shape_feeds_the_roofline(tiny_llama):
    shape = tiny_llama.shape
    assert shape.n_params == tiny_llama.info["n_params"]
    assert (shape.n_layers, shape.n_kv_heads, shape.head_dim) == (2, 2, 16)
