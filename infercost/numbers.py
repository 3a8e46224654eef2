"""Numbers as a person reads them: the CLI's tables, the batch progress bar, the app's tables and the reports write
them one way."""

from __future__ import annotations

import math


def compact(value: float) -> str:
    """Four significant digits and never an exponent: a person reads 63,950 and 0.00004421, not 6.395e+04."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    text = f"{value:,.{max(3 - math.floor(math.log10(abs(value))), 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


MONEY_WORDS = ("cost", "price", "usd", "bill")  # a column named with one of these holds US dollars


def is_money(column: str) -> bool:
    return any(word in column.lower() for word in MONEY_WORDS)


def money(value: float | None) -> str:
    """"$1,234.50", "-$0.50" (the sign before the dollar), "$0.0042" and "$0.000054" for fractions of a cent (two
    significant digits, never an exponent)."""
    if value is None or not math.isfinite(value):
        return "–"
    sign, size = ("-" if value < 0 else ""), abs(value)
    size = size if size >= 0.01 else float(f"{size:.2g}")  # 0.009999 is $0.01
    if size >= 0.01 or size == 0:
        return f"{sign}${size:,.2f}"
    return f"{sign}${size:.{1 - math.floor(math.log10(size))}f}"


def carried(value: float) -> float | int:
    """A float without the noise of binary arithmetic (90.78890625000003 -> 90.78890625, 250000.0 -> 250000): twelve
    significant digits, far past what any estimate carries, for files a program reads back."""
    if not math.isfinite(value):
        return value
    if value.is_integer() and abs(value) < 1e15:
        return int(value)
    return float(f"{value:.12g}")


def count_of(count: int, noun: str) -> str:
    """"1 replica", "3 replicas": a count with its noun, never "replica(s)"."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")
