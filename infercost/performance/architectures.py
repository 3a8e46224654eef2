"""The bundled architectures as transformers config kwargs, for the code that builds or shapes a model by name: the
in-process engine (``random:<name>`` builds one with random weights) and roofline estimates.

Every entry is a bundled ``config.json`` (``data/configs``, read by ``infercost.performance.models``), so there is
no table to keep up to date here. ``ARCHITECTURES`` holds the dense decoders, the ones the engine model simulates and
``random:`` builds; ``find_architecture`` finds any bundled model. ``regular_ids`` is ours, not Hugging Face's: the
``[low, high)`` range of ordinary text token ids (``architecture.regular_token_ids``), so a random prompt never holds a
special token. Names match loosely (``meta-llama/Llama-3.3-70B-Instruct`` finds ``llama-3.1-70b``).
"""

from __future__ import annotations

from typing import Any

from infercost.performance.architecture import regular_token_ids, text_config
from infercost.performance.models import bundled_models, find_bundled


def _kwargs(name: str) -> dict[str, Any]:
    model = bundled_models()[name]
    return {**text_config(model.config()), "regular_ids": regular_token_ids(model.config())}


ARCHITECTURES: dict[str, dict[str, Any]] = {
    name: _kwargs(name) for name, model in bundled_models().items() if model.architecture().kind == "dense"
}


def find_architecture(model_name: str) -> tuple[str, dict[str, Any]] | None:
    """The bundled architecture a model name refers to, as (name, config kwargs), or None (then no roofline
    estimate can be made for it)."""
    found = find_bundled(model_name)
    if found is None:
        return None
    return found.name, ARCHITECTURES.get(found.name) or _kwargs(found.name)
