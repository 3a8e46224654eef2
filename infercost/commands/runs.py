"""``runs``: stored benchmark runs; show one; import result files of other tools as runs.

Example: python -m infercost runs --json
         python -m infercost runs show RUN_ID --json
         python -m infercost runs import result.json --format vllm
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from infercost import store
from infercost.commands.bench import render as render_summary
from infercost.commands.common import add_db_argument, table
from infercost.runner.importers import IMPORTERS, import_file
from infercost.runner.sweep import run_summary

LIST_COLUMNS = ("id", "created_at", "status", "source", "backend", "model", "levels_done", "levels_total", "requests")


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("runs", parents=[common], help="list, show and import benchmark runs",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_db_argument(parser)
    parser.set_defaults(handler=list_runs, render=render_list)
    actions = parser.add_subparsers(dest="action")
    show = actions.add_parser("show", parents=[common], help="one run: its per-level summaries")
    show.add_argument("run_id")
    add_db_argument(show)
    show.set_defaults(handler=show_run, render=render_summary)
    imp = actions.add_parser("import", parents=[common], help="store a vLLM, GuideLLM or AIPerf result file as a run")
    imp.add_argument("file")
    imp.add_argument("--format", required=True, choices=sorted(IMPORTERS))
    add_db_argument(imp)
    imp.set_defaults(handler=import_run, render=render_summary)


def list_runs(args: argparse.Namespace) -> list[dict[str, Any]]:
    db = store.connect(args.db)
    try:
        return [{key: run[key] for key in LIST_COLUMNS} for run in store.list_runs(db)]
    finally:
        db.close()


def render_list(payload: list[dict[str, Any]]) -> str:
    return table(payload, LIST_COLUMNS) if payload else "no stored runs"


def show_run(args: argparse.Namespace) -> dict[str, Any]:
    """The run as stored (already scrubbed of credential shapes), and of the key its variable holds now: a row
    stored before scrubbing existed may hold it in another shape."""
    summary = run_summary(args.db, args.run_id)
    db = store.connect(args.db)
    try:
        run = store.get_run(db, args.run_id)
    finally:
        db.close()
    shown = {**summary, "created_at": run["created_at"], "source": run["source"], "config": run["config"],
             "hardware": run["hardware"], "engine": run["engine"]}
    return store.scrub(shown, _key_in_use(run["config"]))


def _key_in_use(config: Any) -> list[str]:
    options = config.get("options") if isinstance(config, dict) else None
    name = options.get("api_key_env") if isinstance(options, dict) else None
    value = os.environ.get(name) if isinstance(name, str) and name else None
    return [value] if value else []


def import_run(args: argparse.Namespace) -> dict[str, Any]:
    run_id = import_file(args.file, args.format, db_path=args.db)
    return run_summary(args.db, run_id)
