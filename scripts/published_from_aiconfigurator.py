"""Bundle AIConfigurator's published silicon sample (aggregated serving) as published closed-loop tables.

    git --git-dir=MIRROR show 095f58a5...:aic-core/src/aiconfigurator_core/systems/silicon_sample.csv > sample.csv
    python scripts/published_from_aiconfigurator.py sample.csv

The sample is NVIDIA's own benchmark measurements that AIConfigurator's accuracy gate compares its predictions with
(``tools/accuracy_regression_testing/predict_silicon_sample.py`` predicts every row by its ``id``): TTFT and TPOT per
(model, GPU, engine, version, layout, shape, concurrency). It has no throughput column, so request throughput is
derived from the latencies by Little's law for a closed loop (every table records the derivation in ``derived``).
Only ``agg`` rows are bundled: a ``disagg`` row has separate prefill and decode workers, which no table here
describes. Writes one ``aic-*.json`` per setup into ``infercost/performance/data/published`` (old ones removed first).
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the InferenceX importer beside this one
from published_from_inferencex import LENGTH_SPREAD, RANGE_RATIO  # noqa: E402  (InferenceX's length draw)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "infercost" / "performance" / "data" / "published"
COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
PATH = "aic-core/src/aiconfigurator_core/systems/silicon_sample.csv"
SOURCE = f"https://github.com/ai-dynamo/aiconfigurator/blob/{COMMIT}/{PATH}"
COMMIT_DATE = "2026-07-14"  # the last commit that changed the file (0b077da5), before the pinned one
GPUS = {"b200_sxm": "B200", "b300_sxm": "B300", "h100_sxm": "H100 SXM", "h200_sxm": "H200", "gb200": "GB200"}
ENGINES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}
DERIVED = {
    "request_throughput": "concurrency / (mean_ttft_ms + (output_len - 1) x mean_tpot_ms) x 1000: Little's law for "
                          "a closed loop whose requests all have exactly output_len tokens (the sample has no "
                          "throughput column)",
    "output_throughput": "request_throughput x output_len",
}  # fmt: skip


def source_fields(text: str) -> dict[str, str]:
    """The ``key=value; ...`` provenance string of a row as a dict (``db-dump/DATE`` and images kept as keys)."""
    fields = {}
    for part in (p.strip() for p in text.split(";")):
        key, sep, value = part.partition("=")
        if sep:
            fields[key] = value
        elif part.startswith("db-dump/"):
            fields["db-dump"] = part.removeprefix("db-dump/")
        elif part:
            fields["image"] = part
    return fields


def engine_version(row: dict[str, str]) -> tuple[str | None, str]:
    """The engine version and where it came from (759 agg rows leave it blank and name no image either)."""
    if row["backend_version"]:
        return row["backend_version"], "column backend_version"
    return None, "not stated (backend_version blank, no image named)"


def dtype_of(row: dict[str, str]) -> tuple[str, str]:
    precision = row["precision"]
    if precision:
        gemm, moe = row["gemm_quant_mode"] or "-", row["moe_quant_mode"] or "-"
        return precision, f"precision {precision}, GEMM {gemm}, MoE {moe}"
    return "bf16", "precision left blank and no quantisation named: unquantised BF16 weights assumed"


def layout(row: dict[str, str], provenance: dict[str, str]) -> dict[str, int]:
    """AIConfigurator's layout: attention TP x PP x attention DP GPUs; MoE layers split as moe_tp x moe_ep.

    The rows from ``2026-04-06.csv`` and from the 2026-04-27 database dump record every expert-parallel setup with
    its GPU count multiplied by its EP size (EP over all of W GPUs written as W*W GPUs: TP64 MoE-TP8 EP8, attention
    DP16 MoE-TP4 EP4, or vLLM's TP4 attention-DP4 EP16). Of the 426 such rows, 234 name their layout in their id
    (``..._tp8_ep8_1552`` on a TP64 row) and 130 repeat, to the last digit, a measurement that ``2026-03-25.csv`` or
    a gap-analysis file records on W GPUs with EP W; none says otherwise. Such a row is read as EP over W GPUs,
    attention TP W (attention DP W where the row puts the GPUs in attention DP alone); ``repaired`` names what the
    row said.
    """
    def number(field: str) -> int:
        return int(row[field]) if row[field] not in ("", "0") else 1

    tp, pp, dp = number("tp_size"), number("pp_size"), number("attention_dp_size")
    moe_tp, ep = number("moe_tp_size"), number("moe_ep_size")
    world = math.isqrt(tp * pp * dp)
    if (ep > 1 and ("db-dump" in provenance or provenance.get("source_file") == "2026-04-06.csv")
            and pp == 1 and world > 1 and world * world == tp * dp and ep in (world, world * world)):
        said = f"TP{tp} attention-DP{dp} MoE-TP{moe_tp} EP{ep}"
        tp, dp = (world, 1) if tp > 1 else (1, world)
        return {"tensor_parallel": tp, "pipeline_parallel": 1, "data_parallel": dp, "expert_parallel": world,
                "moe_tensor_parallel": 1, "gpus": world, "repaired": said}  # fmt: skip
    return {"tensor_parallel": tp, "pipeline_parallel": pp, "data_parallel": dp,
            "expert_parallel": ep, "moe_tensor_parallel": moe_tp, "gpus": tp * pp * dp}  # fmt: skip


Member = tuple[tuple, dict, dict]  # (setup key, row, provenance)
SAME_WITHIN_MS = 0.006  # half the 0.01 ms the coarsest copies round to, and a little


def level(member: Member) -> tuple:
    """Where a measurement was taken: GPU, engine, shape and client concurrency (not the model, version or layout,
    which copies of one run state otherwise: the 2026-04-27 dump names DeepSeek-R1 rows, ids ``dsr1_...``,
    DeepSeek-V3)."""
    (_, system, backend, *_, isl, osl), _, provenance = member
    return system, backend, isl, osl, provenance["silicon_concurrency"]


def same_measurement(one: Member, other: Member) -> bool:
    """Both latencies agree to the sample's coarsest precision (its gap-analysis files round to 0.01 ms; the others
    keep 16 digits, a few a last digit apart). Two runs of one setup differ by percents, not hundredths of a ms."""
    return all(abs(float(one[1][field]) - float(other[1][field])) <= SAME_WITHIN_MS
               for field in ("silicon_ttft_ms", "silicon_tpot_ms"))  # fmt: skip


def preference(member: Member) -> tuple:
    """Which copy of a measurement exported more than once is kept: the one that names its engine version, then one
    whose layout needed no repair, then the unrounded one, then the earliest file or dump (the files name the model
    the ids name)."""
    _, row, provenance = member
    source = provenance.get("source_file") or provenance.get("db-dump", "")
    rounded = len(row["silicon_ttft_ms"].partition(".")[2]) <= 2
    return not row["backend_version"], bool(row["layout_as_published"]), rounded, source, row["id"]


def distinct(members: list[Member]) -> list[Member]:
    """One row per measurement, the other copies' ids recorded on it (``same_as``), so that a measurement is
    counted and fitted once."""
    at_level: dict[tuple, list[list[Member]]] = defaultdict(list)
    for member in members:
        copies = at_level[level(member)]
        home = next((same for same in copies if same_measurement(same[0], member)), None)
        if home is None:
            copies.append([member])
        else:
            home.append(member)
    kept = []
    for same in (same for copies in at_level.values() for same in copies):
        key, row, provenance = min(same, key=preference)
        row["same_as"] = sorted(other["id"] for _, other, _ in same if other is not row)
        kept.append((key, row, provenance))
    return kept


def slug_part(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def main(argv: list[str]) -> int:
    rows = [r for r in csv.DictReader(open(argv[0], encoding="utf-8")) if r["mode"] == "agg"]
    skipped: dict[str, int] = defaultdict(int)
    members: list[Member] = []
    for row in rows:
        provenance = source_fields(row["silicon_data_source"])
        if "silicon_concurrency" not in provenance:
            skipped["no silicon_concurrency in its provenance (batch_size alone is per rank)"] += 1
            continue
        version, _ = engine_version(row)
        parallel = layout(row, provenance)
        row["layout_as_published"] = parallel.pop("repaired", "")  # what the row stated, where it was repaired
        key = (row["model_path"], row["system"], row["backend"], version, *dtype_of(row),
               tuple(parallel.items()), int(row["isl"]), int(row["osl"]))  # fmt: skip
        members.append((key, row, provenance))
    kept = distinct(members)
    skipped["a measurement exported again (kept once, ids in same_as)"] = len(members) - len(kept)
    setups: dict[tuple, list[tuple[dict, dict]]] = defaultdict(list)
    for key, row, provenance in kept:
        setups[key].append((row, provenance))
    for old in OUT.glob("aic-*.json"):
        old.unlink()
    written = 0
    for key, members in sorted(setups.items(), key=lambda kv: str(kv[0])):
        for part, points in enumerate(split_by_concurrency(members)):
            document = table(key, points, part)
            path = OUT / f"{document.pop('_slug')}.json"
            path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
            written += 1
    print(f"{len(rows)} agg rows, {written} tables; skipped: {dict(skipped)}", file=sys.stderr)
    return 0


def split_by_concurrency(members: list[tuple[dict, dict]]) -> list[list[tuple[dict, dict]]]:
    """One table per run: rows of one setup from one provenance (file, or config and workflow run) go together; a
    concurrency measured again in the same run starts another table, so no level appears twice in one."""
    by_run: dict[str, list[tuple[dict, dict]]] = defaultdict(list)
    for member in members:
        by_run[run_name(member[1])].append(member)
    tables: list[list[tuple[dict, dict]]] = []
    for name in sorted(by_run):
        own: list[list[tuple[dict, dict]]] = []
        for member in sorted(by_run[name], key=lambda m: (m[1].get("measured", ""), m[0]["id"])):
            level = int(member[1]["silicon_concurrency"])
            home = next((t for t in own if all(int(p["silicon_concurrency"]) != level for _, p in t)), None)
            if home is None:
                own.append([member])
            else:
                home.append(member)
        tables.extend(own)
    return tables


def run_name(provenance: dict[str, str]) -> str:
    """What tells one run from another: the provenance without the level, the date and the wip flag."""
    return "; ".join(f"{k}={v}" for k, v in sorted(provenance.items())
                     if k not in ("silicon_concurrency", "measured", "wip"))  # fmt: skip


# Rows that are InferenceX's runs: ids that start with a dump date (``2026_04_06_...``; its SGLang DeepSeek-R1 FP4
# rows on B200 are InferenceX's to four digits, SOURCES.md) or end with an InferenceX config id (``..._cfg721``: the
# numbering of InferenceX's configs, ``ix-*`` tables), all at InferenceX's three shapes. InferenceX draws request
# lengths over 0.8 to 1 of the shape's (``published_from_inferencex.py``); the sample's own sweeps (``meta_llama_...``,
# ``qwen_...``, shapes such as 1000 / 100) do not say, and are taken as sent at exactly their lengths.
INFERENCEX_ROW = re.compile(r"^\d{4}_\d{2}_\d{2}_|_cfg\d+$")


def inferencex_run(members: list[tuple[dict, dict]]) -> bool:
    return all(INFERENCEX_ROW.search(row["id"]) for row, _ in members)


def table(key: tuple, members: list[tuple[dict, dict]], part: int) -> dict:
    model, system, backend, version, dtype, dtype_note, parallel, isl, osl = key
    parallel = dict(parallel)
    row0, provenance0 = members[0]
    _, version_note = engine_version(row0)
    gpu, gpus = GPUS[system], parallel.pop("gpus")
    repaired = sorted({row["layout_as_published"] for row, _ in members} - {""})
    engine = f"{ENGINES[backend]} {version}" if version else ENGINES[backend]
    measured = sorted({p.get("measured", "")[:10] for _, p in members if p.get("measured")})
    points = []
    for row, provenance in sorted(members, key=lambda m: int(m[1]["silicon_concurrency"])):
        level = int(provenance["silicon_concurrency"])
        ttft, tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
        request_throughput = level / (ttft + (osl - 1) * tpot) * 1000
        points.append({"concurrency": level, "request_throughput": float(f"{request_throughput:.8g}"),
                       "output_throughput": float(f"{request_throughput * osl:.8g}"), "mean_ttft_ms": ttft,
                       "mean_tpot_ms": tpot, "source_id": row["id"]})  # latencies as the sample has them  # fmt: skip
        if row["layout_as_published"]:  # what AIConfigurator's own predictions of the row were given
            points[-1]["layout_as_published"] = row["layout_as_published"]
        if row["same_as"]:  # the ids of the same measurement exported again, left out
            points[-1]["same_as"] = row["same_as"]
    per_rank = [f"{row['batch_size']} at {p['silicon_concurrency']}" for row, p in members
                if row["batch_size"] and int(row["batch_size"]) != int(p["silicon_concurrency"])]  # fmt: skip
    layout_text = (f"TP{parallel['tensor_parallel']} PP{parallel['pipeline_parallel']} "
                   f"attention-DP{parallel['data_parallel']}, MoE TP{parallel['moe_tensor_parallel']} "
                   f"EP{parallel['expert_parallel']}")  # fmt: skip
    run = run_name(provenance0)
    notes = (
        f"Rows of AIConfigurator's silicon sample (aggregated serving, mode agg) at the pinned commit, keyed by the "
        f"row ids kept as source_id (AIConfigurator's predict_silicon_sample.py predicts the same ids). Run: {run}. "
        f"Measured {', '.join(measured) if measured else 'on a date the row does not state'}. Engine version: "
        f"{version_note}. Dtype: {dtype_note}; KV-cache dtype not stated. Layout {layout_text} ({gpus} GPUs: attention "
        f"TP x PP x attention DP). Concurrency is the row's silicon_concurrency (the client's); "
        f"silicon_ttft_ms / silicon_tpot_ms do not name the statistic and are recorded as mean_ttft_ms / mean_tpot_ms. "
        f"No throughput is published: request_throughput and output_throughput are derived from the latencies by "
        f"Little's law (see derived), so Little's law holds by construction and cannot be checked here, as if every "
        f"request had exactly {isl} input and {osl} output tokens, as the sample's isl/osl state."
    )
    spread = inferencex_run(members)
    if spread:
        notes += (f" The row ids are InferenceX's (a dump date first, or its config id last), and InferenceX draws "
                  f"each request's lengths over {RANGE_RATIO} to 1 of those: length_spread {LENGTH_SPREAD}.")
    if repaired:
        notes += (f" The rows say {' or '.join(repaired)}: the GPU count multiplied by the EP size, as every "
                  f"expert-parallel row of this file or dump does (see layout() in "
                  f"scripts/published_from_aiconfigurator.py); read as {layout_text} on {gpus} GPUs.")
    copies = sum(len(row["same_as"]) for row, _ in members)
    if copies:
        notes += (f" {copies} other rows of the sample repeat these measurements, to the last digit or to its 0.01 ms "
                  f"rounding (another file or dump exporting the same run): kept once, their ids in the points' "
                  f"same_as (see distinct() in scripts/published_from_aiconfigurator.py).")
    if per_rank:
        notes += f" The row's batch_size differs from its concurrency ({', '.join(per_rank)}): a per-rank batch."
    if len(points) == 1:
        notes += " A single concurrency level."
    short = model.split("/")[-1]
    slug = "-".join(slug_part(s) for s in (
        "aic", backend, version or "unversioned", short, f"{gpus}x{gpu}", dtype,
        f"tp{parallel['tensor_parallel']}", f"dp{parallel['data_parallel']}", f"ep{parallel['expert_parallel']}",
        f"{isl}in", f"{osl}out"))  # fmt: skip
    if parallel["pipeline_parallel"] > 1:
        slug += f"-pp{parallel['pipeline_parallel']}"
    if parallel["moe_tensor_parallel"] not in (1, parallel["tensor_parallel"] * parallel["data_parallel"]):
        slug += f"-moetp{parallel['moe_tensor_parallel']}"
    if part:
        slug += f"-run{part + 1}"
    return {
        "_slug": slug,
        "schema_version": 1,
        "name": f"{short}, {engine}, {gpus}x {gpu}, {dtype.upper()} {layout_text}, {isl} in / {osl} out "
                f"(AIConfigurator silicon sample{f', run {part + 1}' if part else ''})",
        "model": model,
        "hardware": gpu,
        "gpus_per_replica": gpus,
        **{k: parallel[k] for k in ("tensor_parallel", "pipeline_parallel", "data_parallel", "expert_parallel",
                                    "moe_tensor_parallel")},  # fmt: skip
        "engine": engine,
        "engine_kind": backend,
        "engine_version": version,
        "dtype": dtype,
        "basis": "published",
        "calibration_set": False,
        "load": "closed_loop",
        "source": SOURCE,
        "as_of": measured[-1] if measured else COMMIT_DATE,
        "input_len": isl,
        "output_len": osl,
        "run": run if not part else f"{run}; repeat {part + 1}",
        "derived": DERIVED,
        **({"length_spread": LENGTH_SPREAD} if spread else {}),
        "notes": notes,
        "points": points,
    }


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
