"""The AIConfigurator importer keeps each measurement once (``scripts/published_from_aiconfigurator.py``,
``distinct``): its sample exports some runs two to four times, with the version, layout or model stated otherwise,
and some rounded to 0.01 ms. Runs that really differ, even by a twentieth of a millisecond, stay apart."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "published_from_aiconfigurator.py"
spec = importlib.util.spec_from_file_location("published_from_aiconfigurator", SCRIPT)
importer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(importer)


def member(row_id: str, ttft: str, tpot: str, *, model: str = "deepseek-ai/DeepSeek-R1", version: str = "0.5.9",
           repaired: str = "", source: str = "2026-03-25.csv", concurrency: str = "4") -> tuple:  # fmt: skip
    key = (model, "b200_sxm", "sglang", version or None, "fp8", "precision fp8", (("tensor_parallel", 8),), 1024, 1024)
    row = {"id": row_id, "model_path": model, "silicon_ttft_ms": ttft, "silicon_tpot_ms": tpot,
           "backend_version": version, "layout_as_published": repaired}  # fmt: skip
    return key, row, {"source_file": source, "silicon_concurrency": concurrency}


def kept_ids(members: list[tuple]) -> dict[str, list[str]]:
    return {row["id"]: row["same_as"] for _, row, _ in importer.distinct(members)}


def test_copies_of_one_run_are_kept_once_under_the_copy_that_states_the_most():
    original = member("a", "338.3364140507183", "6.332719125474412")
    rounded = member("b", "338.34", "6.33", source="qwen3.5-397b-gap-analysis.csv")
    unversioned = member("c", "338.3364140507183", "6.332719125474412", version="", source="2026-04-06.csv")
    renamed = member("d", "338.33641405071836", "6.332719125474411", model="deepseek-ai/DeepSeek-V3",
                     source="2026-04-27", repaired="TP64 attention-DP1 MoE-TP8 EP8")  # fmt: skip
    assert kept_ids([rounded, unversioned, renamed, original]) == {"a": ["b", "c", "d"]}


def test_runs_that_differ_stay_apart_even_when_close():
    first = member("a", "85.3071252204245", "10.353767177067116")
    rerun = member("b", "85.25729452358064", "10.307701576141397", source="2026-04-06.csv")  # 0.05 ms apart
    other_level = member("c", "85.3071252204245", "10.353767177067116", concurrency="8")
    assert kept_ids([first, rerun, other_level]) == {"a": [], "b": [], "c": []}


def test_of_two_full_precision_copies_the_earliest_file_is_kept():
    later = member("late", "1597.7761029429741", "29.47617296799455", source="2026-04-06.csv")
    earlier = member("early", "1597.776102942974", "29.47617296799455", source="2026-03-25.csv")
    assert kept_ids([later, earlier]) == {"early": ["late"]}
