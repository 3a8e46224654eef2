"""``report``: estimate profiles (files or saved scenarios) and render a report with every figure's basis."""

from __future__ import annotations

import argparse
from contextlib import closing
from pathlib import Path
from typing import Any

from infercost.commands.common import add_db_argument
from infercost.commands.scenarios import read_profile_document, write_text
from infercost.errors import InputError
from infercost.profile import unique_name
from infercost.report import FORMATS, render_report
from infercost.store import connect, get_scenario


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "report",
        parents=[common],
        help="a Markdown, HTML, CSV or JSON report of estimates, with the basis of every figure",
        description="Estimate each profile and render one report (several profiles or scenarios: a comparison). "
        "Example: python -m infercost report profile.json --format html -o report.html",
    )
    parser.add_argument("profiles", nargs="*", metavar="PROFILE", help="workload profile files (- reads stdin)")
    parser.add_argument("--scenario", action="append", default=[], metavar="NAME", help="a saved scenario (repeat)")
    parser.add_argument("--format", default="markdown", choices=list(FORMATS), help="report format (default markdown)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report here instead of stdout")
    parser.add_argument("--prices", metavar="FILE", help="your own API prices, overriding the catalog")
    add_db_argument(parser)
    parser.set_defaults(handler=run, render=render)


def gather_profiles(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Name → profile document, from the files (named by their profile's name or file name) and saved scenarios."""
    if not args.profiles and not args.scenario:
        raise InputError("PROFILE", "give a profile file or --scenario NAME")
    profiles: dict[str, dict[str, Any]] = {}
    for path in args.profiles:
        document = read_profile_document(path)
        profiles[unique_name(str(document.get("name") or Path(path).stem), profiles)] = document
    if args.scenario:
        with closing(connect(args.db)) as db:
            for name in args.scenario:
                profiles[unique_name(name, profiles)] = get_scenario(db, name)["profile"]
    return profiles


def run(args: argparse.Namespace) -> dict[str, Any]:
    from infercost.band import with_bands
    from infercost.estimate import estimate, load_catalog, run_loader
    from infercost.profile import parse_profile

    catalog, load_run = load_catalog(args.prices), run_loader(args.db)
    profiles = {name: parse_profile(document) for name, document in gather_profiles(args).items()}
    estimates = {  # each option with its bill band, as estimate --json gives it
        name: with_bands(estimate(profile, catalog=catalog, load_run=load_run), profile, catalog, load_run)
        for name, profile in profiles.items()
    }
    text = render_report(estimates, args.format)
    payload: dict[str, Any] = {"format": args.format, "scenarios": list(estimates), "path": args.output}
    if args.output:
        write_text(args.output, text)
    else:
        payload["report"] = text
    return payload


def render(payload: dict[str, Any]) -> str:
    if payload["path"]:
        return f"wrote {payload['format']} report of {', '.join(payload['scenarios'])} to {payload['path']}"
    return payload["report"].rstrip("\n")
