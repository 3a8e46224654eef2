"""Small pieces every command shares: a plain-text table and the ``--db`` option."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from infercost.errors import InputError
from infercost.numbers import compact


def table(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Left-aligned text columns; numbers formatted compactly, None as a dash."""

    def cell(value: Any) -> str:
        if value is None:
            return "-"
        if isinstance(value, float):
            return compact(value)
        return str(value)

    cells = [[cell(row.get(column)) for column in columns] for row in rows]
    widths = [max([len(column), *(len(line[i]) for line in cells)]) for i, column in enumerate(columns)]
    lines = [
        "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True))
        for line in [list(columns), *cells]
    ]
    return "\n".join(line.rstrip() for line in lines)


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="PATH_OR_URL",
                        help="SQLite file, or postgresql://USER@HOST[:PORT]/DB for a shared store (password from "
                             "PGPASSWORD or ~/.pgpass) (default: $INFERCOST_DB, else $INFERCOST_HOME/infercost.db)")


MAX_SECONDS = 7 * 86_400.0  # a week: longer than any level or request a person means to wait for


def positive_number(text: str, field: str, what: str, *, high: float = math.inf) -> float:
    """A finite number above 0 (and at most ``high``), or an InputError naming the field."""
    try:
        value = float(text)
    except ValueError:
        raise InputError(field, f"{what} must be a number (got {text!r})") from None
    if not (0 < value <= high):
        limit = f" and at most {high:g}" if math.isfinite(high) else " and finite"
        raise InputError(field, f"{what} must be above 0{limit} (got {text!r})")
    return value


def seconds(text: str) -> float:
    """argparse type for durations and timeouts: ``inf`` or ``nan`` would never end."""
    try:
        return positive_number(text, "seconds", "a time in seconds", high=MAX_SECONDS)
    except InputError as error:
        raise argparse.ArgumentTypeError(error.reason) from None
