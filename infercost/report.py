"""An estimate, or several side by side, as a report a team can file: CSV, JSON, Markdown or a self-contained HTML page.

Every figure comes with its basis: the tokenizer and its fidelity, the price's source and date, the self-host basis
(measured, fitted, published or roofline) with the run id and hardware, the profile's inputs and the warnings. Nothing
from the environment goes in, and keys that look like credentials are redacted, so a report is safe to share.
"""

from __future__ import annotations

import csv
import datetime as dt
import html
import io
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from infercost import __version__
from infercost.errors import InputError
from infercost.estimate import cost_range_phrase, cost_range_text
from infercost.numbers import carried, is_money, money
from infercost.scenarios import COMPARISON_COLUMNS, comparison_records

Estimates = Mapping[str, Mapping[str, Any]]

SECRET_KEY = re.compile(r"api[_-]?key|secret|password|passwd|authorization|bearer|credential|access[_-]?token", re.I)
SECRET_VALUE = re.compile(r"\b(?:sk-|sk_|hf_|gsk_|xai-|AIza)[A-Za-z0-9_\-]{16,}")
REDACTED = "[redacted]"

INPUT_FIELDS = (
    "calls_per_day", "prompt_tokens", "prompt_chars", "language", "output_tokens", "reasoning_tokens", "retry_rate",
    "max_retries", "truncation_rate", "cached_prompt_fraction", "cache_write_fraction", "batch", "days_per_month",
)  # fmt: skip
API_COLUMNS = (
    "model", "provider", "tokenizer", "fidelity", "prompt_tokens", "prompt_token_basis", "input_tokens_per_day",
    "output_tokens_per_day", "cost_per_day", "cost_per_month", "cost_per_month_p10_p90", "cost_per_call",
    "cost_per_million_tokens", "price_source", "price_as_of",
)  # fmt: skip
SELF_HOST_COLUMNS = (
    "name", "gpu", "mode", "basis", "basis_note", "run_id", "hardware", "throughput_source", "meets_slo", "replicas",
    "gpu_hours_per_day", "cost_per_day", "cost_per_month", "cost_per_month_p10_p90", "error_transfer",
    "cost_per_million_tokens",
)  # fmt: skip
SAME_WEIGHTS_COLUMNS = (
    "model", "provider", "match", "cost_per_month", "cost_per_million_tokens", "price_as_of", "self_hosting",
)  # fmt: skip
COMPARISON_SHOWN = (
    "scenario", "kind", "option", "cost_per_month", "cost_per_month_p10_p90", "cost_per_call",
    "cost_per_million_tokens", "fidelity", "basis",
)  # fmt: skip
HOW_TO_READ = (
    "Money is in US dollars. Tokenizer fidelity: exact is the model's own tokenizer, proxy a public tokenizer standing "
    "in for a private one, heuristic an estimate from characters. Self-host basis: measured (operating points "
    "measured on the named hardware), fitted (the engine model calibrated on measurements, at another token shape), "
    "published (a vendor's or a third party's table, not measured here), roofline (the engine model calibrated on "
    "the nearest measured setup, moved to this hardware). A predicted cost comes with its P10–P90 range: the cost if "
    "the prediction erred as the p10 and p90 of the error measured for its kind of transfer (error_transfer); it reads "
    "'unknown: no error measured' where that kind of transfer has no measured error, and 'SLO not met' where no "
    "operating point meets the SLO (the setup then has no cost). "
    "Every attempt, retry and truncated call is billed in full. An API model's P10–P90 is its bill band's: a Monte "
    "Carlo of the month that draws each day's calls, each call's retries and answer length, and, where the prompt "
    "was counted with a proxy tokenizer, that tokenizer's error (the Bill band section says what each option drew)."
)
BAND_COLUMNS = ("option", "p10_per_month", "p50_per_month", "p90_per_month", "p99_per_month", "varied", "drawn")
CSV_BAND_COLUMNS = tuple(f"band_{q}_per_month" for q in ("p10", "p50", "p90", "p99"))


def redact(value: Any) -> Any:
    """The document without credentials: a string under a key named like one (``api_key``, ``password``), and any
    string shaped like a known key. Only the secret string goes; a scenario named "password reset bot" keeps its
    estimate, and numbers and tables under such a name are not secrets."""
    if isinstance(value, Mapping):
        return {redact(k): REDACTED if _credential(k, v) else redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    if isinstance(value, str):
        return SECRET_VALUE.sub(REDACTED, value)
    return value


def _credential(key: Any, value: Any) -> bool:
    return isinstance(value, str) and bool(value) and bool(SECRET_KEY.search(str(key)))


def as_scenarios(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """One estimate document (it has a ``profile``) becomes a comparison of one, named after its profile."""
    if "profile" in document and "api" in document:
        return {str(document["profile"].get("name") or "workload"): document}
    return dict(document)


# --- the report as blocks, rendered by Markdown and HTML alike ---------------------------------------------------


@dataclass(frozen=True)
class Block:
    kind: str  # "h1" | "h2" | "h3" | "p" | "table" | "list"
    text: str = ""
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    items: tuple[str, ...] = ()


def _table(columns: tuple[str, ...], records: list[Mapping[str, Any]]) -> Block:
    return Block("table", columns=columns, rows=tuple(tuple(r.get(c) for c in columns) for r in records))


def _setup_summary(setup: Mapping[str, Any]) -> str:
    """A self-host setup's inputs on one line; the throughput says where its points come from."""
    parts = []
    for key, value in setup.items():
        if key == "throughput" and isinstance(value, Mapping):
            given = {k: v for k, v in value.items() if v is not None}
            points = given.pop("points", None)
            value = {**given, **({"points": f"{len(points)} given"} if points else {})}
        if value not in (None, "", [], {}):
            shown = json.dumps(value, separators=(",", ":"), default=str) if isinstance(value, Mapping) else value
            parts.append(f"{key}={shown}")
    return ", ".join(str(part) for part in parts)


def _inputs(profile: Mapping[str, Any]) -> Block:
    rows = [(field, profile[field]) for field in INPUT_FIELDS if profile.get(field) is not None]
    if profile.get("prompt_samples"):
        rows.append(("prompt_samples", f"{len(profile['prompt_samples'])} texts"))
    rows.append(("api_models", ", ".join(profile.get("api_models") or []) or "(all models the prices name)"))
    rows += [("price override", _setup_summary(entry)) for entry in profile.get("prices") or []]
    rows += [("self-host setup", _setup_summary(setup)) for setup in profile.get("self_host") or []]
    return Block("table", columns=("input", "value"), rows=tuple(rows))


def _warnings(estimate: Mapping[str, Any]) -> Block:
    notes = [
        f"{row.get('model') or row.get('name')}: {warning}"
        for row in [*estimate.get("api", []), *estimate.get("self_host", [])]
        for warning in row.get("warnings", [])
    ]
    return Block("list", items=tuple(notes)) if notes else Block("p", "No warnings.")


def _scenario_blocks(name: str, estimate: Mapping[str, Any]) -> list[Block]:
    blocks = [Block("h2", f"Scenario: {name}"), Block("h3", "Inputs"), _inputs(estimate["profile"])]
    if estimate.get("api"):
        rows = [{**row, "cost_per_month_p10_p90": cost_range_text(row)} for row in estimate["api"]]
        blocks += [Block("h3", "API models"), _table(API_COLUMNS, rows)]
    if estimate.get("self_host"):
        rows = [{**row, "cost_per_month_p10_p90": cost_range_text(row)} for row in estimate["self_host"]]
        blocks += [Block("h3", "Self-hosted"), _table(SELF_HOST_COLUMNS, rows)]
    return [*blocks, *_band_blocks(estimate), *_same_weights_blocks(estimate), Block("h3", "Warnings"),
            _warnings(estimate)]


def _same_weights_blocks(estimate: Mapping[str, Any]) -> list[Block]:
    """Per self-host setup, every API offer of the weights it serves at this workload, and where self-hosting costs
    no more than each: the like-for-like half of the comparison."""
    from infercost.costmodel.breakeven import describe_regions

    blocks = []
    for row in estimate.get("self_host", []):
        if not row.get("same_weights"):
            continue
        cost = "meets no SLO" if row.get("cost_per_month") is None else f"${row['cost_per_month']:,.0f}/month"
        records = [{**offer, "self_hosting": describe_regions([tuple(r) for r in offer["break_even"]])}
                   for offer in row["same_weights"]]  # fmt: skip
        blocks += [Block("h3", f"Same weights as {row['name']}"),
                   Block("p", f"{row['name']} self-hosts {row['model']}: {cost}"
                              + cost_range_phrase(cost_range_text(row))
                              + ". Every API offer of those weights (match: exact, or same_architecture for another "
                                "checkpoint of its shapes), and the calls/day where self-hosting costs no more:"),
                   _table(SAME_WEIGHTS_COLUMNS, records)]  # fmt: skip
    return blocks


def _band_rows(estimate: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each option's monthly bill band (``infercost.band``), where the estimate carries one."""
    rows = [(row.get("model") or row.get("name"), row.get("band")) for row in [*estimate.get("api", []),
                                                                               *estimate.get("self_host", [])]]
    return [{"option": option, **{f"{q}_per_month": float(round(band[q])) for q in ("p10", "p50", "p90", "p99")},
             "varied": band["varied"], "drawn": "; ".join(band.get("drawn") or [])}
            for option, band in rows if band]  # fmt: skip


def _band_blocks(estimate: Mapping[str, Any]) -> list[Block]:
    rows = _band_rows(estimate)
    if not rows and not estimate.get("band_note"):
        return []
    blocks = [Block("h3", "Bill band (US$ per month, Monte Carlo)")]
    blocks += [Block("p", estimate["band_note"])] if estimate.get("band_note") else []
    return [*blocks, _table(BAND_COLUMNS, rows)] if rows else blocks


def report_blocks(estimates: Estimates, generated_at: str) -> list[Block]:
    blocks = [
        Block("h1", "infercost report"),
        Block("p", f"Generated {generated_at} by infercost {__version__}."),
    ]
    if len(estimates) > 1:
        blocks += [Block("h2", "Comparison"), _table(COMPARISON_SHOWN, comparison_records(estimates))]
    for name, estimate in estimates.items():
        blocks += _scenario_blocks(name, estimate)
    return [*blocks, Block("h2", "How to read this report"), Block("p", HOW_TO_READ)]


def cell_text(value: Any, column: str = "") -> str:
    """A cell as a person reads it: dollars in a money column ("$0.00036" a call), counts and other figures to
    what they carry (whole from 100 up, two decimals from 1, six significant digits below)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float) and is_money(column):
        return money(value)
    if isinstance(value, float) and (abs(value) >= 100 or value.is_integer()) and abs(value) < 1e15:
        return f"{value:,.0f}"
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.6g}"
    if isinstance(value, list | tuple):
        return ", ".join(cell_text(item, column) for item in value)
    if isinstance(value, Mapping):
        return json.dumps(value, separators=(",", ":"), default=str)
    return str(value)


# --- Markdown -----------------------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*|<>\[\]])")


def md_escape(text: str) -> str:
    """Text that Markdown shows as it is: no table breaks, no raw HTML, no emphasis or links from data."""
    return _MD_SPECIAL.sub(r"\\\1", text).replace("\r", " ").replace("\n", " ")


def _markdown_block(block: Block) -> str:
    if block.kind in ("h1", "h2", "h3"):
        return f"{'#' * int(block.kind[1])} {md_escape(block.text)}"
    if block.kind == "p":
        return md_escape(block.text)
    if block.kind == "list":
        return "\n".join(f"- {md_escape(item)}" for item in block.items)
    lines = [
        "| " + " | ".join(md_escape(column) for column in block.columns) + " |",
        "|" + "---|" * len(block.columns),
        *("| " + " | ".join(md_escape(cell_text(cell, column)) for cell, column in zip(row, block.columns, strict=True))
          + " |" for row in block.rows),
    ]
    return "\n".join(lines)


def markdown_report(estimates: Estimates, generated_at: str) -> str:
    return "\n\n".join(_markdown_block(block) for block in report_blocks(estimates, generated_at)) + "\n"


# --- HTML ---------------------------------------------------------------------------------------------------------

# The page fits its window: long ids and notes wrap inside their cells, and a table still wider than the window
# scrolls in its own box (a 16-column table made the whole page 2,506 px wide).
HTML_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; padding: 0 1rem; max-width: 90rem; color: #1b1b1b; }
.table { overflow-x: auto; margin: 0.5rem 0 1.5rem; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top;
         max-width: 22rem; overflow-wrap: anywhere; }
th { background: #f2f2f2; }
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'"  # no scripts, no fetches: the page is text and tables


def _html_cell(value: Any, column: str) -> str:
    """Escaped text; a source that is an http(s) address becomes a link."""
    text = cell_text(value, column)
    if isinstance(value, str) and value.startswith(("https://", "http://")):
        return f'<a href="{html.escape(value, quote=True)}">{html.escape(text)}</a>'
    return html.escape(text)


def _html_block(block: Block) -> str:
    if block.kind in ("h1", "h2", "h3", "p"):
        return f"<{block.kind}>{html.escape(block.text)}</{block.kind}>"
    if block.kind == "list":
        return "<ul>" + "".join(f"<li>{html.escape(item)}</li>" for item in block.items) + "</ul>"
    head = "".join(f"<th>{html.escape(column)}</th>" for column in block.columns)
    body = "".join("<tr>" + "".join(f"<td>{_html_cell(cell, column)}</td>" for cell, column in
                                   zip(row, block.columns, strict=True)) + "</tr>" for row in block.rows)
    return f'<div class="table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def html_report(estimates: Estimates, generated_at: str) -> str:
    body = "\n".join(_html_block(block) for block in report_blocks(estimates, generated_at))
    title = html.escape("infercost report: " + ", ".join(estimates))
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        f"<title>{title}</title>\n<style>{HTML_STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


# --- CSV and JSON -------------------------------------------------------------------------------------------------

CSV_COLUMNS = [*COMPARISON_COLUMNS, *CSV_BAND_COLUMNS, *(f"input_{field}" for field in INPUT_FIELDS), "generated_at",
               "infercost_version"]  # fmt: skip
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_safe(value: Any) -> Any:
    """A spreadsheet must not run a model id such as ``=HYPERLINK(...)`` as a formula; a float is written without
    its binary noise (0.8999999999999999 -> 0.9)."""
    if isinstance(value, float):
        return carried(value)
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def comparison_rows(estimates: Estimates, generated_at: str) -> list[dict[str, Any]]:
    """One row per scenario × option with the basis of its figures, the scenario's inputs and the report's date."""
    rows = comparison_records(estimates)
    bands = {(name, band["option"]): band for name, estimate in estimates.items() for band in _band_rows(estimate)}
    for row in rows:
        profile = estimates[row["scenario"]]["profile"]
        band = bands.get((row["scenario"], row["option"]), {})
        row.update({column: band.get(column.removeprefix("band_")) for column in CSV_BAND_COLUMNS})
        row.update({f"input_{field}": profile.get(field) for field in INPUT_FIELDS})
        row.update({"generated_at": generated_at, "infercost_version": __version__})
    return rows


def csv_report(estimates: Estimates, generated_at: str) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _csv_safe(v) for k, v in row.items()} for row in comparison_rows(estimates, generated_at))
    return out.getvalue()


def json_report(estimates: Estimates, generated_at: str) -> str:
    document = {
        "generated_at": generated_at,
        "infercost_version": __version__,
        "scenarios": estimates,
        "comparison": comparison_rows(estimates, generated_at),
    }
    return json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"


FORMATS: dict[str, Callable[[Estimates, str], str]] = {
    "markdown": markdown_report,
    "html": html_report,
    "csv": csv_report,
    "json": json_report,
}
EXTENSIONS = {"markdown": "md", "html": "html", "csv": "csv", "json": "json"}
MEDIA_TYPES = {"markdown": "text/markdown", "html": "text/html", "csv": "text/csv", "json": "application/json"}


def render_report(
    document: Mapping[str, Any], fmt: str = "markdown", *, generated_at: dt.datetime | None = None
) -> str:
    """The report of one estimate document, or of ``{scenario name: estimate document}``, in ``fmt``."""
    if fmt not in FORMATS:
        raise InputError("format", f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")
    when = (generated_at or dt.datetime.now(dt.UTC)).isoformat(timespec="seconds")
    return FORMATS[fmt](redact(as_scenarios(document)), when)
