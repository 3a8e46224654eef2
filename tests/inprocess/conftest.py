"""Tiny random models and a running ``infercost serve``, shared by the tests of a module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from infercost.runner.inprocess import InProcessModel, load_model
from tests.support.engines import infercost_server


@pytest.fixture(scope="module")
def tiny_llama() -> InProcessModel:
    return load_model("random:tiny-llama", device="cpu")


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with infercost_server("random:tiny-llama", "--max-batch", "4") as base_url:
        yield base_url
