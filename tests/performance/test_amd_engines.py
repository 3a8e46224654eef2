"""TensorRT-LLM is NVIDIA's: a roofline setup on an AMD GPU is never scheduled as it, asked or by default."""

from __future__ import annotations

import subprocess
import sys

import pytest

from infercost.errors import InputError
from infercost.performance.predict import predict_roofline
from infercost.pricing import bundled_gpu_specs


def test_the_datasheets_name_amds_instinct_gpus():
    vendors = {spec.gpu: spec.vendor for spec in bundled_gpu_specs()}
    assert {gpu for gpu, vendor in vendors.items() if vendor == "AMD"} == {"MI300X", "MI325X", "MI355X"}


def test_asking_for_tensorrt_llm_on_an_amd_gpu_is_one_line_naming_the_engine():
    with pytest.raises(InputError) as raised:
        predict_roofline("llama-3.1-8b", "MI300X", 1, "bfloat16", 1000, 300, engine="trtllm")
    assert raised.value.field == "engine" and "NVIDIA GPUs only" in raised.value.reason
    done = subprocess.run([sys.executable, "-m", "infercost", "throughput", "roofline:llama-3.1-8b@1xMI300X:bf16",
                           "--engine", "trtllm", "--input-tokens", "1000", "--output-tokens", "300"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "engine" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_amd_gpu_is_calibrated_on_vllms_own_tables_not_on_tensorrt_llms_rescheduled():
    """Llama-3.1-8B's calibration set is NIM's (TensorRT-LLM): on an H100 it keeps it; an MI300X cannot run that
    engine, so the nearest vLLM tables calibrate it (AIConfigurator's, on H200s), not NIM's step costs scheduled as
    vLLM, an engine transfer (until vLLM's tables counted, that was what it got)."""
    nvidia = predict_roofline("llama-3.1-8b", "H100 SXM", 1, "bfloat16", 1000, 300)
    amd = predict_roofline("llama-3.1-8b", "MI300X", 1, "bfloat16", 1000, 300)
    assert nvidia.engine == "tensorrt-llm"
    assert amd.engine == "vllm" and amd.transfer == "any_release"  # no release named
    assert amd.notes[0].startswith("engine model calibrated on published:aic-vllm-")
    assert not any("scheduled as" in note for note in amd.notes)


def test_an_engine_nobody_measured_a_model_on_schedules_anothers_calibration_on_amd_and_says_so():
    """No SGLang table of Llama-3.1-70B is bundled: on an MI300X its vLLM calibration (not TensorRT-LLM's) is
    scheduled as SGLang, an engine transfer whose range compounds the GPU move's and the move between engines."""
    amd = predict_roofline("llama-3.1-70b", "MI300X", 8, "bfloat16", 1000, 300, engine="sglang")
    assert amd.engine == "sglang" and amd.transfer == "engine"
    assert any("measured on vllm, scheduled as sglang" in note for note in amd.notes)