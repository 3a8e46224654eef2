"""``tokens``: count a text, or every record of a file, with one model's own tokenizer.

Examples:
    python -m infercost tokens --tokenizer o200k_base prompt.txt --json
    echo -n "你好，世界" | python -m infercost tokens --tokenizer qwen2.5 -
    python -m infercost tokens --tokenizer llama3 --field prompt prompts.jsonl --json
    python -m infercost tokens --tokenizer llama3 --field prompt 'logs/**/*.jsonl' --executor ray --json
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any

from infercost.errors import InputError
from infercost.tokenizers import CorpusStats, corpus_stats, count_text_file

STATS_FIELDS = ("records", "tokens_total", "mean", "p50", "p90", "p95", "p99", "max")


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "tokens",
        parents=[common],
        help="count tokens of a file (or stdin) with a model's own tokenizer",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--tokenizer", required=True, metavar="ID", help="see `infercost tokenizers`, or a HF repo id")
    parser.add_argument("--field", metavar="NAME", help="the file is records (JSONL, CSV, Parquet): count this field")
    parser.add_argument("--format", choices=("txt", "jsonl", "csv", "parquet"),
                        help="records format when the extension does not tell (stdin: jsonl); txt = one per line")
    parser.add_argument("--executor", choices=("local", "ray"), default="local",
                        help="records only: count here (default) or with Ray Data, one task per file")
    parser.add_argument("--address", metavar="ADDR",
                        help="with --executor ray: the Ray cluster (host:port, ray://host:port, auto); "
                             "default: a new local instance")
    parser.add_argument("file", nargs="?", default="-",
                        help="the file, - for stdin (default), or with --field a directory or quoted glob of files")
    parser.set_defaults(handler=run, render=render)


def open_input(name: str) -> str | IO[bytes]:
    return sys.stdin.buffer if name == "-" else name


def progress_on_stderr(fraction: float) -> None:
    print(f"\r{fraction:6.1%}", end="", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.address and args.executor != "ray":
        raise InputError("address", "only with --executor ray")
    source = open_input(args.file)
    if not args.field and args.format in (None, ""):
        if args.executor == "ray":
            raise InputError("executor", "--executor ray counts records: give --field (or --format txt)")
        count = count_text_file(source, args.tokenizer)
        return {"tokenizer": count.tokenizer, "tokens": count.tokens, "chars": count.chars, "bytes": count.bytes}
    progress = progress_on_stderr if sys.stderr.isatty() else None
    stats = count_records(args, source, progress)
    if progress:
        print(file=sys.stderr)
    summary = next(iter(stats.stats.values())).summary()
    for skipped in stats.skipped[:5]:
        print(f"skipped {skipped.file}:{skipped.line}: {skipped.reason}", file=sys.stderr)
    if stats.skipped_count > 5:
        print(f"... {stats.skipped_count - 5} more skipped records", file=sys.stderr)
    return {
        "tokenizer": summary["tokenizer"], "tokens": summary["tokens_total"], "chars": stats.chars,
        "bytes": stats.bytes, **{key: summary[key] for key in STATS_FIELDS},
        "skipped_count": stats.skipped_count,
        "skipped": [{"file": s.file, "line": s.line, "reason": s.reason} for s in stats.skipped],
    }


def count_records(args: argparse.Namespace, source: str | IO[bytes], progress: Any) -> CorpusStats:
    """The corpus statistics, counted here or on Ray: the same files, the same merge, the same result."""
    fmt = args.format or ("jsonl" if args.file == "-" else None)
    if args.executor == "local":
        return corpus_stats(source, field=args.field, tokenizer_ids=[args.tokenizer], fmt=fmt, progress=progress)
    if args.file == "-":
        raise InputError("file", "--executor ray counts files, not stdin: give a file, directory or glob")
    from infercost.tokenizers.corpus_ray import corpus_stats_on_ray

    return corpus_stats_on_ray(args.file, field=args.field, tokenizer_ids=[args.tokenizer], fmt=fmt,
                               address=args.address, progress=progress)


def render(payload: dict[str, Any]) -> str:
    head = f"{payload['tokens']:,} tokens ({payload['tokenizer']}), {payload['chars']:,} chars, {payload['bytes']:,} B"
    if "records" not in payload:
        return head
    stats = ", ".join(f"{key} {payload[key]:,.1f}" for key in ("mean", "p50", "p90", "p95", "p99"))
    tail = f"max {payload['max']:,}; skipped {payload['skipped_count']}"
    return f"{head}\n{payload['records']:,} records: {stats}, {tail}"
