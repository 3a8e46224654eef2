"""Where a model stands in its provider's lifecycle: current, retiring within 30 days, or retired.

Retired models stay in the catalog so that old scenarios still price; every view marks them and names the
provider's successor where one is known.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from infercost.pricing.schema import ApiPrice

RETIRING_WITHIN_DAYS = 30
Status = Literal["current", "retiring", "retired"]


def lifecycle(entry: ApiPrice, *, today: dt.date) -> Status:
    """``retired`` from the deprecation date on; ``retiring`` in the 30 days before it."""
    if entry.deprecation_date is None:
        return "current"
    days_left = (entry.deprecation_date - today).days
    if days_left <= 0:
        return "retired"
    return "retiring" if days_left <= RETIRING_WITHIN_DAYS else "current"


def lifecycle_note(entry: ApiPrice, *, today: dt.date) -> str:
    """One line for a flagged model (empty for a current one): when, and what to use instead."""
    status = lifecycle(entry, today=today)
    if status == "current":
        return ""
    when = f"retired {entry.deprecation_date}" if status == "retired" else f"retires {entry.deprecation_date}"
    if status == "retiring":
        when += f" (in {(entry.deprecation_date - today).days} days)"  # type: ignore[operator]
    return when + (f"; successor: {entry.successor}" if entry.successor else "; no successor named")
