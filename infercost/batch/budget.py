"""A batch job's budget before it runs, and the comparison with what it cost after. Pure: numbers in, numbers out.

Two ways to price a job, the same two the estimate uses:

- ``api``: per-token prices (USD per 1M input and output tokens) of a catalog model. Every attempt is billed in full
  for what the server's ``usage`` reports; an attempt that failed without ``usage`` is billed nothing here (an API may
  still bill a prompt it read: the comparison says so).
- ``gpu``: a GPU rented by the hour, at the request throughput a stored run or profile measured at the job's
  concurrency. The budget is attempts / throughput GPU-seconds; the actual bill is the time the job spent sending.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Pricing:
    kind: str  # api | gpu | none
    basis: str  # what the prices are: a catalog id with source and date, or a run at a concurrency on a GPU
    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0
    gpu_price_per_hour: float = 0.0
    gpus: int = 1
    request_throughput: float = 0.0  # requests/s per replica at the job's concurrency (gpu)

    def attempt_cost(self, n_in: float, n_out: float) -> float:
        """USD of one attempt: its tokens (api) or its share of the GPU's time (gpu)."""
        if self.kind == "api":
            return (n_in * self.input_per_mtok + n_out * self.output_per_mtok) / 1e6
        if self.kind == "gpu":
            return self.gpu_cost_per_s / self.request_throughput
        return 0.0

    @property
    def gpu_cost_per_s(self) -> float:
        return self.gpu_price_per_hour * self.gpus / 3600.0

    def time_cost(self, seconds: float) -> float:
        """USD of renting the GPU(s) for ``seconds`` (gpu only)."""
        return seconds * self.gpu_cost_per_s if self.kind == "gpu" else 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Budget:
    records: int
    input_tokens: int  # counted with the tokenizer, every record once
    output_tokens: float  # expected: from max_tokens, or a sample's mean per record
    output_basis: str  # max_tokens | sample of N records | assumed N per record
    retries: float  # expected extra attempts
    retry_rate: float
    cost: float | None
    duration_s: float | None  # known where a throughput is (gpu pricing)
    tokenizer: str
    fidelity: str
    pricing: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_budget(*, records: int, input_tokens: int, output_tokens: float, output_basis: str, retry_rate: float,
                pricing: Pricing, tokenizer: str, fidelity: str, warnings: list[str]) -> Budget:
    """Attempts = records × (1 + retry rate); each attempt billed in full (DESIGN's cost semantics)."""
    attempts_per_record = 1.0 + retry_rate
    attempts = records * attempts_per_record
    cost: float | None = None
    duration_s: float | None = None
    if pricing.kind == "api":
        cost = pricing.attempt_cost(input_tokens, output_tokens) * attempts_per_record
    elif pricing.kind == "gpu":
        duration_s = attempts / pricing.request_throughput
        cost = pricing.time_cost(duration_s)
    return Budget(records, input_tokens, output_tokens, output_basis, attempts - records, retry_rate, cost,
                  duration_s, tokenizer, fidelity, pricing.as_dict(), warnings)


def projected_cost(spent: float, done: int, total: int, budget_cost: float | None) -> float | None:
    """Spent so far plus the rest at the cost per record seen so far (the budget's rate before any record ends)."""
    if done:
        return spent / done * total
    return budget_cost


def compare(budget: dict[str, Any], actual: dict[str, Any]) -> list[dict[str, Any]]:
    """Budget versus actual, one row per line, each with the difference and what explains it."""
    rows = []
    for line, key, why in _LINES:
        planned, got = budget.get(key), actual.get(key)
        diff = None if planned is None or got is None else got - planned
        pct = None if diff is None or not planned else 100.0 * diff / planned
        rows.append({"line": line, "budget": planned, "actual": got, "difference": diff, "difference_pct": pct,
                     "why": why(budget, actual, diff)})
    return rows


def _why_records(budget: dict, actual: dict, diff: float | None) -> str:
    left = budget["records"] - actual.get("ok", 0) - actual.get("failed", 0)
    parts = [f"{actual.get('ok', 0)} ok, {actual.get('failed', 0)} failed"]
    if left:
        parts.append(f"{left} not sent (the job stopped: {actual.get('status')})")
    return "; ".join(parts)


def _why_input(budget: dict, actual: dict, diff: float | None) -> str:
    if not actual.get("usage_reported"):
        return "the server reported no usage: actual input is the tokenizer's count"
    parts = [f"actual from the server's usage ({actual['usage_reported']} attempts), budget from "
             f"{budget['tokenizer']} ({budget['fidelity']})"]
    if actual.get("retries"):
        parts.append("failed attempts reported no usage, so the prompts they sent are not counted")
    if budget.get("fidelity") != "exact":
        parts.append("a proxy tokenizer counts differently from the model's")
    parts.append("chat templates add tokens the text does not hold")
    return "; ".join(parts)


def _why_output(budget: dict, actual: dict, diff: float | None) -> str:
    if budget["output_basis"] == "max_tokens":
        return ("budget assumes every record writes max_tokens; records that stop early (end of text) write fewer"
                if diff and diff < 0 else "every record wrote its max_tokens")
    return f"budget from {budget['output_basis']}; the rest varied around it"


def _why_retries(budget: dict, actual: dict, diff: float | None) -> str:
    reasons = actual.get("failure_reasons") or []
    top = ", ".join(f"{r['reason']} ×{r['records']}" for r in reasons[:3])
    return f"budget assumed a retry rate of {budget['retry_rate']:.0%}" + (f"; final failures: {top}" if top else "")


def _why_cost(budget: dict, actual: dict, diff: float | None) -> str:
    kind = budget["pricing"]["kind"]
    if kind == "api":
        why = "tokens × the same prices: follows the token lines; failed attempts without usage are billed nothing"
        if actual.get("usage_over_asked"):
            why += (f"; {actual['usage_over_asked']} records reported more completion tokens than they asked for, "
                    "billed as reported")
        return why
    if kind == "gpu":
        return "GPU time actually spent sending × the hourly price, against records ÷ the measured throughput"
    return "no pricing given (--price or --throughput with --gpu-price)"


def _why_duration(budget: dict, actual: dict, diff: float | None) -> str:
    if budget.get("duration_s") is None:
        return "no throughput given: no duration budget"
    return "measured throughput at this concurrency against what this server sustained for these records"


def _why_throughput(budget: dict, actual: dict, diff: float | None) -> str:
    return "records per second of sending time; pauses and restarts are not counted"


_LINES = (
    ("records", "records", _why_records),
    ("input tokens", "input_tokens", _why_input),
    ("output tokens", "output_tokens", _why_output),
    ("retries", "retries", _why_retries),
    ("cost (USD)", "cost", _why_cost),
    ("duration (s)", "duration_s", _why_duration),
    ("throughput (records/s)", "records_per_s", _why_throughput),
)


def budget_view(budget: dict[str, Any]) -> dict[str, Any]:
    """The budget with its throughput line (records per second) for the comparison."""
    duration = budget.get("duration_s")
    return {**budget, "records_per_s": budget["records"] / duration if duration else None}
