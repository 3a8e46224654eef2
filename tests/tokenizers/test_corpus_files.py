"""A directory or glob of record files, counted locally: which files, in what order, and one merge for all."""

from __future__ import annotations

import json

import pytest

from infercost.errors import InputError
from infercost.tokenizers import corpus_stats
from infercost.tokenizers.corpus import corpus_files

TEXTS = ["你好，世界", "नमस्ते दुनिया", "def f(x):\n    return x", "🚀👩🏽\u200d💻", "plain words", "x" * 300]


def jsonl(path, texts):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"prompt": t}, ensure_ascii=False) + "\n" for t in texts), encoding="utf-8")
    return path


def test_a_directory_is_its_record_files_recursively_in_sorted_order(tmp_path):
    for name in ("b/2.jsonl", "a.csv", "b/1.parquet", "c.txt", "_SUCCESS", ".x.jsonl", "_tmp/d.jsonl", "e.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    with_field = corpus_files(tmp_path, fmt=None, field="prompt")
    assert [(f.path, f.fmt) for f in with_field] == [
        (str(tmp_path / "a.csv"), "csv"), (str(tmp_path / "b/1.parquet"), "parquet"),
        (str(tmp_path / "b/2.jsonl"), "jsonl")]
    assert [f.fmt for f in corpus_files(tmp_path, fmt=None, field=None)] == ["txt", "txt"]  # c.txt, e.md


@pytest.mark.parametrize("pattern, message", [
    ("*.parquet", "*.parquet: no file matches"),
    ("", "no record files in this directory"),
])
def test_nothing_to_count_is_one_error_naming_the_path(tmp_path, pattern, message):
    jsonl(tmp_path / "a.jsonl", ["x"]).rename(tmp_path / "a.log")
    with pytest.raises(InputError, match="^file: ") as error:
        corpus_files(tmp_path / pattern if pattern else tmp_path, fmt=None, field="prompt")
    assert message in str(error.value)


def test_split_over_files_the_statistics_are_those_of_one_file(tmp_path):
    whole = corpus_stats(jsonl(tmp_path / "one" / "all.jsonl", TEXTS * 5), field="prompt",
                         tokenizer_ids=["o200k_base", "llama3"])
    for i in range(3):
        jsonl(tmp_path / "split" / f"part-{i}.jsonl", (TEXTS * 5)[i * 10:(i + 1) * 10])
    split = corpus_stats(tmp_path / "split", field="prompt", tokenizer_ids=["o200k_base", "llama3"])
    assert split.to_dict()["tokenizers"] == whole.to_dict()["tokenizers"]
    assert (split.records, split.chars, split.bytes) == (whole.records, whole.chars, whole.bytes)


def test_progress_runs_over_the_whole_corpus_once(tmp_path):
    for i in range(3):
        jsonl(tmp_path / f"{i}.jsonl", TEXTS)
    seen = []
    corpus_stats(str(tmp_path / "*.jsonl"), field="prompt", tokenizer_ids=["o200k_base"], progress=seen.append)
    assert len(seen) >= 4 and seen == sorted(seen) and seen[-1] == 1.0 and seen[0] < 0.5


def test_an_empty_text_is_no_record_in_any_format(tmp_path):
    """One directory may mix formats, so the same texts must make the same records in each (Parquet counted an
    empty string as a record of 0 tokens where JSONL and CSV leave it out)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = ["", "one", "", "two words"]
    jsonl(tmp_path / "a.jsonl", texts)
    pq.write_table(pa.table({"prompt": texts}), tmp_path / "b.parquet")
    counted = [corpus_stats(tmp_path / name, field="prompt", tokenizer_ids=["o200k_base"])
               for name in ("a.jsonl", "b.parquet")]
    assert [stats.records for stats in counted] == [2, 2]
    assert [stats.skipped_count for stats in counted] == [0, 0]
