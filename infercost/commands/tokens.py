"""``tokens``: count a text, or every record of a file, with one model's own tokenizer.

Examples:
    python -m infercost tokens --tokenizer o200k_base prompt.txt --json
    echo -n "你好，世界" | python -m infercost tokens --tokenizer qwen2.5 -
    python -m infercost tokens --tokenizer llama3 --field prompt prompts.jsonl --json
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any

from infercost.tokenizers import corpus_stats, count_text_file

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
    parser.add_argument("file", nargs="?", default="-", help="the file, or - for stdin (default)")
    parser.set_defaults(handler=run, render=render)


def open_input(name: str) -> str | IO[bytes]:
    return sys.stdin.buffer if name == "-" else name


def progress_on_stderr(fraction: float) -> None:
    print(f"\r{fraction:6.1%}", end="", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> dict[str, Any]:
    source = open_input(args.file)
    if not args.field and args.format in (None, ""):
        count = count_text_file(source, args.tokenizer)
        return {"tokenizer": count.tokenizer, "tokens": count.tokens, "chars": count.chars, "bytes": count.bytes}
    fmt = args.format or ("jsonl" if args.file == "-" else None)
    progress = progress_on_stderr if sys.stderr.isatty() else None
    stats = corpus_stats(source, field=args.field, tokenizer_ids=[args.tokenizer], fmt=fmt, progress=progress)
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
        "skipped": [{"line": s.line, "reason": s.reason} for s in stats.skipped],
    }


def render(payload: dict[str, Any]) -> str:
    head = f"{payload['tokens']:,} tokens ({payload['tokenizer']}), {payload['chars']:,} chars, {payload['bytes']:,} B"
    if "records" not in payload:
        return head
    stats = ", ".join(f"{key} {payload[key]:,.1f}" for key in ("mean", "p50", "p90", "p95", "p99"))
    tail = f"max {payload['max']:,}; skipped {payload['skipped_count']}"
    return f"{head}\n{payload['records']:,} records: {stats}, {tail}"
