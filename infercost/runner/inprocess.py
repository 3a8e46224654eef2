"""The in-process engine: a transformers causal LM on CPU or CUDA, timed step by step.

Speed does not depend on weight values, so a named architecture (``random:llama-3.1-8b``) is built from its config
with fast synthetic weights and measures like the real model; a local directory or a Hub id loads real weights.
Generation is a manual decode loop over the KV cache, so prefill (time to first token) and every decode step are timed
exactly, with CUDA synchronised before each timer read.

    model = load_model("random:tiny-llama")
    prompts = [make_prompt_ids(model, 128, seed=i) for i in range(4)]
    model.generate_timed(prompts, max_new_tokens=1)      # warm-up: the caller's job, discarded
    timing = model.generate_timed(prompts, max_new_tokens=64)
"""

from __future__ import annotations

import platform
import random
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
from transformers.initialization import no_init_weights

from infercost.errors import InputError
from infercost.performance.architectures import ARCHITECTURES
from infercost.performance.roofline import DTYPE_ALIASES, ModelShape, model_shape_from_config

RANDOM_PREFIX = "random:"

# transformers config kwargs, plus ``regular_ids``: the real architectures (infercost.performance.architectures)
# and tiny ones.
RANDOM_ARCHITECTURES: dict[str, dict[str, Any]] = {
    **ARCHITECTURES,
    # Tiny ones for tests: the same code paths, a few milliseconds per step on a CPU.
    "tiny-llama": dict(
        model_type="llama", vocab_size=4096, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=4096,
        rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, regular_ids=(3, 4096)),
    "tiny-qwen": dict(
        model_type="qwen2", vocab_size=4096, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096, rms_norm_eps=1e-6,
        rope_theta=1000000.0, use_sliding_window=False, tie_word_embeddings=True,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, regular_ids=(3, 4096)),
}

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

_WEIGHT_BLOCK = 1_000_003  # a prime, so rows of a matrix tiled from one random block are not copies of each other


@dataclass
class BatchTiming:
    """What one fixed batch did and when. All times are ``time.perf_counter()`` seconds."""

    t_start: float  # just before prefill
    token_times: list[float]  # after each step; index 0 is the first token (prefill done)
    n_in: list[int]  # prompt tokens per request, padding excluded
    n_out: list[int]  # generated tokens per request
    output_ids: list[list[int]]

    @property
    def ttft_s(self) -> float:
        return self.token_times[0] - self.t_start

    @property
    def e2e_s(self) -> float:
        return self.token_times[-1] - self.t_start

    @property
    def tpot_s(self) -> float:
        """Mean decode step after the first token (vLLM's TPOT); 0 when only one token was generated."""
        steps = len(self.token_times) - 1
        return (self.token_times[-1] - self.token_times[0]) / steps if steps else 0.0


@dataclass
class InProcessModel:
    """A loaded model with the facts a benchmark record needs (``info``) and the two ways to run it."""

    name: str
    model: Any  # a transformers PreTrainedModel
    tokenizer: Any | None  # None for random models: they have no real vocabulary
    device: torch.device
    dtype: torch.dtype
    regular_ids: tuple[int, int]  # [low, high) range of ordinary token ids
    special_ids: frozenset[int]
    eos_ids: tuple[int, ...]
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def vocab_size(self) -> int:
        return int(self.model.config.get_text_config().vocab_size)

    @property
    def max_context(self) -> int:
        return int(getattr(self.model.config.get_text_config(), "max_position_embeddings", 0) or 1 << 31)

    @property
    def shape(self) -> ModelShape:
        """The numbers the roofline needs (parameters, layers, KV heads, head size)."""
        return model_shape_from_config(self.model.config.get_text_config().to_dict())

    def generate_timed(self, prompts: Sequence[Sequence[int]], max_new_tokens: int) -> BatchTiming:
        """Run one fixed batch to exactly ``max_new_tokens`` each (EOS suppressed), timing prefill and every step."""
        _check_lengths(self, prompts, max_new_tokens)
        n = len(prompts)
        steps = self._decode(prompts, max_new_tokens, [max_new_tokens] * n)
        token_times: list[float] = []
        chosen: list[torch.Tensor] = []
        self._sync()
        t_start = time.perf_counter()
        for tokens in steps:
            self._sync()
            token_times.append(time.perf_counter())
            chosen.append(tokens)
        output_ids = torch.stack(chosen, dim=1).tolist()
        return BatchTiming(t_start, token_times, [len(p) for p in prompts], [max_new_tokens] * n, output_ids)

    def stream(self, prompt_ids: Sequence[int], max_new_tokens: int, min_new_tokens: int = 0) -> Iterator[int]:
        """Yield generated token ids one by one; stop at EOS once ``min_new_tokens`` are out, or at the maximum."""
        for row in self.stream_batch([prompt_ids], [max_new_tokens], [min_new_tokens]):
            token, last = row[0]  # type: ignore[misc]  # a single request is never finished before its last step
            yield token
            if last:
                return

    def stream_batch(self, prompts: Sequence[Sequence[int]], max_new_tokens: Sequence[int],
                     min_new_tokens: Sequence[int]) -> Iterator[list[tuple[int, bool] | None]]:
        """Decode a batch whose requests want different lengths, one step at a time.

        Each step yields, per request, ``(token, is_last)`` or None once that request has finished (its maximum
        reached, or EOS after its minimum). Stops when every request has finished.
        """
        _check_lengths(self, prompts, max(max_new_tokens))
        counts = [0] * len(prompts)
        done = [False] * len(prompts)
        for tokens in self._decode(prompts, max(max_new_tokens), min_new_tokens):
            row: list[tuple[int, bool] | None] = []
            for i, token in enumerate(tokens.tolist()):
                if done[i]:
                    row.append(None)
                    continue
                counts[i] += 1
                done[i] = counts[i] >= max_new_tokens[i] or (token in self.eos_ids and counts[i] >= min_new_tokens[i])
                row.append((token, done[i]))
            yield row
            if all(done):
                return

    def _decode(self, prompts: Sequence[Sequence[int]], n_steps: int,
                min_new_tokens: Sequence[int]) -> Iterator[torch.Tensor]:
        """Prefill, then decode with the KV cache; yield each step's chosen tokens (shape: batch) on the device.

        Greedy choice; EOS is banned for a request until it has ``min_new_tokens``. Inputs are built here, before
        the caller starts its clock; the returned generator works lazily, so a timer around ``next()`` measures
        exactly one step.
        """
        input_ids, mask = _left_pad(prompts, self._pad_id(), self.device)
        min_new = torch.tensor(list(min_new_tokens), device=self.device)
        eos = torch.tensor(self.eos_ids, device=self.device, dtype=torch.long)
        return self._steps(input_ids, mask, n_steps, min_new, eos)

    def _steps(self, input_ids: torch.Tensor, mask: torch.Tensor, n_steps: int, min_new: torch.Tensor,
               eos: torch.Tensor) -> Iterator[torch.Tensor]:
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        past = None
        with torch.inference_mode():
            for step in range(n_steps):
                out = self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions,
                                 past_key_values=past, use_cache=True, logits_to_keep=1)
                logits = out.logits[:, -1, :].float()
                if len(eos):
                    banned = (step < min_new)[:, None]
                    logits[:, eos] = logits[:, eos].masked_fill(banned, float("-inf"))
                tokens = logits.argmax(dim=-1)
                yield tokens
                past = out.past_key_values
                input_ids = tokens[:, None]
                mask = torch.cat([mask, mask.new_ones(mask.shape[0], 1)], dim=1)
                positions = positions[:, -1:] + 1

    def _pad_id(self) -> int:
        config = self.model.config.get_text_config()
        pad = getattr(config, "pad_token_id", None)
        return int(pad) if pad is not None else (self.eos_ids[0] if self.eos_ids else 0)

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def _check_lengths(model: InProcessModel, prompts: Sequence[Sequence[int]], max_new_tokens: int) -> None:
    if not prompts or any(len(p) == 0 for p in prompts):
        raise InputError("prompts", "need at least one prompt, each with at least one token")
    if max_new_tokens < 1:
        raise InputError("max_new_tokens", f"must be at least 1, got {max_new_tokens}")
    longest = max(len(p) for p in prompts) + max_new_tokens
    if longest > model.max_context:
        raise InputError("max_new_tokens", f"prompt plus output is {longest} tokens, over the model's context of "
                                           f"{model.max_context}")
    bad = [t for p in prompts for t in p if not 0 <= t < model.vocab_size]
    if bad:
        raise InputError("prompt", f"token id {bad[0]} is outside the vocabulary (0..{model.vocab_size - 1})")


def _left_pad(prompts: Sequence[Sequence[int]], pad_id: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Left padding keeps every request's last prompt token in the last column, where decoding continues."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt):] = torch.tensor(list(prompt), dtype=torch.long)
        mask[row, width - len(prompt):] = 1
    return ids.to(device), mask.to(device)


def make_prompt_ids(model: InProcessModel, n_tokens: int, seed: int) -> list[int]:
    """``n_tokens`` random ordinary token ids (no special tokens), the same for the same seed."""
    if n_tokens < 1:
        raise InputError("input_tokens", f"must be at least 1, got {n_tokens}")
    rng = random.Random(seed)
    low, high = model.regular_ids
    ids: list[int] = []
    while len(ids) < n_tokens:
        token = rng.randrange(low, high)
        if token not in model.special_ids:
            ids.append(token)
    return ids


# ---- loading ---------------------------------------------------------------------------------------------------


def load_model(name: str, *, dtype: str = "auto", device: str = "auto",
               trust_remote_code: bool = False) -> InProcessModel:
    """``random:<architecture>``, a local model directory, or a Hugging Face Hub id (cache first, then the Hub)."""
    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, torch_device)
    if name.startswith(RANDOM_PREFIX):
        loaded = _load_random(name, torch_dtype, torch_device)
    else:
        loaded = _load_pretrained(name, torch_dtype, torch_device, trust_remote_code)
    loaded.model.eval()
    loaded.info = _describe(loaded)
    return loaded


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except RuntimeError as error:
        raise InputError("device", f"{device!r} is not a device (use auto, cpu, cuda or cuda:N)") from error
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise InputError("device", "CUDA was asked for but torch sees no CUDA GPU here")
    if resolved.type not in ("cpu", "cuda"):
        raise InputError("device", f"{device!r} is not supported (use auto, cpu, cuda or cuda:N)")
    return resolved


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """``auto`` is bfloat16 on CUDA (what serving engines run) and float32 on CPU (fast matmuls there)."""
    if dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    key = DTYPE_ALIASES.get(dtype, dtype)
    if key not in DTYPES:
        raise InputError("dtype", f"{dtype!r} is not one of auto, {', '.join(DTYPES)}")
    return DTYPES[key]


def _load_random(name: str, dtype: torch.dtype, device: torch.device) -> InProcessModel:
    arch = name.removeprefix(RANDOM_PREFIX)
    if arch not in RANDOM_ARCHITECTURES:
        raise InputError("model", f"unknown random architecture {arch!r}; known: "
                                  + ", ".join(RANDOM_PREFIX + key for key in RANDOM_ARCHITECTURES))
    kwargs = dict(RANDOM_ARCHITECTURES[arch])
    regular_ids = kwargs.pop("regular_ids")
    config = AutoConfig.for_model(**kwargs)
    with no_init_weights(), torch.device(device):  # allocate on the device, skip the slow default init
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    if config.tie_word_embeddings:
        model.tie_weights()
    fill_synthetic_weights(model, seed=0)
    specials = {t for t in (config.pad_token_id, config.bos_token_id, config.eos_token_id) if t is not None}
    return InProcessModel(name=name, model=model, tokenizer=None, device=device, dtype=dtype,
                          regular_ids=regular_ids, special_ids=frozenset(specials),
                          eos_ids=_as_tuple(config.eos_token_id))


def fill_synthetic_weights(model: torch.nn.Module, seed: int) -> None:
    """Give every weight a value fast: matrices tiled from one N(0, 0.02) block, norms 1, biases 0.

    ``normal_`` over billions of parameters takes tens of seconds on a CPU; copying a block takes a fraction. The
    values only need to be finite and not denormal, because speed does not depend on them.
    """
    block = torch.randn(2 * _WEIGHT_BLOCK, generator=torch.Generator().manual_seed(seed)) * 0.02
    on_device: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}
    with torch.no_grad():
        for index, (name, param) in enumerate(model.named_parameters()):
            if param.dim() == 1:
                param.fill_(1.0 if "norm" in name else 0.0)
                continue
            key = (param.device, param.dtype)
            source = on_device.setdefault(key, block.to(device=param.device, dtype=param.dtype))
            offset = index * 7919 % _WEIGHT_BLOCK  # each matrix starts elsewhere in the block
            _tile_into(param.view(-1), source[offset: offset + _WEIGHT_BLOCK])


def _tile_into(flat: torch.Tensor, block: torch.Tensor) -> None:
    whole, rest = divmod(flat.numel(), block.numel())
    if whole:
        flat[: whole * block.numel()].view(whole, -1).copy_(block.expand(whole, -1))
    if rest:
        flat[whole * block.numel():].copy_(block[:rest])


def _load_pretrained(name: str, dtype: torch.dtype, device: torch.device, trust_remote_code: bool) -> InProcessModel:
    source = name if Path(name).is_dir() else _hub_source(name)
    kwargs = dict(dtype=dtype, trust_remote_code=trust_remote_code, local_files_only=source != "hub")
    try:
        model = AutoModelForCausalLM.from_pretrained(name, **kwargs).to(device)
    except (OSError, ValueError) as error:
        raise InputError("model", f"cannot load {name!r}: {str(error).splitlines()[0]}") from error
    tokenizer = _try_tokenizer(name, kwargs)
    config = model.config.get_text_config()
    specials = set(tokenizer.all_special_ids) if tokenizer is not None else set()
    specials |= {t for t in (config.pad_token_id, config.bos_token_id) if t is not None}
    eos_ids = _as_tuple(config.eos_token_id)
    vocab = int(config.vocab_size)
    return InProcessModel(name=name, model=model, tokenizer=tokenizer, device=device, dtype=dtype,
                          regular_ids=(0, min(vocab, len(tokenizer) if tokenizer is not None else vocab)),
                          special_ids=frozenset(specials | set(eos_ids)), eos_ids=eos_ids)


def _hub_source(name: str) -> str:
    """``cache`` when the Hub id is already downloaded, ``hub`` when the Hub answers; a clear error otherwise."""
    if name.count("/") != 1 or Path(name).exists():
        raise InputError("model", f"{name!r} is not random:<architecture>, a model directory, or a Hub id (org/name)")
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return "cache"
    if not hub_reachable():
        raise InputError("model", f"{name!r} is not in the local Hugging Face cache and the Hub is not reachable")
    return "hub"


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """A TCP connection to huggingface.co within ``timeout_s``; name lookup runs in a thread so it cannot hang us."""
    import os

    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    result: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection(("huggingface.co", 443), timeout=timeout_s).close()
            result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout_s)
    return bool(result and result[0])


def _try_tokenizer(name: str, kwargs: dict[str, Any]) -> Any | None:
    try:
        return AutoTokenizer.from_pretrained(name, trust_remote_code=kwargs["trust_remote_code"],
                                             local_files_only=kwargs["local_files_only"])
    except (OSError, ValueError):
        return None  # a model directory without tokenizer files still runs on token ids


def _as_tuple(value: int | Sequence[int] | None) -> tuple[int, ...]:
    if value is None:
        return ()
    return (int(value),) if isinstance(value, int) else tuple(int(v) for v in value)


def _describe(loaded: InProcessModel) -> dict[str, Any]:
    """The engine half of a run's fingerprint."""
    model = loaded.model
    params = {p.data_ptr(): p for p in model.parameters()}.values()  # tied weights counted once
    config = model.config.get_text_config()
    heads = int(config.num_attention_heads)
    return {
        "name": loaded.name,
        "engine": "transformers",
        "dtype": str(loaded.dtype).removeprefix("torch."),
        "device": str(loaded.device),
        "n_params": sum(p.numel() for p in params),
        "weight_bytes": sum(p.numel() * p.element_size() for p in params),
        "random_weights": loaded.name.startswith(RANDOM_PREFIX),
        "config": {
            "model_type": config.model_type,
            "n_layers": int(config.num_hidden_layers),
            "hidden_size": int(config.hidden_size),
            "intermediate_size": int(getattr(config, "intermediate_size", 0) or 0),
            "n_heads": heads,
            "n_kv_heads": int(getattr(config, "num_key_value_heads", None) or heads),
            "head_dim": int(getattr(config, "head_dim", None) or config.hidden_size // heads),
            "vocab_size": int(config.vocab_size),
            "max_position_embeddings": int(getattr(config, "max_position_embeddings", 0) or 0),
            "tie_word_embeddings": bool(getattr(config, "tie_word_embeddings", False)),
        },
        "attn_implementation": getattr(model.config, "_attn_implementation", None),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
    }
