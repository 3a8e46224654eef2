"""A model directory with its own tokenizer: text prompts are encoded with it and outputs decoded incrementally."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from infercost.runner.inprocess import load_model
from infercost.runner.server import Server

# One word per id of random:tiny-llama's 4096-token vocabulary, so whatever the model generates has text.
WORDS = ["[UNK]", "[BOS]", "[EOS]", "hello", "world", "héllo"] + [f"w{i}" for i in range(4090)]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory, tiny_llama) -> Path:
    path = tmp_path_factory.mktemp("tiny-with-tokenizer")
    core = Tokenizer(models.WordLevel({word: i for i, word in enumerate(WORDS)}, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", bos_token="[BOS]",
                                        eos_token="[EOS]")
    tokenizer.save_pretrained(path)
    tiny_llama.model.save_pretrained(path)
    return path


def _ask(model_dir: Path, path: str, body: dict) -> dict:
    async def run() -> dict:
        server = Server(load_model(str(model_dir), device="cpu"), served_name="tiny")
        async with TestClient(TestServer(server.app())) as client:
            reply = await client.post(path, json=body)
            return await reply.json()

    return asyncio.run(run())


def test_text_prompt_is_counted_with_the_tokenizer(model_dir):
    reply = _ask(model_dir, "/v1/completions", {"prompt": "hello world w5", "max_tokens": 6, "ignore_eos": True})
    assert reply["usage"]["prompt_tokens"] == 3
    assert reply["usage"]["completion_tokens"] == 6


def test_random_prompts_avoid_the_tokenizers_special_tokens(model_dir):
    from infercost.runner.inprocess import make_prompt_ids

    model = load_model(str(model_dir), device="cpu")
    ids = make_prompt_ids(model, 500, seed=1)
    assert not {0, 1, 2} & set(ids)


def test_incremental_text_equals_decoding_everything(model_dir):
    model = load_model(str(model_dir), device="cpu")
    prompt = [3, 4, 5]
    generated = list(model.stream(prompt, 12, 12))
    server = Server(model, served_name="tiny")
    piece = server.codec.detokenizer(prompt)
    streamed = "".join(piece(token) for token in generated)
    whole = model.tokenizer.decode(prompt + generated, skip_special_tokens=True)
    assert len(streamed.split()) == 12
    assert whole.endswith(streamed) and streamed.strip() == model.tokenizer.decode(
        generated, skip_special_tokens=True)
