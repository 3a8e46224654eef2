"""``tokens --executor ray`` against the local path on the same multi-file corpus: the same bytes on stdout, the same
one-line errors. Ray runs as one local instance for the module (2 CPUs, no dashboard), as in tests/batch/test_ray.py.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from infercost.cli import main
from infercost.errors import InputError
from infercost.tokenizers import corpus_stats, get_tokenizer, offline_ids
from infercost.tokenizers.corpus_ray import PACKAGE, corpus_stats_on_ray
from tests.tokenizers.tokenizer_references import TEXTS

ray = pytest.importorskip("ray")  # pinned in requirements-dev.txt; optional at run time
ROOT = Path(__file__).resolve().parents[2]
# Chinese, Hindi, code, emoji, CRLF, whitespace runs ... and the empty string, in every format
TEXTS_USED = list(TEXTS.values())


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"py_modules": [str(PACKAGE)]})
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def write_corpus(root: Path) -> list[str]:
    """Seven files in three formats and two folders, bad records among them, plus files a directory leaves out;
    returns the texts a reader should count, in sorted-path order."""
    texts = TEXTS_USED
    counted: dict[str, list[str]] = {}
    (root / "logs" / "2026-11").mkdir(parents=True)
    for i in range(3):  # JSONL: the field, a malformed line, a missing field, a number
        lines = [json.dumps({"prompt": t}, ensure_ascii=(i % 2 == 0)) for t in texts[i::3]]
        lines += ["{broken", json.dumps({"other": "x"}), json.dumps({"prompt": 7})]
        path = root / "logs" / f"part-{i}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        counted[str(path)] = [t for t in texts[i::3] if t]  # an empty text is no record, in any format
    for i in range(2):  # CSV: quoted multi-line code, emoji; an empty value is not a record
        path = root / "logs" / "2026-11" / f"day-{i}.csv"
        with path.open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows([["id", "prompt"], *enumerate(texts[i::2])])
        counted[str(path)] = [t for t in texts[i::2] if t]
    for i in range(2):  # Parquet: several row groups, a null
        path = root / "logs" / f"shard-{i}.parquet"
        values = [*texts[i::2], None]
        pq.write_table(pa.table({"id": range(len(values)), "prompt": values}), path, row_group_size=5)
        counted[str(path)] = [t for t in texts[i::2] if t]
    (root / "logs" / "_SUCCESS").write_text("")
    (root / "logs" / ".part-0.jsonl.crc").write_bytes(b"\x00\x01")
    (root / "logs" / "notes.md").write_text("# not a record file when a field is given\n")
    return [text for path in sorted(counted) for text in counted[path]]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    return root / "logs", write_corpus(root)


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["tokens", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
@pytest.mark.parametrize("tokenizer_id", ["o200k_base", "qwen2.5", "deepseek", "mistral-tekken"])
def test_ray_prints_what_local_prints_byte_for_byte(capsys, local_ray, corpus, tokenizer_id):
    directory, texts = corpus
    for extra in (["--json"], []):  # the JSON document and the human rendering
        argv = ["--tokenizer", tokenizer_id, "--field", "prompt", str(directory), *extra]
        local, on_ray = cli(capsys, *argv), cli(capsys, *argv, "--executor", "ray")
        assert local[0] == on_ray[0] == 0
        assert on_ray[1] == local[1]
        assert on_ray[2] == local[2]  # the skipped records listed on stderr too
    payload = json.loads(cli(capsys, *argv, "--json", "--executor", "ray")[1])
    tokenizer = get_tokenizer(tokenizer_id)
    assert payload["records"] == len(texts) and payload["skipped_count"] == 3 * 3 + 2  # 3 bad per JSONL, 2 nulls
    assert payload["tokens_total"] == sum(tokenizer.count(t) for t in texts)
    assert payload["p95"] == np.percentile([tokenizer.count(t) for t in texts], 95)


@pytest.mark.slow
def test_every_tokenizer_counts_every_record_alike_on_ray(local_ray, corpus):
    directory, texts = corpus
    glob = str(directory / "**" / "*[ltv]")  # .jsonl, .parquet, .csv; not notes.md nor _SUCCESS
    local = corpus_stats(glob, field="prompt", tokenizer_ids=offline_ids())
    on_ray = corpus_stats_on_ray(glob, field="prompt", tokenizer_ids=offline_ids())
    assert on_ray.to_dict() == local.to_dict() and on_ray.fmt == "csv+jsonl+parquet"
    for tid in offline_ids():  # every record's count, in the same order as one file after another
        expected = [get_tokenizer(tid).count(t) for t in texts]
        assert on_ray.stats[tid].counts.tolist() == local.stats[tid].counts.tolist() == expected


def bad_corpus(root: Path, case: str) -> str:
    """A corpus that one thing spoils; returns the path argument."""
    good = root / "a.jsonl"
    good.write_text('{"prompt": "fine"}\n', encoding="utf-8")
    if case == "glob matches nothing":
        return str(root / "*.parquet")
    if case == "empty file":
        (root / "b.jsonl").write_bytes(b"")
    elif case == "parquet wrong schema":
        pq.write_table(pa.table({"text": ["x"]}), root / "b.parquet")
    elif case == "parquet column not text":
        pq.write_table(pa.table({"prompt": [1, 2]}), root / "b.parquet")
    elif case in ("field missing everywhere", "field not a string everywhere"):
        value = '{"other": "x"}' if case == "field missing everywhere" else '{"prompt": 3}'
        good.write_text(f"{value}\n", encoding="utf-8")
    elif case == "no such directory":
        return str(root / "missing")
    return str(root)


BAD = {
    "glob matches nothing": ("file: ", "*.parquet: no file matches"),
    "empty file": ("file: ", "b.jsonl: file is empty"),
    "parquet wrong schema": ("field: ", "b.parquet: no column 'prompt' (columns: text)"),
    "parquet column not text": ("field: ", "b.parquet: column 'prompt' is int64, not text"),
    "field missing everywhere": ("field: ", "no usable records; 1 skipped, first in "),
    "field not a string everywhere": ("file: ", "field 'prompt' is int, not text"),
    "no such directory": ("file: ", "missing: no such file"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BAD))
def test_bad_corpus_is_the_same_one_line_error_on_both_executors(capsys, tmp_path, local_ray, case):
    path = bad_corpus(tmp_path, case)
    argv = ["--tokenizer", "o200k_base", "--field", "prompt", path, "--json"]
    local, on_ray = cli(capsys, *argv), cli(capsys, *argv, "--executor", "ray")
    assert local[0] == on_ray[0] == 2 and local[1] == on_ray[1] == ""
    error = local[2].strip().splitlines()[-1]
    assert on_ray[2].strip().splitlines()[-1] == error
    prefix, reason = BAD[case]
    assert error.startswith("error: " + prefix) and reason in error and "Traceback" not in on_ray[2]


@pytest.mark.slow
def test_address_reaches_a_running_ray_head(capsys, local_ray, corpus):
    """A second process joins the module's Ray instance by its address, as a person joins a team's cluster."""
    directory, _ = corpus
    argv = ["--tokenizer", "llama3", "--field", "prompt", str(directory), "--json"]
    code, expected, _ = cli(capsys, *argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "infercost", "tokens", *argv, "--executor", "ray",
                           "--address", local_ray], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert (done.returncode, code) == (0, 0), done.stderr[-2000:]
    assert done.stdout == expected


@pytest.mark.parametrize("argv, message", [
    (["--field", "prompt", "-", "--executor", "ray"], "error: file: --executor ray counts files, not stdin"),
    (["x.txt", "--executor", "ray"], "error: executor: --executor ray counts records"),
    (["--field", "prompt", "x.jsonl", "--address", "auto"], "error: address: only with --executor ray"),
])
def test_ray_options_out_of_place_are_one_line(capsys, argv, message):
    code, out, err = cli(capsys, "--tokenizer", "o200k_base", *argv)
    assert (code, out) == (2, "") and err.strip().startswith(message)


def test_an_address_where_no_head_listens_is_one_line_at_once(capsys, tmp_path):
    (tmp_path / "a.jsonl").write_text('{"prompt": "x"}\n')
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, out, err = cli(capsys, "--tokenizer", "o200k_base", "--field", "prompt", str(tmp_path), "--executor", "ray",
                         "--address", f"127.0.0.1:{port}")
    assert (code, out) == (2, "") and err.strip() == f"error: address: 127.0.0.1:{port}: no Ray head answers there " \
                                                     "(Connection refused)"


def test_without_ray_installed_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    (tmp_path / "a.jsonl").write_text('{"prompt": "x"}\n')
    monkeypatch.setitem(sys.modules, "ray", None)  # what ``import ray`` meets where the package is absent
    with pytest.raises(InputError, match=r"^executor: Ray is not installed: pip install ray==2\.60\.0$"):
        corpus_stats_on_ray(tmp_path, field="prompt", tokenizer_ids=["o200k_base"])


@pytest.mark.slow
def test_parts_are_merged_in_file_order_whichever_finishes_first(tmp_path, local_ray):
    """The first file is far the biggest, so the small ones come back from Ray before it does."""
    (tmp_path / "a.jsonl").write_text("".join(f'{{"prompt": "record {i} {"x" * (i % 50)}"}}\n'
                                              for i in range(20_000)))
    for name in "bcdef":
        (tmp_path / f"{name}.jsonl").write_text(f'{{"prompt": "{name * 3}"}}\n{{"nothing": 1}}\n')
    local = corpus_stats(tmp_path, field="prompt", tokenizer_ids=["o200k_base"])
    seen = []
    on_ray = corpus_stats_on_ray(tmp_path, field="prompt", tokenizer_ids=["o200k_base"], progress=seen.append)
    assert len(seen) == 7 and seen == sorted(seen) and seen[-1] == 1.0  # a step per file, then done
    assert on_ray.stats["o200k_base"].counts.tolist() == local.stats["o200k_base"].counts.tolist()
    assert [s.file for s in on_ray.skipped] == [s.file for s in local.skipped] == sorted(s.file for s in local.skipped)
