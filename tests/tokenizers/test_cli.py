"""The ``tokenizers`` and ``tokens`` commands: JSON per DESIGN.md, bad input as one line and exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from infercost.cli import main
from infercost.tokenizers import count_tokens, offline_ids

STATS_KEYS = {"tokenizer", "tokens", "chars", "bytes", "records", "tokens_total", "mean", "p50", "p90", "p95", "p99",
              "max", "skipped_count", "skipped"}


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_tokenizers_lists_the_six(capsys):
    listed = run_json(capsys, "tokenizers")
    assert {row["id"] for row in listed} == {"o200k_base", "cl100k_base", "qwen2.5", "llama3", "deepseek",
                                             "mistral-tekken"}
    assert {"id", "family", "fidelity", "source", "available"} <= set(listed[0])


@pytest.mark.parametrize("tokenizer_id", offline_ids())
def test_tokens_counts_the_exact_file(capsys, tmp_path, tokenizer_id):
    text = "  Ünïcode 👩🏽\u200d💻 <|endoftext|>\r\n\n"
    path = tmp_path / "prompt.txt"
    path.write_bytes(text.encode("utf-8"))
    payload = run_json(capsys, "tokens", "--tokenizer", tokenizer_id, str(path))
    assert payload == {"tokenizer": tokenizer_id, "tokens": count_tokens(tokenizer_id, text), "chars": len(text),
                       "bytes": len(text.encode("utf-8"))}


def test_tokens_with_field_reports_the_distribution_and_skips(capsys, tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"prompt": "one two three"}\n{"prompt": "four"}\nbroken\n')
    payload = run_json(capsys, "tokens", "--tokenizer", "llama3", "--field", "prompt", str(path))
    assert set(payload) == STATS_KEYS
    assert (payload["records"], payload["skipped_count"], payload["skipped"][0]["line"]) == (2, 1, 3)
    assert payload["tokens_total"] == payload["tokens"] == count_tokens("llama3", "one two three") + 1


@pytest.mark.parametrize("content, field, message", [
    (b"\xff\xfe\x00a\x00", None, "binary"),
    (b"ok\n\xff\n", None, "not valid UTF-8 on line 2"),
    (b'{"a": "x"}\n', "prompt", "field: "),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, content, field, message):
    path = tmp_path / "in.jsonl"
    path.write_bytes(content)
    argv = ["tokens", "--tokenizer", "o200k_base", str(path)] + (["--field", field] if field else [])
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and message in err[-1] and "Traceback" not in "".join(err)


def test_stdin_through_the_real_entry_point():
    text = "你好，世界 — hello"
    done = subprocess.run([sys.executable, "-m", "infercost", "tokens", "--tokenizer", "qwen2.5", "-", "--json"],
                          input=text.encode("utf-8"), capture_output=True, check=True)
    assert json.loads(done.stdout)["tokens"] == count_tokens("qwen2.5", text)
