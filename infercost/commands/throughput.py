"""``throughput``: what the engine model predicts for a setup at a token shape, with its basis and expected error."""

from __future__ import annotations

import argparse
from typing import Any

from infercost.commands.common import add_db_argument, table
from infercost.errors import InputError
from infercost.performance.expected_error import error_phrase

MAX_CONCURRENCY = 4096
MAX_RATE_PER_S = 10_000.0
MAX_OFFLINE_REQUESTS = 100_000  # an offline batch is simulated request by request


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "throughput",
        parents=[common],
        help="predicted throughput and latency of a run, a published table or a roofline setup at any token shape",
        description="Predict a setup's points at a token shape with the engine model. SOURCE is a stored run id, a "
        "bundled id (published:..., measured:...) or roofline:MODEL@NxGPU:DTYPE (without :DTYPE, the checkpoint's "
        "own: gpt-oss in mxfp4). "
        "Example: python -m infercost throughput roofline:meta-llama/Llama-3.1-8B-Instruct@1xL40S:fp8 "
        "--input-tokens 1000 --output-tokens 300 --concurrency 1,5,20,50 --json",
    )
    parser.add_argument("source", metavar="SOURCE",
                        help="run id, published:/measured: id, or roofline:MODEL@NxGPU[:DTYPE]")  # fmt: skip
    parser.add_argument("--input-tokens", type=int, required=True, metavar="N", help="prompt tokens per request")
    parser.add_argument("--output-tokens", type=int, required=True, metavar="M", help="output tokens per request")
    # levels by commas or spaces, and repeated flags add up (--concurrency 64 --concurrency 256 is 64,256): the last
    # must not silently win, and "--concurrency 1 16 64" (as vLLM's and SGLang's sweep scripts list them) is no typo
    parser.add_argument("--concurrency", metavar="LEVELS", nargs="+", action="extend", help="closed-loop users, "
                        "e.g. 1,5,20,50 or 1 5 20 50 (default: the source's own levels)")  # fmt: skip
    parser.add_argument("--rate", metavar="RATES", nargs="+", action="extend", help="open-loop Poisson arrival "
                        "rates in requests/s, e.g. 1,2,4")  # fmt: skip
    parser.add_argument("--offline", type=int, metavar="N", help="also predict N requests submitted at once (an "
                        "offline batch, as trtllm-bench or vllm bench throughput run it): throughput and makespan")
    parser.add_argument("--engine", metavar="ENGINE", help="the engine of a roofline setup: vllm, sglang or trtllm "
                        "(default: the engine of the measurements it is calibrated on)")
    parser.add_argument("--engine-version", metavar="V", help="the engine's release, e.g. 0.5.9: calibrated on that "
                        "release's tables where bundled (`models list --json` lists them per model as releases); "
                        "not named, on any release's, with that wider error")  # fmt: skip
    parser.add_argument("--cached-prompt-fraction", type=float, default=0.0, metavar="F", help="share of each "
                        "prompt found in the engine's prefix cache (vLLM and SGLang cache prefixes by default); "
                        "that part is not prefilled again")  # fmt: skip
    parser.add_argument("--length-spread", type=float, metavar="S", help="how far requests' prompt and output "
                        "lengths spread around the stated ones, as a share either side: 0 for a benchmark that sends "
                        "every request alike (genai-perf, vllm bench serve's default), whose users stay in step; "
                        "default: a table's own benchmark's, and for a roofline setup 0.1111, InferenceX's "
                        "--random-range-ratio 0.8 (0.8 to 1 of the nominal)")  # fmt: skip
    parser.add_argument("--kv-dtype", metavar="D", help="the KV cache's dtype of a roofline setup: bfloat16, "
                        "float16, fp8 or nvfp4 (default: fp8 beside fp8 or nvfp4 weights, as TensorRT-LLM builds and "
                        "NVIDIA's NVFP4 checkpoints keep it, else 16-bit; vLLM and SGLang keep a natively FP8 "
                        "checkpoint's cache in bfloat16 unless --kv-cache-dtype fp8 is given)")  # fmt: skip
    parser.add_argument("--config", metavar="PATH", help="the config.json (or model directory) of a roofline "
                        "setup's model, for one `models list` lacks; offline, a model the bundle lacks needs it")
    for flag, meaning in (("--tensor-parallel", "GPUs each engine's tensor-parallel group spans (default: the "
                                                 "setup's GPUs over --data-parallel)"),
                          ("--expert-parallel", "GPUs of an engine its MoE experts are spread over (all-to-all "
                                                "instead of an all-reduce)"),
                          ("--data-parallel", "engines the replica's GPUs are split into, each serving its share")):
        parser.add_argument(flag, type=int, metavar="N", help=meaning)
    add_db_argument(parser)
    parser.set_defaults(handler=run, render=render)


def _levels(given: list[str] | None, field_name: str, *, whole: bool, upper: float) -> list[float]:
    from infercost.runner.sweep import parse_levels

    if not given:
        return []
    values = parse_levels(",".join(given), field_name, highest=upper)
    for value in values:
        if whole and value != int(value):
            raise InputError(field_name, f"must be whole numbers, got {value:g}")
    return values


def run(args: argparse.Namespace) -> dict[str, Any]:
    from infercost.performance.predict import Layout, Load, predict_source

    concurrencies = [int(c) for c in _levels(args.concurrency, "concurrency", whole=True, upper=MAX_CONCURRENCY)]
    rates = _levels(args.rate, "rate", whole=False, upper=MAX_RATE_PER_S)
    if args.offline is not None and not 1 <= args.offline <= MAX_OFFLINE_REQUESTS:
        raise InputError("offline", f"must be a whole number of requests from 1 to {MAX_OFFLINE_REQUESTS:,}, "
                                    f"got {args.offline}")  # fmt: skip
    for field_name in ("cached_prompt_fraction", "length_spread"):  # shares: 0 up to, not including, the whole
        share = getattr(args, field_name)
        if share is not None and not 0 <= share < 1:
            raise InputError(field_name, f"must be from 0 to under 1, got {share}")
    load = Load(concurrencies or None, rates, args.offline, args.cached_prompt_fraction, args.length_spread)
    layout = Layout(args.tensor_parallel, *(1 if value is None else value  # 0 is a value, refused, not the default
                                            for value in (args.expert_parallel, args.data_parallel)))
    predicted = predict_source(args.source, args.input_tokens, args.output_tokens, load, engine=args.engine,
                               layout=layout, kv_dtype=args.kv_dtype, config=args.config, release=args.engine_version,
                               db_path=args.db)  # fmt: skip
    return predicted.as_dict()


def render(payload: dict[str, Any]) -> str:
    from infercost.performance.predict import layout_name

    columns = ("concurrency", "rate", "requests", "request_throughput", "output_throughput", "user_tokens_per_s",
               "mean_ttft_ms", "p95_ttft_ms", "mean_tpot_ms", "p95_tpot_ms", "mean_e2el_ms")  # fmt: skip
    # what one user sees beside what the replica serves: a "tokens/s" claim means nothing without both
    points = [{**p, "user_tokens_per_s": 1000 / p["mean_tpot_ms"] if p.get("mean_tpot_ms") else None}
              for p in payload["points"]]
    present = [c for c in columns if any(p.get(c) is not None for p in points)]
    error = payload["expected_error"].get("request_throughput")
    error_line = (f"expected error ({payload['transfer']} transfer): requests/s {error_phrase(error)}" if error
                  else "expected error: not measured")
    head = (f"{payload['basis']}: {payload['source']} — {payload['model']} on {payload['gpus_per_replica']}x "
            f"{payload['hardware']} ({payload['dtype']}, KV {payload['kv_dtype'] or 'not simulated'}, "
            f"{payload['engine']}, "
            f"{layout_name(payload['parallel'])}), {payload['input_len']:,} in / {payload['output_len']:,} out")
    return "\n".join([head, error_line, *payload["notes"], "", table(points, present)])
