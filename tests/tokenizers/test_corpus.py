"""Corpus statistics on generated files in every format, and bad input named by file, line and reason."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from infercost.errors import InputError
from infercost.tokenizers import corpus, corpus_fields, corpus_stats, count_text_file, get_tokenizer
from tests.tokenizers.tokenizer_references import TEXTS

TOKENIZERS = ["o200k_base", "qwen2.5", "deepseek"]
# Multi-line records do not fit TXT's one-per-line; a record ending in a space must survive untouched.
RECORDS = [text for text in TEXTS.values() if text] + ["trailing space ", "  leading", "x"]
LINE_RECORDS = [text for text in RECORDS if "\n" not in text and "\r" not in text and text.strip()]


def write(path, fmt, records):
    if fmt == "txt":
        path.write_text("".join(r + "\n" for r in records), encoding="utf-8")
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps({"id": i, "prompt": r}, ensure_ascii=i % 2 == 0) + "\n"
                                for i, r in enumerate(records)), encoding="utf-8")
    elif fmt == "csv":
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "prompt"])
            writer.writerows(enumerate(records))
    else:
        pq.write_table(pa.table({"id": range(len(records)), "prompt": records}), path, row_group_size=7)
    return path


@pytest.mark.parametrize("fmt", ["txt", "jsonl", "csv", "parquet"])
def test_every_format_counts_every_record(tmp_path, fmt):
    records = LINE_RECORDS if fmt == "txt" else RECORDS
    path = write(tmp_path / f"corpus.{fmt}", fmt, records)
    stats = corpus_stats(path, field=None if fmt == "txt" else "prompt", tokenizer_ids=TOKENIZERS)
    assert (stats.records, stats.skipped_count, stats.chars) == (len(records), 0, sum(map(len, records)))
    for tid in TOKENIZERS:
        expected = np.array([get_tokenizer(tid).count(r) for r in records])
        assert stats.stats[tid].counts.tolist() == expected.tolist()
        summary = stats.stats[tid].summary()
        assert summary["p95"] == pytest.approx(np.percentile(expected, 95))
        assert (summary["tokens_total"], summary["max"]) == (expected.sum(), expected.max())
        assert sum(summary["histogram"]["counts"]) == len(records)


def test_progress_reaches_one_and_never_goes_back(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus, "BATCH_RECORDS", 3)
    seen = []
    corpus_stats(write(tmp_path / "c.jsonl", "jsonl", RECORDS), field="prompt", tokenizer_ids=["llama3"],
                 progress=seen.append)
    assert len(seen) > 3 and seen == sorted(seen) and seen[-1] == 1.0


def test_uploaded_file_object_works(tmp_path):
    data = write(tmp_path / "c.csv", "csv", RECORDS).read_bytes()
    upload = io.BytesIO(data)
    upload.name = "upload.csv"
    assert corpus_stats(upload, field="prompt", tokenizer_ids=["llama3"]).records == len(RECORDS)


def test_bad_records_are_skipped_with_line_and_reason(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b'{"prompt": "good one"}\n{"prompt": 3}\n{oops\n{"prompt": "bad \xff byte"}\n'
                     b'\n["not", "an", "object"]\n{"other": "x"}\n{"prompt": "lone \\ud800"}\n{"prompt": "good two"}\n')
    stats = corpus_stats(path, field="prompt", tokenizer_ids=["o200k_base", "deepseek"])
    assert stats.records == 2
    reasons = {s.line: s.reason for s in stats.skipped}
    assert sorted(reasons) == [2, 3, 4, 6, 7, 8]
    assert "int, not text" in reasons[2] and "malformed JSON" in reasons[3] and "UTF-8" in reasons[4]
    assert "not a JSON object" in reasons[6] and "no field 'prompt'" in reasons[7] and "UTF-8" in reasons[8]
    assert {s.file for s in stats.skipped} == {str(path)}


def test_nul_byte_after_the_first_8k_skips_that_line(tmp_path):
    """Like git, a NUL in the first 8 KiB means a binary file; later, it only spoils its own record."""
    path = tmp_path / "late.txt"
    path.write_bytes(b"fine line\n" * 1000 + b"bad \x00 line\nlast\n")
    stats = corpus_stats(path, field=None, tokenizer_ids=["llama3"])
    assert stats.records == 1001 and [(s.line, "NUL" in s.reason) for s in stats.skipped] == [(1001, True)]


def test_huge_record_is_skipped_without_holding_it(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus, "MAX_RECORD_BYTES", 1000)
    path = tmp_path / "huge.txt"
    path.write_text("short\n" + "x" * 5000 + "\nafter\n")
    stats = corpus_stats(path, field=None, tokenizer_ids=["llama3"])
    assert stats.records == 2
    assert stats.skipped[0].line == 2 and "over the" in stats.skipped[0].reason


@pytest.mark.parametrize("content, match", [
    (b"", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    (b"{oops\n[1]\n", "no usable records"),
])
def test_unusable_input_is_one_error(tmp_path, content, match):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=match):
        corpus_stats(path, field="prompt", tokenizer_ids=["o200k_base"])


@pytest.mark.parametrize(("content", "reason"), [
    (b'{"prompt": "hi"\n{"prompt": \n', "line 1: malformed JSON"),
    (b'{"prompt": "' + b"x" * 5000 + b'"}\n', "line 1: record of"),
])
def test_fields_of_a_jsonl_with_no_readable_record_say_why(tmp_path, monkeypatch, content, reason):
    # Regression: the Tokens page offered no field and then said "JSONL records need a field naming the text" for a
    # file whose records were all malformed, or whose one record was over the size limit.
    monkeypatch.setattr(corpus, "MAX_RECORD_BYTES", 1000)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=f"no usable records; .*{reason}"):
        corpus_fields(path)


def test_field_missing_everywhere_names_the_field(tmp_path):
    path = write(tmp_path / "c.jsonl", "jsonl", ["a", "b"])
    with pytest.raises(InputError) as error:
        corpus_stats(path, field="text", tokenizer_ids=["o200k_base"])
    assert error.value.field == "field" and "no field 'text'" in error.value.reason


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_missing_column_lists_the_columns(tmp_path, fmt):
    path = write(tmp_path / f"c.{fmt}", fmt, ["a"])
    with pytest.raises(InputError, match=r"no column 'text' \(columns: id, prompt\)"):
        corpus_stats(path, field="text", tokenizer_ids=["o200k_base"])


def test_parquet_number_column_is_not_text(tmp_path):
    path = write(tmp_path / "c.parquet", "parquet", ["a"])
    with pytest.raises(InputError, match="not text"):
        corpus_stats(path, field="id", tokenizer_ids=["o200k_base"])


def test_csv_bad_bytes_skip_only_that_row(tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes(b'id,prompt\n1,fine\n2,"bad \xc3\x28"\n3,"multi\nline"\n')
    stats = corpus_stats(path, field="prompt", tokenizer_ids=["o200k_base"])
    assert stats.records == 2 and [(s.line, s.reason) for s in stats.skipped] == [(3, "not valid UTF-8")]


def test_unknown_extension_asks_for_a_format(tmp_path):
    path = tmp_path / "c.dat"
    path.write_text("x\n")
    with pytest.raises(InputError, match="format"):
        corpus_stats(path, field=None, tokenizer_ids=["o200k_base"])
    assert corpus_stats(path, field=None, tokenizer_ids=["o200k_base"], fmt="txt").records == 1


@pytest.mark.parametrize("fmt, expected", [("jsonl", ["prompt"]), ("csv", ["id", "prompt"]), ("parquet", ["prompt"])])
def test_fields_offered_to_choose_from(tmp_path, fmt, expected):
    assert corpus_fields(write(tmp_path / f"c.{fmt}", fmt, ["a"])) == expected


def test_whole_file_is_one_exact_text(tmp_path):
    text = "\ufeffline one\r\n  two  \n\n"
    path = tmp_path / "t.txt"
    path.write_bytes(text.encode("utf-8"))
    count = count_text_file(path, "o200k_base")
    assert (count.tokens, count.chars, count.bytes) == (get_tokenizer("o200k_base").count(text), len(text),
                                                        len(text.encode("utf-8")))


@pytest.mark.parametrize("content, match", [(b"ok\nbad \xff\n", "line 2"), (b"a\x00b", "binary")])
def test_whole_file_bad_input(tmp_path, content, match):
    path = tmp_path / "t.txt"
    path.write_bytes(content)
    with pytest.raises(InputError, match=match):
        count_text_file(path, "o200k_base")


def test_abandoning_the_reader_midway_does_not_hang():
    batches = (corpus.Batch([i], [str(i)], None) for i in range(1000))
    stream = corpus.prefetch(batches, depth=1)
    assert next(stream).texts == ["0"]
    stream.close()  # joins the reader thread: it must notice and stop


def test_streamlit_upload_is_read_twice_fields_then_records():
    from streamlit.proto.Common_pb2 import FileURLs
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    data = b'{"prompt": "hi there"}\n{"prompt": 7}\n{"prompt": "x"}\n'
    upload = UploadedFile(UploadedFileRec(file_id="1", name="u.jsonl", type="application/json", data=data), FileURLs())
    assert corpus_fields(upload) == ["prompt"]
    upload.seek(0)
    stats = corpus_stats(upload, field="prompt", tokenizer_ids=["llama3"])
    assert (stats.records, stats.file, [s.line for s in stats.skipped]) == (2, "u.jsonl", [2])


def test_csv_row_with_more_columns_than_the_header_is_skipped_not_cut(tmp_path):
    # Regression: an undoubled quote inside a quoted field splits the row into many columns; the prompt column then
    # held a few characters of a 6 MB field and the rest was dropped with nothing skipped.
    path = tmp_path / "c.csv"
    path.write_text('prompt,answer\n"a big field with "quoted" words, and commas, inside",x\n"fine",ok\n')
    stats = corpus_stats(path, field="prompt", tokenizer_ids=["o200k_base"])
    assert stats.records == 1 and [s.line for s in stats.skipped] == [2]
    assert "columns" in stats.skipped[0].reason and "header" in stats.skipped[0].reason
