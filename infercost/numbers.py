"""Numbers as a person reads them in a terminal: the CLI's tables and the batch progress bar write them one way."""

from __future__ import annotations

import math


def compact(value: float) -> str:
    """Four significant digits and never an exponent: a person reads 63,950 and 0.00004421, not 6.395e+04."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    text = f"{value:,.{max(3 - math.floor(math.log10(abs(value))), 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
