"""A benchmark whose server does not process the token shape asked for says so, in the run's summary and on the
Benchmark page: a server whose tokenizer reads one token per character counts a 128-word prompt as about six
hundred tokens. The project's own server on a random model counts as its family's tokenizer does, and honours it."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from infercost.commands.bench import render
from infercost.runner.backends import BackendOptions
from infercost.runner.sweep import SweepConfig, run_summary, run_sweep
from tests.support.engines import infercost_server

PAGE = str(Path(__file__).resolve().parents[2] / "infercost/ui/pages/benchmark.py")


@pytest.fixture(scope="module")
def per_character(tmp_path_factory):
    """``serve`` over a model directory whose tokenizer has no merges: a prompt is one token per character."""
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    from infercost.runner.inprocess import load_model

    path = tmp_path_factory.mktemp("per-character")
    tokens = ["[UNK]", "[BOS]", "[EOS]", *string.printable]
    tokens += [f"w{i}" for i in range(4096 - len(tokens))]  # every id the random model writes has text
    vocabulary = {token: i for i, token in enumerate(tokens)}
    core = Tokenizer(models.BPE(vocabulary, merges=[], unk_token="[UNK]"))
    PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", bos_token="[BOS]",
                            eos_token="[EOS]").save_pretrained(path)  # fmt: skip
    load_model("random:tiny-llama", device="cpu").model.save_pretrained(path)
    with infercost_server(str(path), "--max-batch", "2", "--served-model-name", "per-character") as base_url:
        yield base_url


@pytest.fixture(scope="module")
def served():
    with infercost_server("random:tiny-llama", "--max-batch", "2") as base_url:
        yield base_url


def sweep(url: str, model: str = "random:tiny-llama", **shape: int) -> str:
    config = SweepConfig(backend="openai", options=BackendOptions(model=model, base_url=url),
                         levels=[1], requests=2, warmup=0, **shape)  # fmt: skip
    return run_sweep(config)


def test_a_prompt_the_server_counts_otherwise_is_flagged_in_the_summary_and_on_the_page(per_character):
    run_id = sweep(per_character, "per-character", input_tokens=128, output_tokens=4)
    summary = run_summary(None, run_id)
    counted = summary["levels"][0]["total_input_tokens"] / summary["levels"][0]["completed"]
    assert counted > 1.2 * 128  # the server's own count: the premise of the check
    assert any("asked for 128 input tokens" in warning for warning in summary["warnings"]), summary["warnings"]
    assert "warning: asked for 128 input tokens" in render(summary)
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    assert any(run_id in w.value and "asked for 128 input tokens" in w.value for w in at.warning), at.warning


def test_a_shape_the_server_honours_is_not_flagged(served):
    # Regression: the project's own server read one token per byte, so the README's tour (128 tokens asked) was
    # flagged as measuring about 650
    run_id = sweep(served, input_tokens=128, output_tokens=4)
    honoured = run_summary(None, run_id)["levels"][0]
    assert abs(honoured["total_input_tokens"] / honoured["completed"] - 128) < 0.1 * 128
    assert not [w for w in run_summary(None, run_id)["warnings"] if "asked for" in w], honoured
