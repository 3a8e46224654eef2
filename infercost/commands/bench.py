"""``bench``: measure an engine at several load levels; every request is stored as it completes.

Example: python -m infercost bench --backend openai --base-url http://127.0.0.1:8000/v1 --model NAME \\
             --concurrency 1,5,20,50 --json
         python -m infercost bench --backend transformers --model random:tiny-llama --concurrency 1,4 --json
         python -m infercost bench --resume RUN_ID        # continue an interrupted sweep
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from infercost.commands.common import add_db_argument, positive_number, seconds, table
from infercost.errors import InputError
from infercost.files import parse_document
from infercost.runner.backends import BACKENDS, SECONDS_PER_OUTPUT_TOKEN, BackendOptions
from infercost.runner.patterns import PATTERNS
from infercost.runner.sweep import Progress, SweepConfig, parse_levels, run_summary, run_sweep

SUMMARY_COLUMNS = ("load", "completed", "failed", "request_throughput", "output_throughput", "median_user_tokens_per_s",
                   "median_ttft_ms", "p95_ttft_ms", "median_tpot_ms", "p95_tpot_ms", "p95_e2el_ms")


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("bench", parents=[common], help="benchmark an engine; store every request",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="openai")
    parser.add_argument("--model",
                        help="model name the server knows, or random:<architecture> / a directory in process")
    parser.add_argument("--base-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--api", choices=("completions", "chat"), default="completions")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY",
                        help="environment variable holding the API key (the key is never stored)")
    parser.add_argument("--pattern", choices=sorted(PATTERNS), default="concurrency",
                        help="concurrency: closed loop; batch: fixed batches; rate: Poisson arrivals; single: 1 stream")
    parser.add_argument("--concurrency", default="1,5,20,50", help="levels: streams, batch sizes (comma-separated)")
    parser.add_argument("--rate", help="levels for --pattern rate: requests/s, comma-separated")
    parser.add_argument("--input-tokens", default="128",
                        help="prompt tokens; several (e.g. 128,1024,4096) measure every length at each level and fit "
                             "TTFT against input length (prefill rate, fixed overhead)")
    parser.add_argument("--output-tokens", type=int, default=128)
    parser.add_argument("--mixed", metavar="SHORT:LONG:FRACTION", help="mixed input lengths, e.g. 128:2048:0.2")
    parser.add_argument("--requests", type=int, help="requests per level (default: a few rounds of the level)")
    parser.add_argument("--duration", type=seconds, help="seconds per level: stop sending after this long")
    parser.add_argument("--windows", type=seconds, metavar="S",
                        help="soak: summarise each level per window of S seconds (P50/P95 TTFT and TPOT, throughput, "
                             "failures) and test it for drift; use with --duration, e.g. --duration 600 --windows 60")
    parser.add_argument("--warmup", type=int, help="warm-up requests per level, not measured (default: one per stream)")
    parser.add_argument("--consistency", type=int, metavar="N",
                        help="after each level, send one prompt N times at temperature 0 at the level's concurrency "
                             "and report identical outputs and token-level agreement")
    parser.add_argument("--repeats", type=int, default=1, help="repeat each level; the summary is the median")
    parser.add_argument("--timeout", type=seconds, default=60.0, help="seconds without a byte before a request fails")
    parser.add_argument("--request-timeout", type=seconds, metavar="S",
                        help="seconds one whole request may take, however steadily bytes arrive (a server sending "
                             f"keep-alive comments forever); default: --timeout + {SECONDS_PER_OUTPUT_TOKEN:g} s per "
                             "output token")
    parser.add_argument("--no-force-output", action="store_true",
                        help="do not send min_tokens/ignore_eos (for servers that reject them)")
    parser.add_argument("--extra-body", help="JSON object merged into every request body")
    parser.add_argument("--tokenizer", help="tokenizer id to count tokens when the server reports no usage")
    parser.add_argument("--dtype", default="auto", help="in process: auto, float32, float16, bfloat16")
    parser.add_argument("--device", default="auto", help="in process: auto, cpu, cuda")
    parser.add_argument("--slo", help="goodput limits in ms, e.g. ttft:500,tpot:50")
    parser.add_argument("--resume", metavar="RUN_ID", help="continue an interrupted run (its stored settings are used)")
    add_db_argument(parser)
    parser.set_defaults(handler=run, render=render)


def _mixed(text: str | None) -> tuple[int, int, float] | None:
    if not text:
        return None
    parts = text.split(":")
    try:
        short, long = int(parts[0]), int(parts[1])
        fraction = float(parts[2]) if len(parts) > 2 else 0.5
    except (ValueError, IndexError):
        raise InputError("mixed", f"expected SHORT:LONG[:FRACTION], got {text!r}") from None
    return short, long, fraction


SLO_METRICS = ("ttft", "tpot", "e2el")  # what goodput can check per request (infercost.runner.metrics)


def _slo(text: str | None) -> dict[str, float]:
    """``ttft:500,tpot:50`` to limits in ms; an unknown metric or a limit that is no number is refused, never
    silently dropped (goodput would then count requests that break the limit)."""
    if not text:
        return {}
    limits = {}
    for item in text.split(","):
        name, _, value = item.partition(":")
        name = name.strip()
        if name not in SLO_METRICS:
            raise InputError("slo", f"unknown metric {name!r}; use {', '.join(SLO_METRICS)} (e.g. ttft:500,tpot:50)")
        limits[name] = positive_number(value, "slo", f"{name} limit in ms")
    return limits


def _extra_body(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    body = parse_document(text, name="extra_body")  # the same nesting, number and text checks as a profile file
    if not isinstance(body, dict):
        raise InputError("extra_body", "must be a JSON object")
    return body


def _input_lengths(text: str) -> list[int]:
    """``"128"`` or ``"128,1024,4096"``: prompt lengths in tokens, each a whole number of at least 1."""
    try:
        lengths = [int(part) for part in str(text).split(",") if part.strip()]
    except ValueError:
        raise InputError("input_tokens", f"expected whole numbers separated by commas, got {text!r}") from None
    if not lengths or min(lengths) < 1:
        raise InputError("input_tokens", f"each length must be at least 1 token, got {text!r}")
    return lengths


def config_from_args(args: argparse.Namespace) -> SweepConfig:
    if not args.model:
        raise InputError("model", "required (a served model name, or random:<architecture> in process)")
    options = BackendOptions(
        model=args.model, base_url=args.base_url, api=args.api, api_key_env=args.api_key_env,
        force_output=not args.no_force_output, extra_body=_extra_body(args.extra_body), read_timeout_s=args.timeout,
        total_timeout_s=args.request_timeout, tokenizer=args.tokenizer, dtype=args.dtype, device=args.device)
    if args.backend == "openai" and not args.base_url:
        raise InputError("base_url", "the openai backend needs --base-url, e.g. http://127.0.0.1:8000/v1")
    levels = parse_levels(args.rate, "rate") if args.pattern == "rate" and args.rate else parse_levels(args.concurrency)
    if args.pattern == "rate" and not args.rate:
        raise InputError("rate", "--pattern rate needs --rate, e.g. 1,2,4")
    lengths = _input_lengths(args.input_tokens)
    if args.windows is not None and args.duration is None and args.requests is None:
        raise InputError("windows", "a soak needs --duration (seconds per level), e.g. --duration 600 --windows 60")
    return SweepConfig(backend=args.backend, options=options, pattern=args.pattern, levels=levels,
                       input_tokens=round(sum(lengths) / len(lengths)),
                       input_lengths=lengths if len(lengths) > 1 else None, window_s=args.windows,
                       consistency=args.consistency,
                       output_tokens=args.output_tokens, mixed=_mixed(args.mixed),
                       requests=args.requests, duration_s=args.duration, warmup=args.warmup, repeats=args.repeats,
                       slo_ms=_slo(args.slo))


class ProgressBar:
    """One line on stderr, redrawn at most five times a second (never on the hot path of every request)."""

    def __init__(self) -> None:
        self.last = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if now - self.last < 0.2 and p.done != p.planned:
            return
        self.last = now
        total = p.planned or 0
        width = 24
        filled = int(width * p.done / total) if total else 0
        bar = "#" * filled + "." * (width - filled)
        count = f"{p.done}/{total}" if total else f"{p.done}"
        line = f"level {p.level}/{p.levels} load {p.load:g} {p.phase:9s} [{bar}] {count} failed {p.failed} "
        sys.stderr.write("\r" + line)
        sys.stderr.flush()


def run(args: argparse.Namespace) -> dict[str, Any]:
    config = None if args.resume else config_from_args(args)
    try:
        run_id = run_sweep(config, db_path=args.db, resume=args.resume, progress=Progress(on_change=ProgressBar()))
    finally:
        sys.stderr.write("\n")  # end the progress line, so that an error says so on a line of its own
    return run_summary(args.db, run_id)


def render(payload: dict[str, Any]) -> str:
    rows = [{**level, "load": level.get("concurrency") or level.get("rate") or level.get("batch_size")}
            for level in payload["levels"]]
    head = f"run {payload['run_id']} ({payload['status']}): {payload['backend']} {payload['model']}"
    warnings = "".join(f"\nwarning: {warning}" for warning in payload.get("warnings", []))
    return head + "\n" + table(rows, SUMMARY_COLUMNS) + warnings
