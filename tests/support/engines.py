"""Real inference engines for tests, each started as a subprocess on 127.0.0.1 and stopped afterwards.

    with infercost_server("random:tiny-llama") as base_url:      # http://127.0.0.1:PORT/v1
        ...
    with llama_cpp_server(tmp_path) as base_url:                 # llama.cpp's server over a tiny random GGUF
        ...

Forcing output length is the client's job. infercost's server takes ``ignore_eos`` / ``min_tokens``; llama.cpp's
does not, so a client bans the specials there with ``logit_bias`` (``TINY_GGUF_TEXT_ONLY``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 120.0

# The tiny GGUF's vocabulary: three specials, then single characters and whole words, never byte pieces (with byte
# pieces llama.cpp can count more completion tokens than max_tokens). Prompts should be ASCII.
TINY_GGUF_UNK_ID, TINY_GGUF_BOS_ID, TINY_GGUF_EOS_ID = 0, 1, 2
# A request body's part that makes every sampled token a text one: EOS ends the answer early, and an <unk> or <s>
# streams no text, so a client counting tokens from the streamed text comes up one short (4 of 150 five-token
# completions with EOS alone banned, none with all three).
TINY_GGUF_TEXT_ONLY = {"logit_bias": {str(i): -100 for i in (TINY_GGUF_UNK_ID, TINY_GGUF_BOS_ID, TINY_GGUF_EOS_ID)}}
_SPECIALS = ["<unk>", "<s>", "</s>"]
_CHARS = list("\u2581abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?;:'\"-()[]/")
_WORDS = [f"\u2581{a}{b}" for a in "abcdefghijklmnop" for b in "aeiouyrs"]  # 128 whole-word pieces
TINY_GGUF_DIMS = dict(n_embd=64, n_head=4, n_head_kv=2, n_ff=128, n_layer=2, n_ctx=2048)


def free_port() -> int:
    """A port nobody listens on now (for servers that cannot pick one themselves)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def infercost_server(model: str = "random:tiny-llama", *extra_args: str) -> Iterator[str]:
    """``python -m infercost serve`` on a port it picks; yields its base URL once ``/v1/models`` answers."""
    command = [sys.executable, "-m", "infercost", "serve", "--model", model, "--port", "0", *extra_args]
    with _running(command) as process:
        url = process.wait_for_line("listening on ").split("listening on ", 1)[1].strip()
        process.wait_until_ready(url)
        yield url


def write_tiny_gguf(path: Path | str, *, seed: int = 0) -> Path:
    """A llama-architecture GGUF with random float32 weights and a whole-piece vocabulary; about 1 MB, loads in
    milliseconds."""
    import gguf

    path = Path(path)
    dims = TINY_GGUF_DIMS
    tokens = _SPECIALS + _CHARS + _WORDS
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("infercost-tiny-random")
    writer.add_context_length(dims["n_ctx"])
    writer.add_embedding_length(dims["n_embd"])
    writer.add_block_count(dims["n_layer"])
    writer.add_feed_forward_length(dims["n_ff"])
    writer.add_head_count(dims["n_head"])
    writer.add_head_count_kv(dims["n_head_kv"])
    writer.add_rope_dimension_count(dims["n_embd"] // dims["n_head"])
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * 3 + [-float(i) for i in range(len(tokens) - 3)])
    writer.add_token_types([gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
                           + [gguf.TokenType.NORMAL] * (len(tokens) - 3))
    writer.add_unk_token_id(TINY_GGUF_UNK_ID)
    writer.add_bos_token_id(TINY_GGUF_BOS_ID)
    writer.add_eos_token_id(TINY_GGUF_EOS_ID)
    for name, array in _tiny_llama_tensors(len(tokens), seed).items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _tiny_llama_tensors(n_vocab: int, seed: int) -> dict[str, np.ndarray]:
    """llama.cpp's tensor names; numpy shapes are (out, in), which GGUF stores reversed as ggml expects."""
    rng = np.random.default_rng(seed)
    d = TINY_GGUF_DIMS
    n_embd, head_dim = d["n_embd"], d["n_embd"] // d["n_head"]

    def matrix(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * 0.02).astype(np.float32)

    tensors = {"token_embd.weight": matrix(n_vocab, n_embd), "output_norm.weight": np.ones(n_embd, np.float32),
               "output.weight": matrix(n_vocab, n_embd)}
    for layer in range(d["n_layer"]):
        block = f"blk.{layer}."
        tensors.update({
            block + "attn_norm.weight": np.ones(n_embd, np.float32),
            block + "attn_q.weight": matrix(d["n_head"] * head_dim, n_embd),
            block + "attn_k.weight": matrix(d["n_head_kv"] * head_dim, n_embd),
            block + "attn_v.weight": matrix(d["n_head_kv"] * head_dim, n_embd),
            block + "attn_output.weight": matrix(n_embd, d["n_head"] * head_dim),
            block + "ffn_norm.weight": np.ones(n_embd, np.float32),
            block + "ffn_gate.weight": matrix(d["n_ff"], n_embd),
            block + "ffn_up.weight": matrix(d["n_ff"], n_embd),
            block + "ffn_down.weight": matrix(n_embd, d["n_ff"]),
        })
    return tensors


@contextlib.contextmanager
def llama_cpp_server(tmp_path: Path | str, *extra_args: str) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) over a freshly written tiny GGUF; yields
    its base URL once ``/v1/models`` answers. Ban EOS per request with ``logit_bias`` to force output length."""
    model = write_tiny_gguf(Path(tmp_path) / "tiny-random-llama.gguf")
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", str(TINY_GGUF_DIMS["n_ctx"]), *extra_args]
    with _running(command) as process:
        url = f"http://127.0.0.1:{port}/v1"
        process.wait_until_ready(url)
        yield url


class _Process:
    """A subprocess whose stderr and stdout are read by a thread, so it never blocks on a full pipe and a failure
    to start can show what it said."""

    def __init__(self, command: list[str]) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        self.command = command
        self.popen = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self.new_line = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            with self.new_line:
                self.lines.append(line.rstrip("\n"))
                self.new_line.notify_all()
        with self.new_line:
            self.new_line.notify_all()

    def wait_for_line(self, marker: str) -> str:
        deadline = time.monotonic() + READY_TIMEOUT_S
        with self.new_line:
            while True:
                found = [line for line in self.lines if marker in line]
                if found:
                    return found[0]
                self._fail_if_gone(deadline)
                self.new_line.wait(timeout=0.5)

    def wait_until_ready(self, base_url: str) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            self._fail_if_gone(deadline)
            time.sleep(0.2)

    def _fail_if_gone(self, deadline: float) -> None:
        if self.popen.poll() is not None or time.monotonic() > deadline:
            what = "exited" if self.popen.poll() is not None else "did not become ready"
            tail = "\n".join(self.lines[-20:])
            raise RuntimeError(f"{' '.join(self.command[:4])} ... {what}:\n{tail}")

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


@contextlib.contextmanager
def _running(command: list[str]) -> Iterator[_Process]:
    process = _Process(command)
    try:
        yield process
    finally:
        process.stop()
