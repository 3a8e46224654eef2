"""Hostile corpora for ``tokens``: each bad record is skipped with its reason, the rest counted; memory stays flat."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from infercost.tokenizers import corpus_stats, get_tokenizer
from infercost.tokenizers.corpus import MAX_RECORD_BYTES
from tests.robustness.conftest import assert_one_line_error


def count(text: str) -> int:
    return get_tokenizer("o200k_base").count(text)


def test_an_empty_file_is_the_empty_text(cli, tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    result = cli("tokens", "--tokenizer", "o200k_base", str(path), "--json")
    assert result.code == 0 and json.loads(result.stdout) | {} == {"tokenizer": "o200k_base", "tokens": 0, "chars": 0,
                                                                   "bytes": 0}


def test_a_json_escaped_nul_is_text_and_counted(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"t": "a\\u0000b"}\n{"t": "hello"}\n')
    stats = corpus_stats(path, field="t", tokenizer_ids=["o200k_base"])
    assert stats.records == 2 and stats.skipped_count == 0
    assert stats.stats["o200k_base"].counts.tolist() == [count("a\x00b"), count("hello")]


@pytest.mark.parametrize(("record", "reason"), [
    (b'{"t": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deep"),
    (b'{"t": "x", "n": ' + b"9" * 5000 + b"}", "4300 digits"),
])  # fmt: skip
def test_one_deep_or_huge_record_is_skipped_not_fatal(cli, tmp_path, record, reason):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"t": "one"}\n' + record + b'\n{"t": "two"}\n')
    result = cli("tokens", "--tokenizer", "o200k_base", "--field", "t", str(path), "--json")
    assert result.code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["records"] == 2 and payload["skipped_count"] == 1
    assert payload["skipped"][0]["line"] == 2 and reason in payload["skipped"][0]["reason"]


def test_an_oversized_quoted_field_is_one_skipped_record(tmp_path):
    """A quoted field over the limit, full of newlines: before, the reader resumed inside it and made thousands of
    bogus records out of its lines."""
    body = ("line of text\n" * (MAX_RECORD_BYTES // 13 + 1000)).encode()
    path = tmp_path / "c.csv"
    path.write_bytes(b'id,prompt\n1,"first"\n2,"' + body + b'"\n3,"third\nhas two lines"\n4,fourth\n5,"fifth"\n')
    stats = corpus_stats(path, field="prompt", tokenizer_ids=["o200k_base"])
    assert stats.records == 4 and stats.skipped_count == 1
    assert stats.skipped[0].line == 3 and "over the" in stats.skipped[0].reason


def test_csv_quotes_span_lines_and_keep_line_numbers(tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes(b'id,prompt\r\n1,"a ""quoted""\r\nword"\r\n2,\xff\r\n3,plain\r\n')
    stats = corpus_stats(path, field="prompt", tokenizer_ids=["o200k_base"])
    assert stats.stats["o200k_base"].counts.tolist() == [count('a "quoted"\r\nword'), count("plain")]
    assert [(s.line, s.reason) for s in stats.skipped] == [(4, "not valid UTF-8")]


def corrupt_parquet(path, groups: int = 3, rows: int = 50) -> None:
    table = pa.table({"t": [f"text number {i} " * 5 for i in range(groups * rows)]})
    pq.write_table(table, path, row_group_size=rows, compression="NONE", use_dictionary=False,
                   write_page_checksum=True)
    meta = pq.ParquetFile(path).metadata.row_group(1).column(0)
    data = bytearray(path.read_bytes())
    middle = meta.data_page_offset + meta.total_compressed_size // 2
    data[middle:middle + 64] = b"\xff" * 64  # the second row group's page, not its header
    path.write_bytes(bytes(data))


def test_a_corrupt_parquet_row_group_is_skipped_with_the_reason(cli, tmp_path):
    path = tmp_path / "c.parquet"
    corrupt_parquet(path)
    result = cli("tokens", "--tokenizer", "o200k_base", "--field", "t", str(path), "--json")
    assert result.code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["records"] == 100 and payload["skipped_count"] == 1
    assert payload["skipped"][0]["line"] == 51 and "row group 2" in payload["skipped"][0]["reason"]


def test_a_parquet_file_that_is_all_garbage_is_one_line(cli, tmp_path):
    path = tmp_path / "c.parquet"
    path.write_bytes(b"PAR1" + b"\x00garbage" * 100 + b"PAR1")
    assert_one_line_error(cli("tokens", "--tokenizer", "o200k_base", "--field", "t", str(path)), "Parquet")


def test_a_tokenizer_directory_error_is_one_line(cli, tmp_path):
    folder = tmp_path / "not-a-tokenizer"
    folder.mkdir()
    (folder / "config.json").write_text("{}", encoding="utf-8")
    text = tmp_path / "t.txt"
    text.write_text("hi", encoding="utf-8")
    assert_one_line_error(cli("tokens", "--tokenizer", str(folder), str(text)), "no tokenizer in this directory")


def test_a_bare_carriage_return_spoils_only_its_record(tmp_path):
    """Found by the fuzz test: the csv module refuses a lone CR in an unquoted field; the next record still counts."""
    path = tmp_path / "c.csv"
    path.write_bytes(b"id,t\n1,a\rb\n2,fine\n")
    stats = corpus_stats(path, field="t", tokenizer_ids=["o200k_base"])
    assert stats.records == 1 and stats.skipped[0].line == 2 and "malformed CSV" in stats.skipped[0].reason


def test_a_malformed_csv_header_is_one_line(cli, tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes(b"id,t\rx\n1,a\n")
    assert_one_line_error(cli("tokens", "--tokenizer", "o200k_base", "--field", "t", str(path)), "CSV")
