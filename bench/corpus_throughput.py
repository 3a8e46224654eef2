"""Corpus statistics on Ray against the local path: records/s on the same multi-file corpus, in the same run.

Generates a corpus of ``--files`` files (JSONL, CSV and Parquet in turn; prompts of 1 to 12 paragraphs drawn from
every bundled language sample) and counts it with ``corpus_stats`` (local) and ``corpus_stats_on_ray`` on a local
Ray instance of ``--cpus`` CPUs. Both are warm: the tokenizer is loaded in this process and, by a first run on a
small corpus of a file per CPU, in Ray's workers. ``--repeats`` local/Ray pairs run back to back, the order flipping
each time, and the ratio is the median of the per-pair ratios, so a busy neighbour hits both sides alike. Ray's start
(once per process) is printed apart. Every run's statistics must equal the local ones exactly, or the bench stops.

    python bench/corpus_throughput.py --size-mb 40 --files 8 --repeats 3
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from infercost.tokenizers import LANGUAGES, corpus_stats, get_tokenizer  # noqa: E402
from infercost.tokenizers.corpus_ray import PACKAGE, corpus_stats_on_ray  # noqa: E402
from infercost.tokenizers.languages import sample_text  # noqa: E402

FORMATS = ("jsonl", "csv", "parquet")


def prompts(count_bytes: float, rng: random.Random) -> list[str]:
    paragraphs = [p for lang in LANGUAGES for p in sample_text(lang).split("\n\n") if p.strip()]
    texts, size = [], 0
    while size < count_bytes:
        texts.append("\n\n".join(rng.choices(paragraphs, k=rng.randint(1, 12))))
        size += len(texts[-1].encode("utf-8"))
    return texts


def write_file(path: Path, texts: list[str]) -> None:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps({"id": i, "prompt": t}, ensure_ascii=False) + "\n"
                                for i, t in enumerate(texts)), encoding="utf-8")
    elif path.suffix == ".csv":
        with path.open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows([["id", "prompt"], *enumerate(texts)])
    else:
        pq.write_table(pa.table({"id": range(len(texts)), "prompt": texts}), path, row_group_size=2048)


def generate(folder: Path, size_mb: float, files: int, seed: int = 0) -> int:
    """``files`` files of about ``size_mb / files`` MB of prompt text each; returns the number of records."""
    rng, records = random.Random(seed), 0
    for i in range(files):
        texts = prompts(size_mb * 1e6 / files, rng)
        write_file(folder / f"part-{i:03d}.{FORMATS[i % len(FORMATS)]}", texts)
        records += len(texts)
    return records


def timed(count, path: Path) -> tuple[float, dict]:
    start = time.perf_counter()
    stats = count(path)
    return time.perf_counter() - start, stats.to_dict()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=40.0, help="prompt text in the whole corpus")
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--tokenizer", default="o200k_base")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance")
    parser.add_argument("--repeats", type=int, default=3, help="local/Ray pairs, order flipping; median ratio")
    args = parser.parse_args()
    import ray

    ids = [args.tokenizer]
    local = lambda path: corpus_stats(path, field="prompt", tokenizer_ids=ids)  # noqa: E731
    on_ray = lambda path: corpus_stats_on_ray(path, field="prompt", tokenizer_ids=ids)  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        corpus, warm = Path(tmp) / "corpus", Path(tmp) / "warm"
        corpus.mkdir(), warm.mkdir()
        records = generate(corpus, args.size_mb, args.files)
        generate(warm, 0.05 * args.cpus, args.cpus)  # a file per worker: each loads the tokenizer
        size = sum(p.stat().st_size for p in corpus.iterdir())
        print(f"corpus: {args.files} files (JSONL, CSV, Parquet), {size / 2**20:.0f} MiB on disk, {records:,} records; "
              f"{args.tokenizer}; {os.cpu_count()} CPUs here, Ray given {args.cpus}")
        get_tokenizer(args.tokenizer)
        start = time.perf_counter()
        ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False,
                 runtime_env={"py_modules": [str(PACKAGE)]})
        try:
            on_ray(warm)
            print(f"Ray start and a first small run (workers load the tokenizer): "
                  f"{time.perf_counter() - start:.1f} s")
            measure(local, on_ray, corpus, records, args.repeats)
        finally:
            ray.shutdown()


def measure(local, on_ray, corpus: Path, records: int, repeats: int) -> None:
    rates: dict[str, list[float]] = {"local": [], "ray": []}
    for repeat in range(repeats):
        order = (("local", local), ("ray", on_ray)) if repeat % 2 == 0 else (("ray", on_ray), ("local", local))
        results = {name: timed(count, corpus) for name, count in order}
        if results["ray"][1] != results["local"][1]:
            raise SystemExit("Ray and local statistics differ")
        for name, (seconds, _) in results.items():
            rates[name].append(records / seconds)
        print(f"  pair {repeat + 1}: local {rates['local'][-1]:,.0f} records/s, ray {rates['ray'][-1]:,.0f} "
              f"records/s", flush=True)
    ratio = statistics.median(r / loc for r, loc in zip(rates["ray"], rates["local"], strict=True))
    print(f"median records/s: local {statistics.median(rates['local']):,.0f}, "
          f"ray {statistics.median(rates['ray']):,.0f}; ray / local {ratio:.2f} (statistics identical in every run)")


if __name__ == "__main__":
    main()
