"""``diagnose``: walk a stored run through the troubleshooting order (inputs, hardware, concurrency, logs, baseline),
saying at each step what the run shows and what it cannot.

Example: python -m infercost diagnose RUN_ID
         python -m infercost diagnose RUN_ID --json \\
             --against published:nim-trtllm-llama-3-8b-instruct-1xh100-fp8-200in-1000out
"""

from __future__ import annotations

import argparse
from typing import Any

from infercost.commands.common import add_db_argument
from infercost.runner.diagnose import diagnose_run


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("diagnose", parents=[common], help="why a run's numbers are what they are",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_id")
    parser.add_argument("--against", metavar="CLAIM_OR_RUN",
                        help="a bundled published:/measured: id or another run id to compare the inputs with")
    add_db_argument(parser)
    parser.set_defaults(handler=run, render=render)


def run(args: argparse.Namespace) -> dict[str, Any]:
    return diagnose_run(args.db, args.run_id, args.against)


def render(payload: dict[str, Any]) -> str:
    lines = [f"diagnosis of run {payload['run_id']} ({payload['backend']} {payload['model']})"
             + (f" against {payload['against']}" if payload["against"] else "")]
    for number, step in enumerate(payload["steps"], 1):
        lines.append(f"\n{number}. {step['title']}")
        lines += [f"   found: {note}" for note in step["found"]]
        lines += [f"   could not check: {note}" for note in step["could_not_check"]]
    return "\n".join(lines)
