"""``models``: the bundled model architectures; what one weighs, what its KV cache costs, where it fits.

Example: python -m infercost models list --json
         python -m infercost models show gpt-oss-120b --context 32768 --json
         python -m infercost models show my-model --config ./my-model/config.json --dtype fp8 --kv-dtype fp8
"""

from __future__ import annotations

import argparse
from typing import Any

from infercost.commands.common import table
from infercost.performance.architecture import DTYPES
from infercost.performance.models import model_report, resolve

LIST_COLUMNS = ("model", "family", "kind", "attention", "total_params", "active_params", "default_dtype", "tables")


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("models", parents=[common], help="model architectures: parameters, memory, fit",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(handler=run_list, render=render_list)
    actions = parser.add_subparsers(dest="action")
    listing = actions.add_parser("list", parents=[common], help="every bundled architecture")
    listing.set_defaults(handler=run_list, render=render_list)
    show = actions.add_parser("show", parents=[common], help="one model: parameters, weight and KV bytes, fit")
    show.add_argument("model", nargs="?", help="a bundled name, a Hugging Face id (online), or a label for --config")
    show.add_argument("--config", metavar="PATH", help="a config.json, or a model directory holding one")
    show.add_argument("--dtype", help=f"weights: {', '.join(DTYPES)} (default: the checkpoint's own)")
    show.add_argument("--kv-dtype", help="KV cache (default: fp8 beside fp8 weights, else 16-bit)")
    show.add_argument("--context", type=int, help="tokens per sequence (default: 8192, or the model's maximum)")
    show.set_defaults(handler=run_show, render=render_show)


def run_list(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every bundled model, with the bundled tables its throughput predictions are calibrated on per engine."""
    from infercost.performance.profiles import listed_models

    return listed_models()


def run_show(args: argparse.Namespace) -> dict[str, Any]:
    from infercost.pricing import bundled_gpu_specs

    resolved = resolve(args.model, args.config)
    return model_report(resolved, dtype=args.dtype, kv_dtype=args.kv_dtype, context=args.context,
                        gpu_specs=bundled_gpu_specs())  # fmt: skip


def _billions(n: float) -> str:
    return f"{n / 1e9:,.2f}B"


def render_list(payload: list[dict[str, Any]]) -> str:
    rows = [{**row, "total_params": _billions(row["total_params"]), "active_params": _billions(row["active_params"]),
             "tables": _tables(row)} for row in payload]  # fmt: skip
    return table(rows, LIST_COLUMNS)


def _tables(row: dict[str, Any]) -> str:
    """Its tables per engine, then those of a model of the same shapes where it has none ("vllm 9 of deepseek-r1")."""
    shown = [f"{engine} {count}" for engine, count in row["tables"].items()]
    shown += [f"{engine} {count} of {twin}" for twin, counts in row.get("twin_tables", {}).items()
              for engine, count in counts.items()]  # fmt: skip
    return ", ".join(shown) or "none: priors"


def render_show(payload: dict[str, Any]) -> str:
    head = (f"{payload['model']} ({payload['source']}, {payload['kind']}, {payload['attention']}): "
            f"{_billions(payload['total_params'])} parameters, {_billions(payload['active_params'])} active per token\n"
            f"weights {payload['weight_bytes'] / 1e9:,.1f} GB in {payload['dtype']}; KV cache ({payload['kv_dtype']}) "
            f"{payload['kv_bytes_per_token'] / 1024:,.1f} KiB per token, "
            f"{payload['kv_bytes_per_sequence'] / 1e9:,.3f} GB per {payload['context']:,}-token sequence; "
            f"{payload['flops_per_token'] / 1e9:,.1f} GFLOP per token")  # fmt: skip
    fitting = [row for row in payload["fits"] if row["weights_fit"]]
    rows = [{**row, "native": "yes" if row["native"] else "emulated"} for row in fitting]
    return head + "\n\n" + (table(rows, ("gpu", "gpus", "max_sequences", "native")) if rows else "fits on no datasheet "
                            "GPU at up to 8 GPUs")  # fmt: skip
