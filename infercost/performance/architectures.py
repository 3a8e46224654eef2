"""Known decoder architectures as Hugging Face config fields, shared by the in-process engine (``random:<name>``
builds one with random weights) and by roofline estimates (which need its shape).

Numbers from each model's published ``config.json``. ``regular_ids`` is ours, not Hugging Face's: the ``[low, high)``
range of token ids that are ordinary text, so a random prompt never contains a special token. Names match loosely
(``meta-llama/Llama-3.3-70B-Instruct`` finds ``llama-3.1-70b``), so published tables and stored runs find their shape.
"""

from __future__ import annotations

import re
from typing import Any

_LLAMA3 = dict(model_type="llama", vocab_size=128256, head_dim=128, num_key_value_heads=8, rms_norm_eps=1e-5,
               max_position_embeddings=131072, rope_theta=500000.0, bos_token_id=128000, eos_token_id=128001,
               regular_ids=(0, 128000))  # fmt: skip
_LLAMA3_ROPE = {"rope_type": "llama3", "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192}  # fmt: skip
_QWEN2 = dict(model_type="qwen2", vocab_size=152064, max_position_embeddings=131072, rms_norm_eps=1e-6,
              rope_theta=1000000.0, use_sliding_window=False, tie_word_embeddings=False, bos_token_id=151643,
              eos_token_id=151643, regular_ids=(0, 151643))  # fmt: skip

ARCHITECTURES: dict[str, dict[str, Any]] = {
    "llama-3.2-1b": {**_LLAMA3, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
                     "num_attention_heads": 32, "head_dim": 64, "tie_word_embeddings": True,
                     "rope_scaling": {**_LLAMA3_ROPE, "factor": 32.0}},
    "llama-3.2-3b": {**_LLAMA3, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 28,
                     "num_attention_heads": 24, "tie_word_embeddings": True,
                     "rope_scaling": {**_LLAMA3_ROPE, "factor": 32.0}},
    "llama-3.1-8b": {**_LLAMA3, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
                     "num_attention_heads": 32, "tie_word_embeddings": False,
                     "rope_scaling": {**_LLAMA3_ROPE, "factor": 8.0}},
    "llama-3.1-70b": {**_LLAMA3, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
                      "num_attention_heads": 64, "tie_word_embeddings": False,
                      "rope_scaling": {**_LLAMA3_ROPE, "factor": 8.0}},
    "qwen2.5-7b": {**_QWEN2, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
                   "num_attention_heads": 28, "num_key_value_heads": 4},
    "qwen2.5-72b": {**_QWEN2, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80,
                    "num_attention_heads": 64, "num_key_value_heads": 8},
}  # fmt: skip
ALIASES = {"llama-3.3-70b": "llama-3.1-70b", "llama-3-8b": "llama-3.1-8b", "llama-3-70b": "llama-3.1-70b"}


def find_architecture(model_name: str) -> tuple[str, dict[str, Any]] | None:
    """The architecture a model name refers to, or None (then no roofline estimate can be made for it)."""
    name = re.sub(r"[\s_]+", "-", model_name.lower().removeprefix("random:"))
    name = name.replace("llama3", "llama-3").replace("qwen2-5", "qwen2.5")
    for key in sorted({*ARCHITECTURES, *ALIASES}, key=len, reverse=True):
        if key in name:
            canonical = ALIASES.get(key, key)
            return canonical, ARCHITECTURES[canonical]
    return None
