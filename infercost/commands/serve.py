"""``serve``: an OpenAI-compatible HTTP server over the in-process transformers engine.

Example: python -m infercost serve --model random:tiny-llama --port 8000
then     curl http://127.0.0.1:8000/v1/completions -d '{"prompt": [1, 2, 3], "max_tokens": 8, "ignore_eos": true}'
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from infercost.errors import InputError


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "serve",
        parents=[common],
        help="serve a transformers model (or random:<architecture>) over an OpenAI-compatible HTTP API",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", required=True,
                        help="random:<architecture> (e.g. random:tiny-llama), a model directory, or a Hub id")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (0 picks a free one; the URL goes to stderr)")
    parser.add_argument("--dtype", default="auto",
                        help="auto (bf16 on CUDA, float32 on CPU), float32, float16, bfloat16")  # fmt: skip
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    parser.add_argument("--max-batch", type=int, default=32,
                        help="most requests decoded together in one static batch (1 serialises them)")
    parser.add_argument("--served-model-name", help="the model id clients send and /v1/models lists")
    parser.add_argument("--trust-remote-code", action="store_true",
                        help="run a Hub model's own Python code (off by default: it is code from the internet)")
    parser.set_defaults(handler=run, render=None)


def run(args: argparse.Namespace) -> None:
    from infercost.runner.inprocess import load_model  # torch and transformers load only for this command
    from infercost.runner.server import serve

    if not 0 <= args.port <= 65535:
        raise InputError("port", f"must be 0..65535, got {args.port}")
    if args.max_batch < 1:
        raise InputError("max_batch", f"must be at least 1, got {args.max_batch}")
    print(f"infercost serve: loading {args.model} ...", file=sys.stderr, flush=True)
    model = load_model(args.model, dtype=args.dtype, device=args.device, trust_remote_code=args.trust_remote_code)
    serve(model, host=args.host, port=args.port, max_batch=args.max_batch, served_name=args.served_model_name)
