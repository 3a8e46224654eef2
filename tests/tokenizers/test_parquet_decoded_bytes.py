"""A Parquet file is bounded by the text it decodes to, not by its size on disk: dictionary pages and compression
let 547 bytes hold 600 copies of a 1 MiB string (600 MiB of text; reading it peaked at 2-2.5 GB)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from infercost.tokenizers.corpus import PARQUET_DECODED_FLOOR_BYTES, PARQUET_DECODED_PER_FILE_BYTE, corpus_stats
from infercost.tokenizers.registry import get_tokenizer

REPO = Path(__file__).resolve().parents[2]
# ``python -m infercost ARGS`` in a child of its own, then that child's peak RSS as the last line of stderr
MEASURED = """import resource, subprocess, sys
done = subprocess.run([sys.executable, "-m", "infercost", *sys.argv[1:]])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(done.returncode)"""


def write_bomb(path: Path, copies: int = 600, size: int = 2**20) -> Path:
    pq.write_table(pa.table({"text": ["a" * size] * copies}), path, compression="zstd", use_dictionary=True)
    return path


def test_the_bomb_is_tiny_on_disk(tmp_path: Path) -> None:
    assert write_bomb(tmp_path / "bomb.parquet").stat().st_size < 4096


def test_tokens_refuses_it_in_one_line_and_flat_memory(tmp_path: Path) -> None:
    bomb = write_bomb(tmp_path / "bomb.parquet")
    done = subprocess.run([sys.executable, "-c", MEASURED, "tokens", "--tokenizer", "o200k_base", "--field",
                           "text", str(bomb), "--json"], cwd=REPO, capture_output=True, text=True, timeout=300)
    *stderr, peak = done.stderr.splitlines()
    peak_mib = int(peak) / 1024  # ru_maxrss is in KiB on Linux
    limit_mib = (PARQUET_DECODED_FLOOR_BYTES + PARQUET_DECODED_PER_FILE_BYTE * bomb.stat().st_size) / 2**20
    assert done.returncode == 2 and done.stdout == "" and len(stderr) == 1, done.stderr
    assert f"decodes to more than {limit_mib:,.0f} MiB of text" in stderr[0]
    assert peak_mib < 1024, f"peak RSS {peak_mib:.0f} MiB"  # was 2,000-2,500 MiB


def test_repeated_texts_under_the_limit_are_counted_exactly(tmp_path: Path) -> None:
    """Dictionary-encoded rows come back one by one, in order, each counted like any other record."""
    texts = ["hello world", "bonjour le monde", None, "hello world", ""] * 400
    path = tmp_path / "labels.parquet"
    pq.write_table(pa.table({"text": texts}), path, use_dictionary=True, row_group_size=700)
    stats = corpus_stats(path, field="text", tokenizer_ids=["o200k_base"])
    expected = get_tokenizer("o200k_base").count_batch([text for text in texts if text])
    assert stats.records == 1200 and list(stats.stats["o200k_base"].counts) == list(expected)
    assert stats.skipped_count == 400  # the nulls, each named; the empty texts are no records, as in JSONL
