"""``throughput``: what the engine model predicts for a setup at a token shape, with its basis and expected error."""

from __future__ import annotations

import argparse
from typing import Any

from infercost.commands.common import add_db_argument, table
from infercost.errors import InputError

MAX_CONCURRENCY = 4096
MAX_RATE_PER_S = 10_000.0


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "throughput",
        parents=[common],
        help="predicted throughput and latency of a run, a published table or a roofline setup at any token shape",
        description="Predict a setup's points at a token shape with the engine model. SOURCE is a stored run id, a "
        "bundled id (published:..., measured:...) or roofline:MODEL@NxGPU:DTYPE. "
        "Example: python -m infercost throughput roofline:meta-llama/Llama-3.1-8B-Instruct@1xL40S:fp8 "
        "--input-tokens 1000 --output-tokens 300 --concurrency 1,5,20,50 --json",
    )
    parser.add_argument("source", metavar="SOURCE",
                        help="run id, published:/measured: id, or roofline:MODEL@NxGPU:DTYPE")  # fmt: skip
    parser.add_argument("--input-tokens", type=int, required=True, metavar="N", help="prompt tokens per request")
    parser.add_argument("--output-tokens", type=int, required=True, metavar="M", help="output tokens per request")
    parser.add_argument("--concurrency", metavar="LEVELS", help="closed-loop users, e.g. 1,5,20,50 (default: the "
                        "source's own levels)")  # fmt: skip
    parser.add_argument("--rate", metavar="RATES", help="open-loop Poisson arrival rates in requests/s, e.g. 1,2,4")
    add_db_argument(parser)
    parser.set_defaults(handler=run, render=render)


def _levels(text: str | None, field_name: str, *, whole: bool, upper: float) -> list[float]:
    from infercost.runner.sweep import parse_levels

    if text is None:
        return []
    values = parse_levels(text, field_name)
    for value in values:
        if not (0 < value <= upper) or (whole and value != int(value)):
            kind = "whole numbers" if whole else "numbers"
            raise InputError(field_name, f"must be {kind} above 0 and at most {upper:,.0f}, got {value!r}")
    return values


def run(args: argparse.Namespace) -> dict[str, Any]:
    from infercost.performance.predict import predict_source

    concurrencies = [int(c) for c in _levels(args.concurrency, "concurrency", whole=True, upper=MAX_CONCURRENCY)]
    rates = _levels(args.rate, "rate", whole=False, upper=MAX_RATE_PER_S)
    predicted = predict_source(args.source, args.input_tokens, args.output_tokens,
                               concurrencies=concurrencies or None, rates=rates, db_path=args.db)  # fmt: skip
    return predicted.as_dict()


def render(payload: dict[str, Any]) -> str:
    columns = ("concurrency", "rate", "request_throughput", "output_throughput", "user_tokens_per_s", "mean_ttft_ms",
               "p95_ttft_ms", "mean_tpot_ms", "p95_tpot_ms", "mean_e2el_ms")  # fmt: skip
    # what one user sees beside what the replica serves: a "tokens/s" claim means nothing without both
    points = [{**p, "user_tokens_per_s": 1000 / p["mean_tpot_ms"] if p.get("mean_tpot_ms") else None}
              for p in payload["points"]]
    present = [c for c in columns if any(p.get(c) is not None for p in points)]
    error = payload["expected_error"].get("request_throughput")
    error_line = (f"expected error ({payload['transfer']} transfer): requests/s median {error['median_abs']:.0%}, "
                  f"p10..p90 {error['p10']:+.0%}..{error['p90']:+.0%}" if error else "expected error: not measured")
    head = (f"{payload['basis']}: {payload['source']} — {payload['model']} on {payload['gpus_per_replica']}x "
            f"{payload['hardware']} ({payload['dtype']}), {payload['input_len']:,} in / {payload['output_len']:,} out")
    return "\n".join([head, error_line, *payload["notes"], "", table(points, present)])
