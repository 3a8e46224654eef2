"""Known decoder architectures as Hugging Face config fields: what roofline estimates need to know of a model.

Numbers from each model's published ``config.json``. Names match loosely (``meta-llama/Llama-3.3-70B-Instruct``
finds ``llama-3.3-70b``), so published tables and stored runs find their shape.
"""

from __future__ import annotations

import re
from typing import Any

ARCHITECTURES: dict[str, dict[str, Any]] = {
    "llama-3.2-1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                         num_key_value_heads=8, head_dim=64, vocab_size=128256, tie_word_embeddings=True),
    "llama-3.2-3b": dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=28, num_attention_heads=24,
                         num_key_value_heads=8, head_dim=128, vocab_size=128256, tie_word_embeddings=True),
    "llama-3.1-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                         num_key_value_heads=8, head_dim=128, vocab_size=128256, tie_word_embeddings=False),
    "llama-3.1-70b": dict(hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64,
                          num_key_value_heads=8, head_dim=128, vocab_size=128256, tie_word_embeddings=False),
    "qwen2.5-7b": dict(model_type="qwen2", hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                       num_attention_heads=28, num_key_value_heads=4, vocab_size=152064, tie_word_embeddings=False),
    "qwen2.5-72b": dict(model_type="qwen2", hidden_size=8192, intermediate_size=29568, num_hidden_layers=80,
                        num_attention_heads=64, num_key_value_heads=8, vocab_size=152064, tie_word_embeddings=False),
    "mistral-7b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                       num_key_value_heads=8, head_dim=128, vocab_size=32768, tie_word_embeddings=False),
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
