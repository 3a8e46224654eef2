"""Self-host setups for the comparison: where throughput comes from and what a GPU-hour costs (no Streamlit here)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, MutableMapping, Sequence
from functools import cache
from typing import Any

from infercost.costmodel.owned import OwnedHardware, owned_cost_per_gpu_hour
from infercost.errors import InputError
from infercost.estimate import STALE_PRICE_DAYS
from infercost.performance.models import bundled_architecture, bundled_models
from infercost.performance.predict import Layout, engine_name, layout_name
from infercost.performance.profiles import ThroughputProfile, model_shape, releases_by_model
from infercost.pricing import GpuPrice, age_days, bundled_gpu_prices, cheapest_offer

CUSTOM_PRICE = "(custom price)"  # the offer box's last choice: a price a person types
DEFAULT_SLO = {"p95_ttft_ms": 2000.0, "p95_tpot_ms": 100.0}
# The models a roofline setup can estimate (every bundled config: dense, MoE, MLA, hybrid), the weight formats it
# takes, and the engines it schedules as (None: the engine of the nearest published table it is calibrated on).
ROOFLINE_MODELS = tuple(bundled_models())
ROOFLINE_DTYPES = ("bfloat16", "fp8", "int8", "int4", "mxfp4", "nvfp4")
ENGINES: dict[str, str | None] = {"nearest published table's": None, "vLLM": "vllm", "SGLang": "sglang",
                                  "TensorRT-LLM": "trtllm"}  # fmt: skip
ANY_RELEASE = "any release"  # no --engine-version: calibrated on the nearest tables of every release


def default_dtype(model: str) -> str:
    """The checkpoint's own weight format (gpt-oss ships MXFP4, DeepSeek-V3 FP8), where the form offers it."""
    native = bundled_architecture(model).default_dtype
    return native if native in ROOFLINE_DTYPES else "bfloat16"


def roofline_choice(model_box: Any, dtype_box: Any, engine_box: Any, state: MutableMapping[str, Any],
                    key: str) -> dict[str, Any]:  # fmt: skip
    """A roofline setup's model, weights and engine from the same lists on every page (boxes are Streamlit columns;
    picking a model sets the weights to its checkpoint's own format)."""
    model_key, dtype_key = f"{key}_model", f"{key}_dtype"
    state.setdefault(model_key, "llama-3.1-8b")
    state.setdefault(dtype_key, default_dtype(state[model_key]))
    model = model_box.selectbox("Model", ROOFLINE_MODELS, key=model_key,
                                on_change=lambda: state.__setitem__(dtype_key, default_dtype(state[model_key])),
                                help="Every bundled architecture (the Models page shows what each needs)")
    dtype = dtype_box.selectbox("Weights", ROOFLINE_DTYPES, key=dtype_key,
                                help="Set to the checkpoint's own format when you pick a model")  # fmt: skip
    engine = ENGINES[engine_box.selectbox("Engine", list(ENGINES), key=f"{key}_engine",
                                          help="The serving engine's scheduler the prediction uses; by default the "
                                               "engine of the published table it is calibrated on")]  # fmt: skip
    releases = releases_by_model().get(model, {}).get(engine_name(engine), []) if engine else []
    release_key = f"{key}_release"
    if state.get(release_key) not in (ANY_RELEASE, *releases):  # another model's or engine's release
        state[release_key] = ANY_RELEASE
    release = engine_box.selectbox("Engine release", [ANY_RELEASE, *releases], key=release_key,
                                   help="The release you run: its published tables are calibrated on first. Any "
                                        "release: the nearest tables of all, with the wider error of not knowing "
                                        "which") if releases else ANY_RELEASE  # fmt: skip
    return {"model": model, "dtype": dtype, **({"engine": engine} if engine else {}),
            **({"engine_version": release} if release != ANY_RELEASE else {})}


@cache
def layouts_for(model: str, gpus: int) -> dict[str, dict[str, int]]:
    """The layouts ``gpus`` GPUs can serve a model in, by the name ``throughput`` prints ("TP4 EP1 DP2"), plain
    tensor parallelism first: each divisor of the GPUs as data-parallel engines, and a MoE model's experts kept in
    each engine's group, spread over it (EP = TP) or over every GPU (EP = GPUs; with DP > 1 SGLang's and
    TensorRT-LLM's attention data parallel). What ``Layout.resolved`` refuses (heads that do not divide) is left out."""
    shape = model_shape(model)
    found: dict[str, dict[str, int]] = {}
    for data in [gpus // tensor for tensor in range(gpus, 0, -1) if gpus % tensor == 0]:
        tensor = gpus // data
        for experts in sorted({1, tensor, gpus} if shape.num_experts else {1}):
            try:
                Layout(tensor, experts, data).resolved(gpus, shape)
            except InputError:
                continue
            parallel = {"tensor_parallel": tensor, "expert_parallel": experts, "data_parallel": data}
            found[layout_name(parallel)] = parallel
    return found


def layout_choice(box: Any, model: str, gpus: int, state: MutableMapping[str, Any], key: str) -> dict[str, int]:
    """A roofline setup's layout from the ones its model and GPU count can run (``layouts_for``); {} for plain
    tensor parallelism over every GPU, the workload's default. A layout that another model or GPU count cannot run
    falls back to the first."""
    layouts = layouts_for(model, gpus)
    if not layouts:  # no layout runs (heads that divide among no GPU count here): the prediction says why
        return {}
    layout_key = f"{key}_layout"
    if state.get(layout_key) not in layouts:
        state[layout_key] = next(iter(layouts))
    if len(layouts) == 1:  # nothing to choose (one GPU of a dense model)
        chosen = next(iter(layouts.values()))
    else:
        chosen = layouts[box.selectbox("Layout", list(layouts), key=layout_key,
                                       help="TP: GPUs a tensor-parallel engine spans; EP: GPUs the routed experts "
                                            "are spread over; DP: data-parallel engines (attention data parallel "
                                            "where the experts span more GPUs than one engine)")]  # fmt: skip
    return {} if chosen == {"tensor_parallel": gpus, "expert_parallel": 1, "data_parallel": 1} else chosen


def layout_label(roofline: Mapping[str, Any]) -> str:
    """", TP1 EP8 DP8" for a roofline setup that names its layout, "" for the default one."""
    if "tensor_parallel" not in roofline:
        return ""
    return f", {layout_name(roofline)}"


def rented_price(gpu: str) -> tuple[float, str]:
    """(US$ per GPU-hour, where it comes from)."""
    offer = cheapest_offer(gpu)
    if offer is None:
        return 2.5, f"no catalog offer for {gpu}: US$2.50/GPU-hour assumed"
    return offer.price_per_hour, f"{offer.provider} on-demand, {offer.as_of}"


def offers_for(gpu: str, offers: Sequence[GpuPrice] | None = None) -> list[GpuPrice]:
    """Every catalog offer for a GPU, on-demand first (it does not vanish like spot or bind like reserved), cheapest
    first within each kind, for a person to pick from."""
    matching = [o for o in (offers or bundled_gpu_prices()) if o.gpu.lower() == gpu.lower()]
    return sorted(matching, key=lambda o: (o.kind != "on-demand", o.price_per_hour))


def offer_choice(offer: GpuPrice) -> str:
    """"$2.69/h · RunPod on-demand · as of 2026-05-22": what a person picks an offer by, the price first (a narrow
    box cuts the end). No age in it: a select box's value is its label, and a label that changed at midnight
    dropped the pick made at 23:59 for the cheapest offer (``offer_age`` says the age beside it)."""
    return f"${offer.price_per_hour:.2f}/h · {offer.provider} {offer.kind} · as of {offer.as_of}"


def offer_age(offer: GpuPrice, today: dt.date | None = None) -> str:
    """"193 d old ⚠ older than 90 days": how old an offer's price is, flagged as every stale price is."""
    age = age_days(offer.as_of, today=today)
    return f"{age} d old" + (f" ⚠ older than {STALE_PRICE_DAYS} days" if age > STALE_PRICE_DAYS else "")


def pick_offer(box: Any, label: str, gpu: str, *, key: str, offers: Sequence[GpuPrice] | None = None,
               custom: bool = False, help: str | None = None) -> GpuPrice | None:  # noqa: A002 (Streamlit's name)
    """A GPU's offers in a select box (``box``: a Streamlit container), by ``offer_choice``, with ``CUSTOM_PRICE``
    last where ``custom`` (None when it is picked)."""
    by_id = {offer.id: offer for offer in offers_for(gpu, offers)}
    picked = box.selectbox(label, [*by_id, *([CUSTOM_PRICE] if custom else [])], key=key, help=help,
                           format_func=lambda choice: offer_choice(by_id[choice]) if choice in by_id else choice)
    return by_id.get(picked)


def price_is_offers(price_per_hour: float, offer: GpuPrice) -> bool:
    """Whether a price in the form is still the offer's (a person may type their own over it)."""
    return abs(price_per_hour - offer.price_per_hour) < 0.005  # the form shows cents


def throughput_for_gpu(gpu: str, profiles: Sequence[ThroughputProfile]) -> list[ThroughputProfile]:
    """Profiles measured or published on this GPU: choosing a GPU picks its throughput, not only its price. Your own
    runs first, then the defaults a newcomer sees, then the fewest GPUs (the order stored and bundled come in)."""
    mine = [p for p in profiles if p.hardware.lower() == gpu.lower()]
    return sorted(mine, key=lambda p: (p.basis != "measured", p.id not in DEFAULT_PROFILE_IDS, p.gpus_per_replica))


def owned_price(hardware: OwnedHardware) -> tuple[float, str]:
    cost = owned_cost_per_gpu_hour(hardware)
    note = (f"owned: amortization ${cost.amortization_per_gpu_hour:.2f} + power ${cost.power_per_gpu_hour:.2f} "
            f"+ hosting ${cost.hosting_per_gpu_hour:.2f} per GPU-hour")  # fmt: skip
    return cost.total_per_gpu_hour, note


def setup_spec(name: str, throughput: dict[str, Any], price_per_hour: float, common: Mapping[str, Any], *,
               gpu: str = "", offer: GpuPrice | None = None) -> dict[str, Any]:  # fmt: skip
    """One profile ``self_host`` entry; ``common`` holds what all setups share (mode, SLO, peak, utilization)."""
    spec = {"name": name, "throughput": throughput, "gpu_price_per_hour": price_per_hour, "gpu": gpu, **common}
    return spec | ({"gpu_offer": offer.id} if offer is not None else {})


def follow_settings(setups: Sequence[dict[str, Any]], added: Sequence[str],
                    common: Mapping[str, Any]) -> list[dict[str, Any]]:  # fmt: skip
    """The workload's setups, those added on Compare this session (by name) with Compare's SLO and scaling now; the
    rest (a scenario's, a link's) keep their own, as they were saved."""
    return [{**setup, **common} if setup["name"] in added else dict(setup) for setup in setups]


# What a newcomer sees first: one table per kind of setup the bundled data covers (the rest are a pick away).
DEFAULT_PROFILE_IDS = (
    "published:nim-trtllm-llama-3-8b-instruct-1xh100-fp8-200in-1000out",
    "published:nim-trtllm-llama-3-8b-instruct-1xa100-80gb-fp16-200in-1000out",
    "published:nim-1.8.0-llama-3.3-70b-instruct-2xh100-fp8-5000in-500out",
    "published:vultr-vllm-0.16-nemotron-nano-30b-2xb200-fp8-2048in-512out",
)


def default_setups(profiles: Sequence[ThroughputProfile], common: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What a newcomer sees first: an 8B model estimated on an H100, and a few bundled profiles (any measured here
    first)."""
    roofline = {"roofline": {"model": "llama-3.1-8b", "gpu": "H100 SXM"}}
    setups = [_rented("llama-3.1-8b · 1× H100 SXM", roofline, "H100 SXM", common)]
    shown = [p for p in profiles if p.basis == "measured" and p.run_id is None] + \
        [p for p in profiles if p.id in DEFAULT_PROFILE_IDS]  # fmt: skip
    for profile in shown:  # short enough to read whole in the table at 1400 px; the basis has its own column
        model = profile.model.split("/")[-1].split(" (")[0]  # "Nemotron Nano 30B (as named by the source)"
        name = (f"{model} · {profile.gpus_per_replica}× {profile.hardware} · {profile.dtype} · "
                f"{profile.input_len:,.0f}/{profile.output_len:,.0f}")
        setups.append(_rented(name, {"run": profile.id}, profile.hardware, common))
    return setups


def _rented(name: str, throughput: dict[str, Any], gpu: str, common: Mapping[str, Any]) -> dict[str, Any]:
    """A setup rented at its GPU's cheapest on-demand offer (the catalog's own; US$2.50 where it has none)."""
    offer = cheapest_offer(gpu)
    price = offer.price_per_hour if offer is not None else rented_price(gpu)[0]
    return setup_spec(name, throughput, price, common, gpu=gpu, offer=offer)
