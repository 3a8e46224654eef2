"""The engine model's measured error per kind of transfer, as ``bench.prediction_accuracy --write`` stored it.

Every predicted figure carries the error of its kind of transfer: ``shape`` (the setup measured at other token
shapes), ``one_shape`` (a single sweep at one shape), ``gpu`` (the setup measured on other GPUs). The signed
quantiles (p10, p50, p90 of predicted / measured - 1) give the range a predicted cost is shown with.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

EXPECTED_ERROR_PATH = Path(__file__).with_name("data") / "expected_error.json"
CALIBRATIONS_PATH = Path(__file__).with_name("data") / "calibrations.json"


@cache
def expected_errors() -> dict[str, Any]:
    """The stored summary; empty where the harness was never run (predictions then say so)."""
    if not EXPECTED_ERROR_PATH.exists():
        return {}
    return json.loads(EXPECTED_ERROR_PATH.read_text(encoding="utf-8"))


@cache
def stored_calibrations() -> dict[str, Any]:
    """Each bundled setup's calibration on all its tables, keyed by group, with a fingerprint of what it was fitted
    to (a changed table or engine model makes it stale, and it is fitted afresh)."""
    if not CALIBRATIONS_PATH.exists():
        return {}
    return json.loads(CALIBRATIONS_PATH.read_text(encoding="utf-8"))


def expected_error(transfer: str) -> dict[str, dict[str, float]]:
    """Per metric: n, median_abs, p90_abs, max_abs, p10, p50, p90 of that transfer; {} if not measured."""
    return expected_errors().get("transfers", {}).get(transfer, {})
