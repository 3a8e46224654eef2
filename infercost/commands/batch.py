"""``batch``: a checkpointed batch job over an OpenAI batch file: budget before, outputs per shard, budget versus
actual after. Every record's outcome is committed as it completes: after any stop (``kill -9`` included) ``resume``
sends only what is not done.

Example: python -m infercost batch run requests.jsonl --base-url http://127.0.0.1:8000/v1 --model NAME \\
             --out results --price gpt-4o-mini --max-cost 5 --json
         python -m infercost batch run reviews.csv --field text --template "Classify: {text}" --max-tokens 8 ...
         python -m infercost batch run requests.jsonl ... --budget-only      # the budget, nothing sent
         python -m infercost batch run requests.jsonl ... --sample 50        # output tokens from 50 records
         python -m infercost batch run requests.jsonl --backend transformers --model random:tiny-llama \\
             --executor ray --actors 2 --out results                       # the model in 2 Ray actors
         python -m infercost batch resume JOB_ID
         python -m infercost batch status JOB_ID --json
         python -m infercost batch list
         python -m infercost batch retry-failed JOB_ID
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from infercost import batch
from infercost.batch.progress import render_bar
from infercost.commands.common import add_db_argument, table

COMPARE_COLUMNS = ("line", "budget", "actual", "difference", "difference_pct", "why")
LIST_COLUMNS = ("job_id", "created_at", "status", "input", "records", "ok", "failed", "pending", "budget_cost",
                "actual_cost")


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("batch", parents=[common], help="checkpointed batch jobs with a budget",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(dest="action", required=True)
    run = actions.add_parser("run", parents=[common], help="plan the budget, then send every record")
    _run_arguments(run)
    run.set_defaults(handler=run_command, render=render_job)
    for name, handler, text in (("resume", resume_command, "continue a stopped or killed job"),
                                ("retry-failed", retry_command, "send the failed records again (.retry-N files)"),
                                ("status", status_command, "a job's state, files and budget versus actual")):
        sub = actions.add_parser(name, parents=[common], help=text)
        sub.add_argument("job_id")
        if name != "status":
            sub.add_argument("--max-cost", type=float, metavar="USD", help="a new cost cap for what is left")
        add_db_argument(sub)
        sub.set_defaults(handler=handler, render=render_job)
    listing = actions.add_parser("list", parents=[common], help="stored batch jobs")
    add_db_argument(listing)
    listing.set_defaults(handler=list_command, render=lambda jobs: table(jobs, LIST_COLUMNS) if jobs else "no jobs")


def _run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("input", help="OpenAI batch JSONL, or JSONL/CSV/Parquet/TXT records with --field")
    run.add_argument("--base-url", help="the server, e.g. http://127.0.0.1:8000/v1 (required with --backend http)")
    run.add_argument("--model", required=True, help="the model name on that server (replaces each body's model); "
                                                    "with --backend transformers, the model to load")
    run.add_argument("--out", required=True, metavar="DIR", help="output files go to DIR/JOB_ID/")
    run.add_argument("--shard-size", type=int, default=1000, metavar="N")
    run.add_argument("--concurrency", type=int, default=16, metavar="C")
    run.add_argument("--max-cost", type=float, metavar="USD", help="stop before the spend could pass this")
    run.add_argument("--price", metavar="MODEL_ID", help="price tokens as this catalog model")
    run.add_argument("--throughput", metavar="RUN_ID", help="price GPU time at this run's or profile's throughput")
    run.add_argument("--gpu-price", type=float, metavar="USD_PER_H", help="per GPU-hour, with --throughput")
    run.add_argument("--tokenizer", help="count prompts with this tokenizer (default: the priced model's)")
    run.add_argument("--field", help="plain records: the field holding each record's text")
    run.add_argument("--template", default="{text}", help="plain records: the user message, with {text}")
    run.add_argument("--max-tokens", type=int, metavar="N", help="output cap for records that set none")
    run.add_argument("--retry-rate", type=float, default=0.0, help="expected share of attempts that fail (budget)")
    run.add_argument("--max-attempts", type=int, default=3, help="attempts per record, retries after the main pass")
    run.add_argument("--timeout", type=float, default=60.0, metavar="S", help="no byte for S seconds: a hang")
    run.add_argument("--executor", choices=batch.EXECUTORS, default="local")
    run.add_argument("--address", help="with --executor ray: the cluster (default: a local Ray instance)")
    run.add_argument("--backend", choices=batch.BACKENDS, default="http",
                     help="http: send to --base-url; transformers: run --model in-process (in Ray "
                          "actors with --executor ray)")
    run.add_argument("--actors", type=int, default=1, metavar="N",
                     help="with --backend transformers: Ray actors, each loading the model once")
    run.add_argument("--gpus", action="store_true", help="with --backend transformers: one GPU per actor")
    run.add_argument("--sample", type=int, metavar="N", help="send the first N records, then budget output tokens "
                                                             "and retries from them instead of from max_tokens")
    run.add_argument("--budget-only", action="store_true", help="create the job and show its budget; send nothing")
    add_db_argument(run)


def _progress(args: argparse.Namespace):
    def show(snapshot: dict) -> None:
        sys.stderr.write("\r" + render_bar(snapshot))
        sys.stderr.flush()

    return show


def run_command(args: argparse.Namespace) -> dict[str, Any]:
    config = batch.JobConfig(
        base_url=args.base_url, model=args.model, out_dir=args.out, shard_size=args.shard_size,
        concurrency=args.concurrency, max_attempts=args.max_attempts, read_timeout_s=args.timeout,
        max_cost=args.max_cost, field=args.field, template=args.template, max_tokens=args.max_tokens,
        executor=args.executor, address=args.address, backend=args.backend, actors=args.actors, gpus=args.gpus)
    created = batch.create_job(args.input, config, db_path=args.db, price=args.price, throughput=args.throughput,
                               gpu_price=args.gpu_price, tokenizer=args.tokenizer, retry_rate=args.retry_rate)
    print(render_budget(created["budget"], created["job_id"]), file=sys.stderr)
    if args.sample:
        sampled = batch.sample_budget(created["job_id"], args.sample, db_path=args.db, progress=_progress(args))
        print("\n" + render_budget(sampled, created["job_id"]), file=sys.stderr)
    if args.budget_only:
        return batch.job_status(created["job_id"], db_path=args.db)
    return _finished(lambda: batch.run_job(created["job_id"], db_path=args.db, progress=_progress(args)))


def resume_command(args: argparse.Namespace) -> dict[str, Any]:
    return _finished(lambda: batch.run_job(args.job_id, db_path=args.db, progress=_progress(args),
                                           max_cost=args.max_cost))


def retry_command(args: argparse.Namespace) -> dict[str, Any]:
    return _finished(lambda: batch.retry_failed(args.job_id, db_path=args.db, progress=_progress(args),
                                                max_cost=args.max_cost))


def status_command(args: argparse.Namespace) -> dict[str, Any]:
    return batch.job_status(args.job_id, db_path=args.db)


def list_command(args: argparse.Namespace) -> list[dict[str, Any]]:
    return batch.list_jobs(db_path=args.db)


def _finished(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run the job; the progress bar's line ends however it stops, so an error is a line of its own."""
    try:
        return run()
    finally:
        sys.stderr.write("\n")


def render_budget(budget: dict[str, Any], job_id: str) -> str:
    cost = "-" if budget["cost"] is None else f"${budget['cost']:,.4f}"
    lines = [f"job {job_id}: budget before sending",
             f"  records        {budget['records']:,}",
             f"  input tokens   {budget['input_tokens']:,} ({budget['tokenizer']}, {budget['fidelity']})",
             f"  output tokens  {budget['output_tokens']:,.0f} ({budget['output_basis']})",
             f"  retries        {budget['retries']:,.0f} (retry rate {budget['retry_rate']:.0%})",
             f"  cost           {cost} ({budget['pricing']['basis']})"]
    if budget.get("duration_s"):
        lines.append(f"  duration       {budget['duration_s']:,.0f} s")
    lines += [f"  warning: {warning}" for warning in budget.get("warnings", [])]
    return "\n".join(lines)


def render_job(status: dict[str, Any]) -> str:
    counts = status["counts"]
    lines = [f"job {status['job_id']}: {status['status']}  ({counts['ok']:,} ok, {counts['failed']:,} failed, "
             f"{counts['pending']:,} pending of {counts['records']:,})",
             f"outputs: {status['out_dir']} ({status['shards_written']}/{status['shards_total']} shards written)"]
    if status["budget_vs_actual"]:
        lines += ["", table(status["budget_vs_actual"], COMPARE_COLUMNS)]
        lines += [f"warning: {warning}" for warning in (status["actual"] or {}).get("warnings", [])]
    else:
        lines += ["", render_budget(status["budget"], status["job_id"])]
    return "\n".join(lines)
