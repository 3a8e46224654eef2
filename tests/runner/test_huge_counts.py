"""Counts too large for a store's 64-bit integer never reach it: a sweep counts such a usage as a bad response and
goes on, and a sweep asking for such a length is refused before it starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from infercost.errors import InputError
from infercost.runner.sweep import run_summary, run_sweep


def test_a_usage_over_a_64_bit_integer_is_a_bad_response_and_the_sweep_goes_on(scripted, sweep_config,
                                                                                 tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with scripted(ttft_ms=1, gap_us=200, fault="usage_overflow", fault_every=3) as url:
        run_id = run_sweep(sweep_config(url, levels=[2], requests=12, warmup=0), db_path=db)
    [level] = run_summary(db, run_id)["levels"]
    assert level["completed"] == 8 and level["failures"] == {"bad_response": 4}


@pytest.mark.parametrize("field", ["input_tokens", "output_tokens"])
def test_a_length_over_what_any_request_holds_is_refused(sweep_config, field: str) -> None:
    with pytest.raises(InputError, match=rf"^{field}: must be from 1 to 10,000,000"):
        sweep_config("http://127.0.0.1:9/v1", **{field: 2**70})
