"""Finding a model's config (bundled, local, Hub) and the ``models`` command; the roofline for any dense model."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from infercost.errors import InputError
from infercost.performance.models import find_bundled, model_report, native_dtypes, resolve


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "infercost", *args], capture_output=True, text=True, timeout=300,
                          env=env)  # fmt: skip


@pytest.mark.parametrize("typed, name", [
    ("gpt-oss-120b", "gpt-oss-120b"), ("openai/gpt-oss-120b", "gpt-oss-120b"), ("DeepSeek-R1-0528", "deepseek-r1"),
    ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.1-70b"), ("random:llama-3.1-8b", "llama-3.1-8b"),
    ("deepseek-ai/DeepSeek-V3.1", "deepseek-v3"), ("DeepSeek-V3.2-Exp", "deepseek-v3.2"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b"), ("meta-llama/Meta-Llama-3-8B-Instruct", "llama-3.1-8b"),
    ("Qwen3 32B", "qwen3-32b"), ("moonshotai/Kimi-K2-Instruct-0905", "kimi-k2"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"), ("Qwen/Qwen2.5-7B-Instruct-AWQ", "qwen2.5-7b"),
    ("nvidia/Llama-3.1-70B-Instruct-FP8", "llama-3.1-70b"),
])  # fmt: skip
def test_names_resolve_as_people_type_them(typed, name):
    assert find_bundled(typed).name == name


@pytest.mark.parametrize("typed", ["qwen3", "gpt-4o", "llama", "microsoft/Phi-4-mini-instruct", "Qwen3-32B-Coder"])
def test_a_name_that_is_no_bundled_model_matches_nothing(typed):
    assert find_bundled(typed) is None


def test_a_local_config_or_model_directory_resolves(tmp_path):
    from infercost.performance.models import bundled_config

    (tmp_path / "config.json").write_text(json.dumps(bundled_config("qwen3-8b")))
    for path in (tmp_path, tmp_path / "config.json"):
        resolved = resolve(None, path)
        assert resolved.source == "local" and resolved.architecture.total_params == 8_190_735_360


def test_offline_an_unknown_hub_id_says_how_to_give_a_config(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError) as raised:
        resolve("someorg/some-new-model")
    assert raised.value.field == "model" and "--config PATH" in str(raised.value)


def test_fp4_is_native_on_blackwell_only():
    hopper = SimpleNamespace(fp8_dense_tflops=1979, fp4_dense_tflops=None)
    blackwell = SimpleNamespace(fp8_dense_tflops=4500, fp4_dense_tflops=9000)
    assert "mxfp4" not in native_dtypes(hopper) and {"mxfp4", "nvfp4", "fp8"} <= set(native_dtypes(blackwell))
    listed = SimpleNamespace(native_dtypes=["bf16", "FP8", "fp4", "tf32"], fp8_dense_tflops=None)
    assert native_dtypes(listed) == ("bfloat16", "fp8", "mxfp4", "nvfp4")


def test_the_report_fits_gpt_oss_120b_on_one_h100_as_emulated_fp4():
    from infercost.pricing import bundled_gpu_specs

    report = model_report(resolve("gpt-oss-120b"), context=32768, gpu_specs=bundled_gpu_specs())
    h100 = next(row for row in report["fits"] if row["gpu"] == "H100 SXM" and row["gpus"] == 1)
    # (80 GB - 1 GB runtime) - 65.2 GB weights, 90% of it for 1.213 GB sequences
    expected = int((79e9 - report["weight_bytes"]) * 0.9 // report["kv_bytes_per_sequence"])
    assert h100["weights_fit"] and h100["max_sequences"] == expected == 10 and not h100["native"]
    b200 = next(row for row in report["fits"] if row["gpu"] == "B200" and row["gpus"] == 1)
    assert b200["native"]


def test_models_list_json_lists_every_bundled_model():
    result = cli("models", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["model"]: row for row in json.loads(result.stdout)}
    assert rows["gpt-oss-120b"]["kind"] == "moe" and rows["gpt-oss-120b"]["default_dtype"] == "mxfp4"
    assert rows["qwen3-32b"]["total_params"] == rows["qwen3-32b"]["active_params"]
    assert {"family", "kind", "total_params", "active_params", "default_dtype"} <= set(rows["kimi-k2"])


def test_models_list_says_which_models_throughput_is_calibrated_on_and_under_which_engines():
    """A model without a bundled table is predicted from priors alone: the list says so before anyone asks."""
    from infercost.performance.predict import predict_roofline

    rows = {row["model"]: row for row in json.loads(cli("models", "list", "--json").stdout)}
    assert rows["gpt-oss-120b"]["tables"].keys() == {"vllm", "tensorrt-llm"}
    assert rows["gpt-oss-120b"]["tables"]["vllm"] > 10 and rows["gemma-3-27b"]["tables"] == {}
    # the releases --engine-version can name, newest first (0.5.10 after 0.5.9, not before it as text sorts)
    assert rows["deepseek-r1"]["releases"]["sglang"][:2] == ["0.5.9", "0.5.6"]
    assert rows["qwen3.5-397b-a17b"]["releases"]["sglang"][:2] == ["0.5.10.post1", "0.5.9"]
    assert rows["gemma-3-27b"]["releases"] == {} and "1.8.0" not in rows["llama-3.1-70b"]["releases"].get(
        "tensorrt-llm", [])  # NIM's container version is not a TensorRT-LLM release
    for model in ("gemma-3-27b", "qwen3-30b-a3b"):
        assert predict_roofline(model, "H200", 1, "bfloat16", 1000, 100).transfer == "model"
    assert predict_roofline("gpt-oss-120b", "H200", 1, "mxfp4", 1000, 100).transfer != "model"
    shown = cli("models", "list").stdout.splitlines()
    assert "none: priors" in next(line for line in shown if line.startswith("gemma-3-27b"))
    # a model of the same shapes calibrates DeepSeek-V3 under the engine none of its own tables measured
    assert rows["deepseek-v3"]["twin_tables"] == {"deepseek-r1": {"vllm": rows["deepseek-r1"]["tables"]["vllm"]}}
    assert rows["deepseek-r1"]["twin_tables"] == {} and rows["gemma-3-27b"]["twin_tables"] == {}
    assert "vllm 9 of deepseek-r1" in next(line for line in shown if line.startswith("deepseek-v3 "))


def test_models_show_json_has_every_field():
    result = cli("models", "show", "DeepSeek-R1-0528", "--dtype", "fp8", "--kv-dtype", "fp8", "--context", "4096",
                 "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["model"] == "deepseek-r1" and payload["source"] == "bundled"
    assert payload["architecture"]["kv_lora_rank"] == 512 and payload["kv_dtype"] == "fp8"
    assert payload["kv_bytes_per_token"] == 61 * (512 + 64) and payload["kv_bytes_per_sequence"] == 4096 * 61 * 576
    assert payload["context"] == 4096 and payload["flops_per_token"] > 2 * 36e9
    assert {(row["gpu"], row["gpus"]) for row in payload["fits"]} >= {("H200", 8), ("B200", 1)}
    eight_h200 = next(row for row in payload["fits"] if row["gpu"] == "H200" and row["gpus"] == 8)
    assert eight_h200["weights_fit"] and eight_h200["max_sequences"] > 0


def test_models_show_takes_a_config_file(tmp_path):
    from infercost.performance.models import bundled_config

    path = tmp_path / "config.json"
    path.write_text(json.dumps(bundled_config("phi-4")))
    result = cli("models", "show", "--config", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["source"] == "local"


@pytest.mark.parametrize("args, field", [
    (["no-such-model"], "model"),
    (["--config", "NOTJSON"], "config"),
    (["--config", "MISSING"], "config.num_hidden_layers"),
    (["qwen3-32b", "--dtype", "fp6"], "dtype"),
    (["qwen3-32b", "--kv-dtype", "int3"], "dtype"),
    (["qwen3-32b", "--context", "1000000"], "context"),
    (["qwen3-32b", "--context", "0"], "context"),
])  # fmt: skip
def test_bad_input_is_one_line_naming_the_field_and_exit_2(args, field, tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "missing.json").write_text('{"model_type": "llama", "hidden_size": 64}')
    args = [{"NOTJSON": str(tmp_path / "bad.json"), "MISSING": str(tmp_path / "missing.json")}.get(a, a) for a in args]
    result = cli("models", "show", *args)
    assert result.returncode == 2 and result.stderr.startswith(f"error: {field}:") and result.stderr.count("\n") == 1


@pytest.mark.parametrize("dtype", ["bf16", "mxfp4", "nvfp4"])
def test_throughput_roofline_works_for_a_bundled_dense_model(dtype):
    result = cli("throughput", f"roofline:Qwen/Qwen3-32B@1xB200:{dtype}", "--input-tokens", "1000",
                 "--output-tokens", "300", "--concurrency", "1,4", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert [p["concurrency"] for p in payload["points"]] == [1, 4]
    assert all(p["output_throughput"] > 0 for p in payload["points"])


def _on_fewest_b200s(levels: list[int], input_len: int, output_len: int, dtype: str = ""
                     ) -> Iterator[tuple[str, Any]]:  # fmt: skip
    """Every bundled model predicted on the fewest B200s that hold it (in FP8 where the checkpoint's 16 bits fit on
    no eight: GLM-5's 744B, served from its FP8 copy), at these levels; in ``dtype`` where given and eight hold it."""
    from infercost.performance.models import bundled_models
    from infercost.performance.predict import Load, predict_roofline

    for name, model in bundled_models().items():
        arch = model.architecture()
        weights = next(each for each in (dtype, arch.default_dtype, "fp8")
                       if each and arch.weight_bytes(each) < 8 * 179e9)  # fmt: skip
        for gpus in (1, 2, 4, 8):
            try:
                yield name, predict_roofline(name, "B200", gpus, weights, input_len, output_len, Load(levels))
            except InputError as error:
                assert error.field in ("gpus", "tensor_parallel"), (name, gpus, error)
                continue
            break
        else:
            pytest.fail(f"{name} fits on no B200 count up to 8")


def test_throughput_answers_for_every_bundled_architecture_where_it_fits():
    """Issue 22: MoE, MLA, windowed and hybrid models are predicted too."""
    for name, predicted in _on_fewest_b200s([1, 8], 1000, 200):
        assert [p.level for p in predicted.points] == [1, 8], name
        assert all(p.output_throughput > 0 and p.mean_tpot_ms > 0 for p in predicted.points), name


def test_every_bundled_models_ttft_and_throughput_grow_with_users():
    """More users never wait less for a first token or serve fewer tokens (within the simulation's jitter). A
    calibration whose TTFT correction lowered NIM's waves of prompts, carried to users out of step, made Llama-3.1-70B's
    TTFT fall from 101 ms at one user to 41 at four on a B200 in FP8 (``Calibration.at_spread``)."""
    for name, predicted in _on_fewest_b200s([1, 2, 4, 8, 16, 32, 64], 2000, 300, dtype="fp8"):
        ttft = [p.mean_ttft_ms for p in predicted.points]
        served = [p.output_throughput for p in predicted.points]
        assert all(later >= 0.8 * earlier for earlier, later in itertools.pairwise(ttft)), (name, ttft)
        assert all(later >= 0.95 * earlier for earlier, later in itertools.pairwise(served)), (name, served)


@pytest.mark.parametrize("dtype", ["int4", "int8", "mxfp4"])
def test_integer_and_4_bit_weights_keep_a_16_bit_kv_cache(dtype):
    """Attention reads 16-bit keys beside 4-bit or integer weights; the KV cache was costed at the weights' width
    (an int4 model's cache at half a byte a value, four times too many tokens)."""
    from infercost.performance.engine import ENGINE_PRESETS
    from infercost.performance.profiles import engine_hardware, setup_for

    setup = setup_for("qwen3-8b", engine_hardware("B200", 1, dtype), dtype, ENGINE_PRESETS["vllm"])
    sixteen = setup_for("qwen3-8b", engine_hardware("B200", 1, "bfloat16"), "bfloat16", ENGINE_PRESETS["vllm"])
    assert setup.cost.kv_bytes_per_token == sixteen.cost.kv_bytes_per_token


def test_nvfp4_weights_keep_an_fp8_kv_cache_as_their_checkpoints_name_it():
    """NVIDIA's NVFP4 checkpoints say ``kv_cache_quant_algo: FP8``: a 16-bit cache halved the tokens that fit, and
    queued 64 users of 9,216 tokens on one B200 for a 76 s TTFT where 238 ms was measured."""
    from infercost.performance.engine import ENGINE_PRESETS
    from infercost.performance.models import bundled_architecture
    from infercost.performance.profiles import engine_hardware, setup_for

    def kv(dtype: str) -> float:
        setup = setup_for("qwen3-8b", engine_hardware("B200", 1, dtype), dtype, ENGINE_PRESETS["vllm"])
        return setup.cost.kv_bytes_per_token

    assert kv("nvfp4") == kv("fp8") == kv("bfloat16") / 2
    assert bundled_architecture("qwen3-8b").default_kv_dtype("nvfp4") == "fp8"


@pytest.fixture
def hub(tmp_path):
    """A Hugging Face Hub on 127.0.0.1 serving config.json files, as huggingface_hub downloads them (a HEAD with the
    commit and ETag, then the file); the environment that points the CLI at it, with a cache of its own."""
    import hashlib
    import http.server
    import os
    import threading

    files: dict[str, bytes] = {}

    class Hub(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> bytes | None:
            body = files.get(self.path.partition("/resolve/")[0].lstrip("/")) if "/resolve/main/config.json" in \
                self.path else None  # fmt: skip
            if body is None:
                self.send_response(404)
                self.send_header("X-Error-Code", "RepoNotFound")
                self.end_headers()
                return None
            self.send_response(200)
            self.send_header("X-Repo-Commit", "0" * 40)
            self.send_header("ETag", f'"{hashlib.sha1(body).hexdigest()}"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return body

        def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
            self._answer()

        def do_GET(self) -> None:  # noqa: N802
            body = self._answer()
            if body is not None:
                self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{server.server_port}", "HF_HOME": str(tmp_path / "hf")}
    env.pop("HF_HUB_OFFLINE", None)
    yield SimpleNamespace(files=files, env=env)
    server.shutdown()


def test_a_hub_model_is_read_from_its_published_config_json(hub):
    """Through AutoConfig(...).to_dict(), transformers 5 hands back a Nemotron-H config without num_hidden_layers
    or hybrid_override_pattern (it lists layers_block_type instead): a Nemotron-H the bundle lacked was refused as
    'config.num_hidden_layers: missing', and a remote-code model type (Kimi-K2's kimi_k2) as not on the Hub. The
    published file is what the reader and the bundled configs speak."""
    from infercost.performance.models import bundled_config

    hub.files["acme/hybrid-56b-custom"] = json.dumps(bundled_config("nemotron-h-56b")).encode()
    hub.files["acme/trillion-moe"] = json.dumps(bundled_config("kimi-k2")).encode()
    for model_id, twin in (("acme/hybrid-56b-custom", "nemotron-h-56b"), ("acme/trillion-moe", "kimi-k2")):
        shown = cli("models", "show", model_id, "--json", env=hub.env)
        assert shown.returncode == 0, shown.stderr
        report = json.loads(shown.stdout)
        assert report["source"] == "hub"
        assert report["total_params"] == json.loads(cli("models", "show", twin, "--json").stdout)["total_params"]
    missing = cli("models", "show", "acme/not-there", "--json", env=hub.env)
    assert missing.returncode == 2 and missing.stderr.strip().count("\n") == 0
    assert "not found on the Hugging Face Hub" in missing.stderr and "--config PATH" in missing.stderr
