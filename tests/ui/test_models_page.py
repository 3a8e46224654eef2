"""The Models page: pick or type a model, a dtype, a KV dtype and a context; see what it needs and where it fits."""

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from infercost.performance.models import bundled_config

ROOT = Path(__file__).resolve().parents[2]


def models_page() -> AppTest:
    return AppTest.from_file(str(ROOT / "infercost/ui/pages/models.py"), default_timeout=120).run()


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label))


def fits_table(at: AppTest):
    return next(frame.value for frame in at.dataframe if "1 GPU" in frame.value.columns)


def test_gpt_oss_120b_fits_one_h100_with_ten_32k_sequences():
    at = models_page()
    assert not at.exception
    assert metric(at, "Parameters") == "116.83B" and metric(at, "Weights (mxfp4)") == "65.2 GB"
    at.number_input(key="models_context").set_value(32768).run()
    table = fits_table(at)
    h100 = table[table.gpu == "H100 SXM"].iloc[0]
    assert h100["1 GPU"] == "10" and int(h100["8 GPUs"].replace(",", "")) > 8 * 10 and h100.native == "emulated"
    l4 = table[table.gpu == "L4"].iloc[0]
    assert l4["1 GPU"] == "does not fit" and int(l4["4 GPUs"]) > 0  # 65 GB of weights need four 24 GB L4s
    assert not table.isna().any().any()  # no grey None in the table (issue 24)


def test_a_dtype_and_kv_dtype_change_the_bytes():
    at = models_page()
    at.selectbox(key="models_model").set_value("qwen3-32b").run()
    at.selectbox(key="models_dtype").set_value("fp8").run()
    at.selectbox(key="models_kv_dtype").set_value("fp8").run()
    assert not at.exception
    assert metric(at, "Weights (fp8)") == "34.3 GB"  # 31.2B matmul weights at 1 byte, embedding and head at 2
    assert metric(at, "KV per token") == "128.0 KiB"  # fp8: 64 layers x 8 KV heads x 128 x 2 x 1 byte


def test_a_config_path_is_read_and_a_bad_one_is_shown_on_the_form(tmp_path):
    good = tmp_path / "config.json"
    good.write_text(json.dumps(bundled_config("phi-4")))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    at = models_page()
    at.selectbox(key="models_model").set_value("Another model (Hugging Face id or config.json path)").run()
    at.text_input(key="models_other").set_value(str(bad)).run()
    assert not at.exception and "config" in at.error[0].value and "not JSON" in at.error[0].value
    at.text_input(key="models_other").set_value(str(good)).run()
    assert not at.exception and not at.error and metric(at, "Parameters") == "14.66B"


def test_a_kimi_linear_config_is_sized_with_its_delta_attention_state(tmp_path):
    """Kimi-Linear was refused for its Kimi Delta Attention layers; its config by path now shows its 49.12B
    parameters, a cache of its 7 MLA layers only, and a sequence's fixed state beside it."""
    from tests.performance.test_architecture import KIMI_LINEAR

    config = tmp_path / "config.json"
    config.write_text(json.dumps(KIMI_LINEAR))
    at = models_page()
    at.selectbox(key="models_model").set_value("Another model (Hugging Face id or config.json path)").run()
    at.text_input(key="models_other").set_value(str(config)).run()
    assert not at.exception and not at.error
    assert metric(at, "Parameters") == "49.12B" and metric(at, "KV per token") == "7.9 KiB"
    h200 = fits_table(at).set_index("gpu").loc["H200"]
    assert int(h200["1 GPU"].replace(",", "")) > 0


def test_a_model_of_over_a_trillion_parameters_or_bytes_is_shown_in_t_not_cut_off():
    """GLM-5 in bfloat16 weighs 1,487.8 GB, which its metric card cut to "1,487.8…" in Chromium; Kimi-K2 has
    1,026.41B parameters. From a trillion on they read in T and TB."""
    at = models_page()
    at.selectbox(key="models_model").set_value("glm-5").run()
    at.selectbox(key="models_dtype").set_value("bfloat16").run()
    assert not at.exception and metric(at, "Weights (bfloat16)") == "1.49 TB"
    assert metric(at, "Parameters") == "743.91B"
    at.selectbox(key="models_model").set_value("kimi-k2").run()
    assert metric(at, "Parameters") == "1.03T"


def test_a_context_over_the_maximum_is_shown_on_the_form():
    at = models_page()
    at.selectbox(key="models_model").set_value("qwen3-8b").run()
    at.number_input(key="models_context").set_value(100_000).run()
    assert not at.exception and "context" in at.error[0].value and "40960" in at.error[0].value


def test_the_self_host_form_offers_the_bundled_dense_models():
    at = AppTest.from_file(str(ROOT / "infercost/ui/pages/compare.py"), default_timeout=120).run()
    assert not at.exception
    options = at.selectbox(key="cmp_model").options
    assert {"qwen3-32b", "phi-4", "llama-3.1-8b"} <= set(options)
    assert "mxfp4" in at.selectbox(key="cmp_dtype").options


def test_the_self_host_form_offers_every_bundled_model_at_its_own_dtype_and_an_engine():
    at = AppTest.from_file(str(ROOT / "infercost/ui/pages/compare.py"), default_timeout=120).run()
    assert {"gpt-oss-120b", "deepseek-v3", "qwen3-235b-a22b", "kimi-k2"} <= set(at.selectbox(key="cmp_model").options)
    at.selectbox(key="cmp_model").set_value("gpt-oss-120b").run()
    assert at.selectbox(key="cmp_dtype").value == "mxfp4"  # the checkpoint's own format
    at.selectbox(key="cmp_model").set_value("deepseek-v3").run()
    assert at.selectbox(key="cmp_dtype").value == "fp8"
    assert at.selectbox(key="cmp_engine").options == ["nearest published table's", "vLLM", "SGLang", "TensorRT-LLM"]
    at.selectbox(key="cmp_engine").set_value("SGLang").run()
    at.number_input(key="cmp_gpus").set_value(8).run()
    at.selectbox(key="cmp_gpu").set_value("H200").run()
    at.button(key="cmp_add").click().run()
    assert not at.exception and not at.error
    added = at.session_state["self_host"][-1]
    assert added["throughput"]["roofline"] == {"model": "deepseek-v3", "dtype": "fp8", "engine": "sglang",
                                               "gpu": "H200", "gpus": 8}  # fmt: skip


def test_the_self_host_form_offers_the_engine_releases_bundled_for_that_model_and_keeps_the_one_picked():
    """A release is part of a setup (releases of one engine differ more than GPUs do): the form lists the ones
    bundled for the model and engine, newest first; picking one calibrates on its tables and carries the
    same-release error; another model or engine without it falls back to any release, not to an error."""
    at = AppTest.from_file(str(ROOT / "infercost/ui/pages/compare.py"), default_timeout=120).run()
    at.selectbox(key="cmp_model").set_value("deepseek-r1").run()
    assert "cmp_release" not in [box.key for box in at.selectbox]  # no engine picked: no release to pick
    at.selectbox(key="cmp_dtype").set_value("nvfp4").run()
    at.selectbox(key="cmp_engine").set_value("SGLang").run()
    releases = at.selectbox(key="cmp_release").options
    assert releases[0] == "any release" and releases[1:3] == ["0.5.9", "0.5.6"]
    at.selectbox(key="cmp_release").set_value("0.5.9").run()
    at.number_input(key="cmp_gpus").set_value(4).run()
    at.selectbox(key="cmp_gpu").set_value("B200").run()
    at.button(key="cmp_add").click().run()
    assert not at.exception and not at.error
    added = at.session_state["self_host"][-1]
    assert added["throughput"]["roofline"]["engine_version"] == "0.5.9" and "sglang 0.5.9" in added["name"]
    at.selectbox(key="cmp_engine").set_value("vLLM").run()  # vLLM has no 0.5.9 of DeepSeek-R1
    assert not at.exception and at.selectbox(key="cmp_release").value == "any release"


def test_the_page_says_what_a_models_throughput_predictions_are_calibrated_on():
    """Before asking Compare, a person sees whether a model's throughput rests on bundled tables or on priors."""
    at = models_page()
    calibrated = next(m.value for m in at.markdown if m.value.startswith("**Throughput predictions**"))
    assert "bundled vllm tables" in calibrated and "bundled tensorrt-llm tables" in calibrated  # gpt-oss-120b
    at.selectbox(key="models_model").set_value("gemma-3-27b").run()
    assert not at.exception
    priors = next(m.value for m in at.markdown if m.value.startswith("**Throughput predictions**"))
    assert "no bundled table" in priors and "priors" in priors
    at.selectbox(key="models_model").set_value("deepseek-v3").run()
    twin = next(m.value for m in at.markdown if m.value.startswith("**Throughput predictions**"))
    assert "bundled sglang tables" in twin and "vllm tables of deepseek-r1, a model of the same shapes" in twin


def test_the_self_host_form_takes_the_layouts_its_model_and_gpus_can_run_and_prices_the_one_picked():
    """A layout is part of a setup (DeepSeek-R1 under attention data parallel decodes unlike under TP8): the form
    lists the layouts the GPUs can run for that model, keeps the one picked in the setup and its name, and falls back
    to plain tensor parallelism when the GPU count changes under it. A dense model on one GPU has nothing to pick."""
    at = AppTest.from_file(str(ROOT / "infercost/ui/pages/compare.py"), default_timeout=120).run()
    assert "cmp_layout" not in [box.key for box in at.selectbox]  # Llama-3.1-8B on one GPU
    at.selectbox(key="cmp_model").set_value("deepseek-r1").run()
    at.selectbox(key="cmp_engine").set_value("SGLang").run()
    at.number_input(key="cmp_gpus").set_value(8).run()
    at.selectbox(key="cmp_gpu").set_value("H200").run()
    layouts = at.selectbox(key="cmp_layout").options
    assert layouts[0] == "TP8 EP1 DP1" and {"TP8 EP8 DP1", "TP1 EP8 DP8"} <= set(layouts)
    at.selectbox(key="cmp_layout").set_value("TP1 EP8 DP8").run()
    at.button(key="cmp_add").click().run()
    assert not at.exception and not at.error
    added = at.session_state["self_host"][-1]
    assert added["throughput"]["roofline"] == {"model": "deepseek-r1", "dtype": "fp8", "engine": "sglang",
                                               "gpu": "H200", "gpus": 8, "tensor_parallel": 1,
                                               "expert_parallel": 8, "data_parallel": 8}  # fmt: skip
    assert "TP1 EP8 DP8" in added["name"]
    shown = [frame.value for frame in at.dataframe]
    assert any(added["name"] in frame.to_string() for frame in shown)  # priced beside the others
    at.number_input(key="cmp_gpus").set_value(4).run()  # DP8 cannot run on 4 GPUs
    assert not at.exception and at.selectbox(key="cmp_layout").value == "TP4 EP1 DP1"
