"""``scenarios``: saved what-if scenarios (named workload profiles) in the store (SQLite or PostgreSQL)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infercost.commands.common import add_db_argument, table
from infercost.errors import InputError
from infercost.files import read_document_or_stdin
from infercost.profile import parse_profile
from infercost.scenarios import scenario_file
from infercost.store import (
    Store,
    connect,
    delete_scenario,
    duplicate_scenario,
    get_scenario,
    list_scenarios,
    rename_scenario,
    save_scenario,
)


@dataclass(frozen=True)
class Action:
    run: Callable[..., Any]  # (db, *arguments, args) -> payload
    params: tuple[str, ...]
    help: str


def read_profile_document(path: str) -> dict[str, Any]:
    """A profile file (JSON or YAML; ``-`` is stdin) as written, checked so it can be estimated."""
    document = read_document_or_stdin(path)
    parse_profile(document, name=path)
    return document


def write_text(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise InputError("output", f"cannot write {path}: {error.strerror}") from None


def _list(db: Store, args: argparse.Namespace) -> dict[str, Any]:
    return {"scenarios": list_scenarios(db)}


def _show(db: Store, name: str, args: argparse.Namespace) -> dict[str, Any]:
    return get_scenario(db, name)


def _save(db: Store, name: str, profile_path: str, args: argparse.Namespace) -> dict[str, Any]:
    """Estimated before it is saved: a saved scenario is one ``estimate`` and ``report`` accept as it is."""
    from infercost.estimate import estimate, run_loader

    document = read_profile_document(profile_path)
    estimate(parse_profile(document, name=profile_path), load_run=run_loader(args.db))
    return save_scenario(db, name, document, notes=args.notes)


def _duplicate(db: Store, name: str, new_name: str, args: argparse.Namespace) -> dict[str, Any]:
    return duplicate_scenario(db, name, new_name)


def _rename(db: Store, name: str, new_name: str, args: argparse.Namespace) -> dict[str, Any]:
    return rename_scenario(db, name, new_name)


def _delete(db: Store, name: str, args: argparse.Namespace) -> dict[str, Any]:
    delete_scenario(db, name)
    return {"deleted": name}


def _export(db: Store, name: str, args: argparse.Namespace) -> dict[str, Any]:
    """The scenario's profile: printed (a file ``estimate`` reads), or written to ``--output``."""
    profile = get_scenario(db, name)["profile"]
    if not args.output:
        return profile
    write_text(args.output, scenario_file(profile))
    return {"exported": name, "path": args.output}


ACTIONS = {
    "list": Action(_list, (), "list saved scenarios"),
    "show": Action(_show, ("NAME",), "show one scenario and its profile"),
    "save": Action(_save, ("NAME", "PROFILE"), "save a profile file under a name (replacing one of that name)"),
    "duplicate": Action(_duplicate, ("NAME", "NEW"), "copy a scenario under a new name"),
    "rename": Action(_rename, ("NAME", "NEW"), "rename a scenario"),
    "delete": Action(_delete, ("NAME",), "delete a scenario"),
    "export": Action(_export, ("NAME",), "print the scenario as a profile file (or write it with -o)"),
}


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    usage = "; ".join(f"{name} {' '.join(a.params)}".strip() + f": {a.help}" for name, a in ACTIONS.items())
    parser = subparsers.add_parser(
        "scenarios",
        parents=[common],
        help="save, list, copy, rename, delete and export what-if scenarios",
        description=f"Saved what-if scenarios. Actions: {usage}. "
        "Example: python -m infercost scenarios save base profile.json && python -m infercost scenarios list",
    )
    parser.add_argument("action", nargs="?", default="list", choices=list(ACTIONS), help="what to do (default list)")
    parser.add_argument("arguments", nargs="*", metavar="ARG", help="NAME, PROFILE or NEW, as the action needs")
    parser.add_argument("--notes", help="with save: a note kept with the scenario")
    parser.add_argument("-o", "--output", metavar="FILE", help="with export: write the profile file here")
    add_db_argument(parser)
    parser.set_defaults(handler=run, render=render)


def run(args: argparse.Namespace) -> Any:
    action = ACTIONS[args.action]
    if len(args.arguments) != len(action.params):
        wanted = " ".join(action.params) or "no arguments"
        raise InputError(f"scenarios {args.action}", f"takes {wanted} (got {len(args.arguments)} arguments)")
    if args.output and args.action != "export":
        raise InputError("--output", "only export writes a file")
    with closing(connect(args.db)) as db:
        return action.run(db, *args.arguments, args)


def render(payload: dict[str, Any]) -> str:
    """The human view follows the payload's shape: a list, a deletion, an export, or one scenario."""
    if "scenarios" in payload:
        rows = [{**s, "calls_per_day": s["profile"].get("calls_per_day")} for s in payload["scenarios"]]
        return table(rows, ("name", "calls_per_day", "updated_at", "notes")) if rows else "No saved scenarios."
    if "deleted" in payload:
        return f"deleted scenario {payload['deleted']!r}"
    if "exported" in payload:
        return f"wrote scenario {payload['exported']!r} to {payload['path']}"
    if "profile" in payload and "updated_at" in payload:
        header = f"Scenario {payload['name']!r} (updated {payload['updated_at']})"
        notes = [payload["notes"]] if payload["notes"] else []
        return "\n".join([header, *notes, json.dumps(payload["profile"], indent=2, ensure_ascii=False)])
    return scenario_file(payload).rstrip("\n")
