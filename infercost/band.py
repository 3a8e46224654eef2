"""The bill band of every option of an estimate: what a month may cost, P10 to P99, and what varied.

Joins the pure Monte Carlo (``costmodel.montecarlo``) with what the profile knows: the corpus's prompt lengths as
each model's own tokenizer counted them, the error of a proxy tokenizer (``tokenizers.proxy_error``), the spread of
answer lengths (``output_tokens_cv``) and of calls per day (``calls_per_day_cv``). The estimate command, the reports
and the Compare page all take their bands from here, so an API row's P10–P90 reads the same everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infercost.costmodel.montecarlo import BillBand, bill_band, self_host_band
from infercost.estimate import prompt_tokens_for, resolve_setup, workload_for
from infercost.performance.operating_points import RunLoader
from infercost.pricing import ApiPrice, find_price
from infercost.profile import Profile
from infercost.tokenizers.proxy_error import proxy_error

API_SIMULATIONS = 2000
SELF_HOST_SIMULATIONS = 500  # each simulated month sizes a fleet day by day: slower per draw than a bill
MAX_BANDED_API_ROWS = 40  # at most a few seconds of bands; the whole catalog (650 models) took 40 s
SEED = 0  # the same profile gives the same band on the page, in the CLI and in a report


def band_prompt_samples(distribution: Mapping[str, Sequence[float]] | None, tokenizer: str) -> tuple[list | None, str]:
    """The corpus's prompt lengths as *this model's* tokenizer counted them, and a line saying what the band drew.

    Another tokenizer's lengths would shift the whole band (a Chinese corpus can count half as many tokens under
    one tokenizer as another), so a model whose tokenizer was not counted gets the fixed length, and is told so.
    """
    if not distribution:
        return None, "fixed prompt length (load a corpus on the Tokens page to draw real lengths)"
    if tokenizer in distribution:
        counted = f"prompt lengths of your corpus as {tokenizer} (this model's tokenizer) counts them"
        return list(distribution[tokenizer]), counted
    counted = ", ".join(distribution)
    return None, f"fixed prompt length: your corpus was counted with {counted}, not {tokenizer}"


@dataclass(frozen=True)
class ApiBandInputs:
    """What an API model's band draws besides volume: prompt lengths, a tokenizer error, and both in words."""

    prompt_samples: list[float] | None
    prompt_error: dict[str, float] | None
    lengths: str
    tokenizer: str


def api_band_inputs(profile: Profile, price: ApiPrice,
                    prompt_distribution: Mapping[str, Sequence[float]] | None = None) -> ApiBandInputs:  # fmt: skip
    """The corpus's lengths as this model's tokenizer counted them, and that tokenizer's error where it is a proxy
    and the prompt was counted with it (a typed token count is taken as the model's own, as the estimate does)."""
    samples, lengths = band_prompt_samples(prompt_distribution, price.tokenizer)
    counted = samples is not None or prompt_tokens_for(profile, price.tokenizer).basis != "given"
    if price.tokenizer_fidelity == "exact":
        return ApiBandInputs(samples, None, lengths, f"{price.tokenizer} is this model's own tokenizer (exact)")
    if not counted:
        return ApiBandInputs(samples, None, lengths, "the prompt tokens you typed are taken as this model's own "
                             "(no tokenizer error drawn)")  # fmt: skip
    error = proxy_error(price.tokenizer, profile.language, profile.prompt_tokens_by_tokenizer)
    if error is None:
        return ApiBandInputs(samples, None, lengths, f"{price.tokenizer} is a proxy, but no other tokenizer counted "
                             "the same text, so its error is not drawn")  # fmt: skip
    q = error.quantiles
    words = (f"{price.tokenizer} is a proxy for this model's tokenizer; its error is taken as the spread of "
             f"{error.basis}: {q['p10']:+.0%} to {q['p90']:+.0%} (P10–P90), one draw a month")  # fmt: skip
    return ApiBandInputs(samples, q, lengths, words)


def api_band(profile: Profile, price: ApiPrice, prompt_distribution: Mapping[str, Sequence[float]] | None = None,
             *, simulations: int = API_SIMULATIONS) -> tuple[BillBand, ApiBandInputs]:  # fmt: skip
    """One API model's daily and monthly bill as a band, with what it drew."""
    inputs = api_band_inputs(profile, price, prompt_distribution)
    workload = workload_for(profile, prompt_tokens_for(profile, price.tokenizer).tokens)
    band = bill_band(workload, price.token_prices(), prompt_samples=inputs.prompt_samples,
                     calls_cv=profile.calls_per_day_cv, output_cv=profile.output_tokens_cv,
                     prompt_error=inputs.prompt_error, simulations=simulations, seed=SEED)  # fmt: skip
    return band, inputs


def self_host_band_of(profile: Profile, index: int, expected_error: Mapping[str, Any] | None,
                      load_run: RunLoader | None) -> BillBand:  # fmt: skip
    """One self-host setup's monthly cost as a band: day-to-day volume and the throughput prediction's error."""
    resolved = resolve_setup(profile, profile.self_host[index], index, load_run)
    return self_host_band(resolved.setup, float(resolved.volumes.attempts_per_day),
                          days_per_month=profile.days_per_month, calls_cv=profile.calls_per_day_cv,
                          expected_error=expected_error or None, simulations=SELF_HOST_SIMULATIONS,
                          seed=SEED)  # fmt: skip


def band_summary(band: BillBand, drawn: Sequence[str] = ()) -> dict[str, Any]:
    """The monthly band as plain numbers, and what varied, in words (for JSON, reports and tables)."""
    m = band.monthly
    return {"p10": m.p10, "p50": m.p50, "p90": m.p90, "p99": m.p99, "mean": m.mean,
            "varied": ", ".join(band.sources) or "nothing: the band is the bill", "drawn": list(drawn)}  # fmt: skip


def with_bands(document: dict[str, Any], profile: Profile, catalog: Sequence[ApiPrice],
               load_run: RunLoader | None = None) -> dict[str, Any]:  # fmt: skip
    """The estimate document with each API row's ``band`` and ``cost_per_month_range`` ([P10, P90] of its band, as
    self-host rows have), and each priced self-host row's ``band``; the rows are updated in place.

    A band takes a few tens of milliseconds, so a profile that prices the whole catalog (hundreds of models, tens of
    seconds) gets none for its API rows: ``band_note`` says so, and how to have them."""
    from infercost.estimate import price_list

    prices, _ = price_list(profile, catalog)
    banded = len(document["api"]) <= MAX_BANDED_API_ROWS
    for row in document["api"]:
        band, inputs = api_band(profile, find_price(prices, row["model"])) if banded else (None, None)
        row["band"] = band_summary(band, (inputs.lengths, inputs.tokenizer)) if band else None
        row["cost_per_month_range"] = [band.monthly.p10, band.monthly.p90] if band else None
    if not banded:
        document["band_note"] = (f"{len(document['api'])} API models: bands are simulated for up to "
                                 f"{MAX_BANDED_API_ROWS}; name the models in api_models to have theirs")  # fmt: skip
    for index, row in enumerate(document["self_host"]):
        if row.get("meets_slo") and row.get("cost_per_month") is not None:
            row["band"] = band_summary(self_host_band_of(profile, index, row.get("expected_error"), load_run))
    return document
