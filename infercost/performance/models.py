"""Where a model's ``config.json`` comes from: the bundled copies (``data/configs``, sources in its ``index.json``),
a local file or model directory, or the Hugging Face Hub when online. Names match as people type them
(``gpt-oss-120b``, ``openai/gpt-oss-120b``, ``DeepSeek-R1-0528``, ``random:llama-3.1-8b``).

The numbers come from ``infercost.performance.architecture``; this module only finds configs.
"""

from __future__ import annotations

import json
import os
import re
import socket
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from infercost.errors import InputError
from infercost.performance.architecture import Architecture, fit, from_config, normalize_dtype

_CONFIGS = "data/configs"
# Suffixes a checkpoint's name carries that do not change its architecture (dates, releases, quantized copies).
_SUFFIX = r"-(instruct|it|base|hf|chat|thinking|bf16|fp16|fp8|dynamic|awq|gptq|gguf|mlx|int4|int8|w4a16|w8a8|"\
          r"nvfp4|mxfp4|\d+bit|\d{4}|v\d+(\.\d+)*)"
_SUFFIXES = re.compile(f"({_SUFFIX})+$")


@dataclass(frozen=True)
class BundledModel:
    """A bundled config and where it came from."""

    name: str  # our canonical name, e.g. ``llama-3.1-8b``
    hf_id: str
    family: str
    aliases: tuple[str, ...]
    source: dict[str, str]  # repo, commit, path of the copy
    licence: str
    notes: str = ""

    def config(self) -> dict[str, Any]:
        return bundled_config(self.name)

    def architecture(self) -> Architecture:
        return bundled_architecture(self.name)


@dataclass(frozen=True)
class Resolved:
    """A model name resolved to its architecture: ``source`` is ``bundled``, ``local`` or ``hub``."""

    name: str
    source: str
    architecture: Architecture
    config: dict[str, Any]
    bundled: BundledModel | None = None


@cache
def bundled_models() -> dict[str, BundledModel]:
    index = json.loads(resources.files("infercost.performance").joinpath(_CONFIGS, "index.json").read_text())
    return {name: BundledModel(name, entry["hf_id"], entry["family"], tuple(entry.get("aliases", ())),
                               entry["source"], entry["licence"], entry.get("notes", ""))
            for name, entry in index["models"].items()}  # fmt: skip


@cache
def bundled_config(name: str) -> dict[str, Any]:
    text = resources.files("infercost.performance").joinpath(_CONFIGS, f"{name}.json").read_text()
    return json.loads(text)


@cache
def bundled_architecture(name: str) -> Architecture:
    return from_config(bundled_config(name), name)


def _normal(name: str) -> str:
    text = re.sub(r"[\s_]+", "-", name.strip().lower().removeprefix("random:"))
    return text.replace("llama3", "llama-3").replace("qwen2-5", "qwen2.5").replace("meta-llama-", "llama-")


@cache
def _keys() -> list[tuple[str, str]]:
    """(key, canonical name) pairs, longest key first so ``deepseek-v3.2`` wins over ``deepseek-v3``."""
    pairs = set()
    for model in bundled_models().values():
        for key in (model.name, model.hf_id, model.hf_id.split("/")[-1], *model.aliases):
            pairs.add((_normal(key), model.name))
    return sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)


@cache  # pure on the bundled set; the engine model asks it for every table's model (46k calls per view)
def find_bundled(name: str) -> BundledModel | None:
    """The bundled model a name refers to: exactly (its name, Hugging Face id or an alias, any case, with or without
    the organisation), then without suffixes like ``-Instruct``, then the longest bundled name the text contains."""
    wanted = _normal(name)
    short = wanted.split("/")[-1]
    keys = _keys()
    for candidate in (wanted, short, _SUFFIXES.sub("", short)):
        for key, canonical in keys:
            if candidate in (key, key.split("/")[-1]):
                return bundled_models()[canonical]
    for key, canonical in keys:  # "meta-llama-3-70b-instruct", "deepseek-r1-0528", not "phi-4-mini"
        at = short.find(key) if "/" not in key else -1
        if at >= 0 and re.fullmatch(f"({_SUFFIX})*", short[at + len(key):]):
            return bundled_models()[canonical]
    return None


def read_config_path(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A ``config.json``, or a model directory holding one. InputError naming ``config`` otherwise."""
    file = Path(path).expanduser()
    if file.is_dir():
        file = file / "config.json"
    if not file.is_file():
        raise InputError("config", f"no config.json at {str(path)!r}")
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError("config", f"{file.name} is not JSON ({error})") from None
    if not isinstance(config, dict):
        raise InputError("config", f"{file.name} must hold a JSON object")
    return config


def hub_reachable(host: str = "huggingface.co") -> bool:
    """Whether the Hub's name resolves: without a network, transformers retries for most of a minute first."""
    if os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("INFERCOST_OFFLINE") == "1":
        return False
    endpoint = os.environ.get("HF_ENDPOINT", "")
    host = re.sub(r"^\w+://|[:/].*$", "", endpoint) or host
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


def hub_config(model_id: str) -> dict[str, Any]:
    """A model's config.json from the Hugging Face Hub, read as the JSON it is (never running its code), or
    InputError saying how to give one. The file as published, not ``AutoConfig(...).to_dict()``: transformers 5
    rewrites some configs on the way (Nemotron-H's ``hybrid_override_pattern`` and ``num_hidden_layers`` become a
    ``layers_block_type`` list) and refuses a model type it only knows as remote code (Kimi-K2's ``kimi_k2``),
    where the published fields are what the architecture reader and the bundled configs speak."""
    offline = not hub_reachable() if "/" in model_id else True
    if "/" in model_id and not offline:
        try:
            from huggingface_hub import hf_hub_download

            path = hf_hub_download(model_id, "config.json")
        except Exception as error:  # noqa: BLE001 - offline, gated, unknown id: all say the same below
            reason = f"not found on the Hugging Face Hub ({type(error).__name__})"
        else:
            return read_config_path(path)
    else:
        reason = "not bundled" if "/" not in model_id else "not bundled, and the Hugging Face Hub is out of reach"
    raise InputError("model", f"{model_id!r} is {reason}; give its config with --config PATH (a config.json or a "
                              f"model directory), or use one of `python -m infercost models list`")


def resolve(name: str | None, config_path: str | os.PathLike[str] | None = None) -> Resolved:
    """A model by name or config file: a local ``config_path`` wins, then a bundled config, then the Hub."""
    if config_path:
        config = read_config_path(config_path)
        where = Path(config_path).expanduser().resolve()
        folder = where.parent.name if where.is_file() else where.name  # a model is named by its directory
        label = name or str(config.get("_name_or_path") or folder)
        return Resolved(label, "local", from_config(config, label), config)
    if not name or not name.strip():
        raise InputError("model", "give a model name or --config PATH")
    bundled = find_bundled(name)
    if bundled:
        return Resolved(bundled.name, "bundled", bundled.architecture(), bundled.config(), bundled)
    config = hub_config(name.strip().removeprefix("random:"))
    return Resolved(name, "hub", from_config(config, name), config)


def check_context(arch: Architecture, context: int) -> int:
    """``context`` if the model takes that many tokens; InputError naming ``context`` otherwise."""
    if context < 1:
        raise InputError("context", f"must be at least 1 token, got {context}")
    if arch.max_position_embeddings and context > arch.max_position_embeddings:
        raise InputError("context", f"{context} tokens is over {arch.name}'s maximum of "
                                    f"{arch.max_position_embeddings} (max_position_embeddings)")
    return context


def list_models() -> list[dict[str, Any]]:
    """Every bundled model with its headline numbers, for ``models list``."""
    rows = []
    for model in bundled_models().values():
        arch = model.architecture()
        rows.append({"model": model.name, "hf_id": model.hf_id, "family": model.family, "kind": arch.kind,
                     "attention": arch.attention_kind, "total_params": arch.total_params,
                     "active_params": arch.active_params, "default_dtype": arch.default_dtype,
                     "max_context": arch.max_position_embeddings})  # fmt: skip
    return rows


__all__ = ["BundledModel", "Resolved", "bundled_models", "check_context", "find_bundled", "list_models",
           "normalize_dtype", "read_config_path", "resolve"]  # fmt: skip


# --- what a model needs ---------------------------------------------------------------------------------------------

FIT_GPU_COUNTS = (1, 2, 4, 8)
_16_BIT = ("float32", "float16", "bfloat16")


def native_dtypes(spec: Any) -> tuple[str, ...]:
    """The weight dtypes a GPU's tensor cores run: its datasheet's ``native_dtypes`` where it lists them, else what
    its FP8 and FP4 peaks say (no FP8 figure: no FP8 tensor cores; no FP4 figure: no FP4, as on Hopper)."""
    listed = getattr(spec, "native_dtypes", None)
    if listed:
        names = [str(d).strip().lower() for d in listed]
        names = [n for name in names for n in (("mxfp4", "nvfp4") if name == "fp4" else (name,))]
        return tuple(dict.fromkeys(_known_dtype(n) for n in names if _known_dtype(n)))
    native = [*_16_BIT, "int8"]
    native += ["fp8"] if getattr(spec, "fp8_dense_tflops", None) else []
    native += ["mxfp4", "nvfp4"] if getattr(spec, "fp4_dense_tflops", None) else []
    return tuple(native)


def _known_dtype(name: str) -> str | None:
    try:
        return normalize_dtype(name)
    except InputError:
        return None  # a datasheet may list formats weights never come in (tf32, fp6)


def model_report(resolved: Resolved, *, dtype: str | None = None, kv_dtype: str | None = None,
                 context: int | None = None, gpu_specs: Any = ()) -> dict[str, Any]:
    """What ``models show`` answers: parameters, weight and KV bytes, FLOPs per token, and where it fits (each
    datasheet at 1, 2, 4 and 8 GPUs, with the engine model's runtime reserve and KV share of free memory)."""
    from infercost.performance.engine import MEMORY_HEADROOM, RUNTIME_CONTEXT_GB

    arch = resolved.architecture
    dtype = normalize_dtype(dtype) if dtype else arch.default_dtype
    kv = normalize_dtype(kv_dtype) if kv_dtype else arch.default_kv_dtype(dtype)
    context = check_context(arch, min(arch.max_position_embeddings or 8192, 8192) if context is None else context)
    fits = []
    for spec in gpu_specs:
        # int4 is weight-only everywhere (Marlin, AWQ kernels); float32 runs on any GPU's CUDA cores
        native = dtype in native_dtypes(spec) or dtype in ("int4", "float32")
        for gpus in FIT_GPU_COUNTS:
            row = fit(arch, memory_gb=spec.memory_gb, gpus=gpus, dtype=dtype, kv_dtype=kv, context=context,
                      runtime_gb_per_gpu=RUNTIME_CONTEXT_GB, headroom=MEMORY_HEADROOM)  # fmt: skip
            fits.append({"gpu": spec.gpu, **row, "native": native,
                         **({} if native else {"note": f"{dtype} is not native on {spec.gpu}: emulated (weights "
                                                       "widened to 16 bits for compute)"})})  # fmt: skip
    return {
        "model": resolved.name, "source": resolved.source,
        "hf_id": resolved.bundled.hf_id if resolved.bundled else None,
        "family": resolved.bundled.family if resolved.bundled else arch.model_type,
        "kind": arch.kind, "attention": arch.attention_kind, "architecture": dict(arch.fields),
        "total_params": arch.total_params, "active_params": arch.active_params,
        "params_by_part": arch.params_by_part(), "mtp_layers": arch.mtp_layers,
        "layers": arch.num_layers, "moe_layers": len(arch.moe_layers),
        "windowed_layers": sum(1 for layer in arch.layers if layer.window is not None),
        "max_context": arch.max_position_embeddings, "dtype": dtype, "default_dtype": arch.default_dtype,
        "weight_bytes": arch.weight_bytes(dtype), "kv_dtype": kv, "context": context,
        "kv_bytes_per_token": arch.kv_bytes_per_token(kv),
        "kv_bytes_per_sequence": arch.kv_bytes_per_sequence(context, kv),
        "flops_per_token": arch.flops_per_token(context), "fits": fits,
        "config_source": resolved.bundled.source if resolved.bundled else None,
    }  # fmt: skip


def fits_by_gpu(fits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``fits`` as one row per GPU the weights fit on: concurrent sequences at each GPU count (None: the weights do
    not fit on that many), and whether the GPU runs the dtype natively."""
    rows: dict[str, dict[str, Any]] = {}
    for fit_row in fits:
        row = rows.setdefault(fit_row["gpu"], {"gpu": fit_row["gpu"], "native": fit_row["native"]})
        label = f"{fit_row['gpus']} GPU" + ("s" if fit_row["gpus"] > 1 else "")
        row[label] = fit_row["max_sequences"] if fit_row["weights_fit"] else None
    return [row for row in rows.values() if any(v is not None for k, v in row.items() if k.endswith(("GPU", "GPUs")))]
