"""A running job's progress: records done, records per second, tokens and dollars spent, the projected total, ETA.

Snapshots go to a callback at most every ``INTERVAL_S`` (the CLI draws a bar on stderr; the app reads the store).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from infercost.batch.budget import projected_cost
from infercost.numbers import compact

INTERVAL_S = 0.25


class Progress:
    def __init__(self, budget: dict[str, Any], callback: Callable[[dict], None] | None) -> None:
        self.total = int(budget["records"])
        self.budget_cost = budget.get("cost")
        self.callback = callback
        self.last = 0.0

    def start(self, done: dict[str, Any]) -> None:
        self.ok, self.failed = int(done["ok"]), int(done["failed"])
        self.retries = 0
        self.input_tokens, self.output_tokens = int(done["input_tokens"]), int(done["output_tokens"])
        self.done_at_start = self.ok + self.failed
        self.t0 = time.perf_counter()
        self.spent = float(done["cost"])

    def attempt(self, outcome: dict, final: bool, cost: float) -> None:
        if outcome.get("state") == "ok":
            self.ok += 1
            self.input_tokens += outcome.get("n_in") or 0
            self.output_tokens += outcome.get("n_out") or 0
        elif final:
            self.failed += 1
        else:
            self.retries += 1  # this attempt failed and will be sent again

    def snapshot(self, spent: float) -> dict[str, Any]:
        done = self.ok + self.failed
        elapsed = time.perf_counter() - self.t0
        rate = (done - self.done_at_start) / elapsed if elapsed > 0 else 0.0
        return {"done": done, "total": self.total, "ok": self.ok, "failed": self.failed, "retries": self.retries,
                "records_per_s": rate, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "spent": spent, "projected_cost": projected_cost(spent, done, self.total, self.budget_cost),
                "eta_s": (self.total - done) / rate if rate > 0 else None}

    def tick(self, spent: float, *, force: bool = False) -> None:
        now = time.perf_counter()
        self.spent = spent
        if self.callback and (force or now - self.last >= INTERVAL_S):
            self.last = now
            self.callback(self.snapshot(spent))

    def close(self, spent: float) -> None:
        """The last snapshot, with what the job spent in the end (the last heartbeat's figure is older)."""
        self.tick(spent, force=True)


def render_bar(snapshot: dict[str, Any], width: int = 30) -> str:
    """One line: ``[#####.....]  4,200/10,000 ok 4,150 failed 50 | 812 rec/s | 1.2M in 0.4M out | $0.31 of ~$0.74
    | ETA 7s``."""
    total = max(1, snapshot["total"])
    filled = int(width * snapshot["done"] / total)
    cost = f"${compact(snapshot['spent'])}"
    if snapshot.get("projected_cost") is not None:
        cost += f" of ~${compact(snapshot['projected_cost'])}"
    eta = snapshot.get("eta_s")
    return (f"[{'#' * filled}{'.' * (width - filled)}] {snapshot['done']:,}/{snapshot['total']:,} "
            f"ok {snapshot['ok']:,} failed {snapshot['failed']:,} retries {snapshot['retries']:,} | "
            f"{snapshot['records_per_s']:.0f} rec/s | {snapshot['input_tokens']:,} in {snapshot['output_tokens']:,} "
            f"out | {cost} | ETA {'-' if eta is None else f'{eta:.0f}s'}")
