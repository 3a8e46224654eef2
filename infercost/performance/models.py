"""Where a model's ``config.json`` comes from: the bundled copies (``data/configs``, sources in its ``index.json``),
a local file or model directory, or the Hugging Face Hub when online. Names match as people type them
(``gpt-oss-120b``, ``openai/gpt-oss-120b``, ``DeepSeek-R1-0528``, ``random:llama-3.1-8b``).

The numbers come from ``infercost.performance.architecture``; this module only finds configs.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from infercost.errors import InputError
from infercost.performance.architecture import Architecture, from_config, normalize_dtype

_CONFIGS = "data/configs"
# Suffixes a checkpoint's name carries that do not change its architecture.
_SUFFIXES = re.compile(r"(-(instruct|it|base|hf|chat|bf16|fp8|fp16|thinking|\d{4}|v\d+))+$")


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
    for key, canonical in keys:
        if "/" not in key and key in short:
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


def hub_config(model_id: str) -> dict[str, Any]:
    """A model's config from the Hugging Face Hub (never running its code), or InputError saying how to give one."""
    offline = os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("INFERCOST_OFFLINE") == "1"
    if "/" in model_id and not offline:
        try:
            from transformers import AutoConfig

            return AutoConfig.from_pretrained(model_id, trust_remote_code=False).to_dict()
        except Exception as error:  # noqa: BLE001 - offline, gated, unknown id, remote code: all say the same below
            reason = f"not found on the Hugging Face Hub ({type(error).__name__})"
        else:  # pragma: no cover
            reason = ""
    else:
        reason = "not bundled" if "/" not in model_id else "not bundled, and the Hub is off (HF_HUB_OFFLINE)"
    raise InputError("model", f"{model_id!r} is {reason}; give its config with --config PATH (a config.json or a "
                              f"model directory), or use one of `python -m infercost models list`")


def resolve(name: str | None, config_path: str | os.PathLike[str] | None = None) -> Resolved:
    """A model by name or config file: a local ``config_path`` wins, then a bundled config, then the Hub."""
    if config_path:
        config = read_config_path(config_path)
        label = name or str(config.get("_name_or_path") or Path(config_path).expanduser().resolve().name)
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
                     "attention": arch.attention.kind, "total_params": arch.total_params,
                     "active_params": arch.active_params, "default_dtype": arch.default_dtype,
                     "max_context": arch.max_position_embeddings})  # fmt: skip
    return rows


__all__ = ["BundledModel", "Resolved", "bundled_models", "check_context", "find_bundled", "list_models",
           "normalize_dtype", "read_config_path", "resolve"]  # fmt: skip
