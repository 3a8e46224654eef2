"""Small pieces every command shares: a plain-text table and the ``--db`` option."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def table(rows: Iterable[Mapping[str, Any]], columns: Sequence[str], *, floats: str = "{:,.4g}") -> str:
    """Left-aligned text columns; numbers formatted compactly, None as a dash."""

    def cell(value: Any) -> str:
        if value is None:
            return "-"
        if isinstance(value, float):
            return floats.format(value)
        return str(value)

    cells = [[cell(row.get(column)) for column in columns] for row in rows]
    widths = [max([len(column), *(len(line[i]) for line in cells)]) for i, column in enumerate(columns)]
    lines = [
        "  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True))
        for line in [list(columns), *cells]
    ]
    return "\n".join(line.rstrip() for line in lines)


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="PATH", help="SQLite file (default: $INFERCOST_HOME/infercost.db)")
