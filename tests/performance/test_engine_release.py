"""Which engine release a roofline setup is calibrated on, and the error it then carries: ``--engine-version``
names one; not named, the source may be any release (``any_release``), and a setup its own fit misses ranks last."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from infercost.performance.calibrate import Observation
from infercost.performance.profiles import held_out_profiles, validation_tables
from infercost.performance.validation import MISFIT, fit_error, fit_tables, group_tables, source_rank, validate

MISFIT_TABLE = "published:aic-sglang-unversioned-deepseek-r1-4xb200-fp4-tp4-dp1-ep1-1024in-1024out"
UNVERSIONED = ("deepseek-r1", "sglang unnamed@aiconfigurator", "B200", "4", "nvfp4")
RELEASED = ("deepseek-r1", "sglang 0.5.9", "B200", "4", "nvfp4", "ep4")


@pytest.fixture(scope="module")
def groups():
    return group_tables(validation_tables([p for p in held_out_profiles() if p.closed_loop]))


def test_a_setup_is_a_misfit_when_its_own_calibration_misses_its_own_points(groups) -> None:
    """SGLang's unversioned DeepSeek-R1 NVFP4 sweep on 4x B200 jumps from 0.9 s TTFT at 16 users to 7.1 s at 32, and
    takes 5.5 s to prefill one 8K prompt that 0.5.9 prefills in 0.3 s: no calibration fits it. The same sweep with
    its TTFTs made sane is no misfit, and 0.5.9's is none either."""
    from dataclasses import replace

    misfit = groups[UNVERSIONED]
    assert fit_error(fit_tables(misfit), misfit) > MISFIT
    assert fit_error(fit_tables(groups[RELEASED]), groups[RELEASED]) < MISFIT

    def sane(o: Observation) -> Observation:  # a prompt prefilled at 0.3 ms a token, queued as users grow
        ttft = 0.3 * o.input_len * (1 + o.concurrency / 64)
        return replace(o, mean_ttft_ms=ttft, p95_ttft_ms=None,
                       request_throughput=o.concurrency / ((ttft + (o.output_len - 1) * o.mean_tpot_ms) / 1000))

    made_sane = [replace(t, observations=tuple(map(sane, t.observations))) for t in misfit]
    assert fit_error(fit_tables(made_sane), made_sane) < MISFIT


def test_tables_that_leave_their_release_unnamed_share_a_setup_only_with_their_own_sources(groups) -> None:
    """AIConfigurator's unversioned DeepSeek-R1 NVFP4 sweep on 4x B200 under SGLang (November 2025) and InferenceX's
    of the same weights and GPUs (July 2026) name no release; nothing says they ran one, so they are two setups, each
    fitted on its own tables, and neither is another's "release" to move between (``engine_version``)."""
    from infercost.performance.validation import _engine_release

    inferencex = ("deepseek-r1", "sglang unnamed@inference-sim", "B200", "4", "nvfp4")
    assert {t.id.split(":")[1].split("-")[0] for t in groups[UNVERSIONED]} == {"aic"}
    assert {t.id.split(":")[1].split("-")[0] for t in groups[inferencex]} == {"ix"}
    assert _engine_release(UNVERSIONED) == _engine_release(inferencex) == ("sglang", "")
    assert _engine_release(RELEASED) == ("sglang", "0.5.9")


def test_a_misfit_source_ranks_after_every_other_even_on_the_same_gpus() -> None:
    here, elsewhere = ("B200", 4, ()), ("H200", 8, ("ep8",))
    levels = [Observation(c, 1000, 100, 1.0, 100.0, 10.0) for c in (1, 8, 64)]
    assert source_rank(elsewhere, here, levels) < source_rank(here, here, levels, misfit=True)
    assert source_rank(here, here, levels) < source_rank(elsewhere, here, levels)


def test_any_release_scores_a_setup_from_another_release_where_nearest_has_none(groups) -> None:
    """0.5.9's 4x B200 setup has no other 0.5.9 setup of its weights in these tables: ``nearest`` scores nothing,
    ``any_release`` takes the unversioned one (each from the other)."""
    released, unversioned = groups[RELEASED], groups[UNVERSIONED]
    errors, _ = validate([*released, *unversioned], ("nearest", "any_release"))
    assert "nearest" not in errors.values
    points = sum(len(t.observations) for t in [*released, *unversioned])
    assert len(errors.values["any_release"]["mean_ttft_ms"]) == points


@pytest.mark.parametrize(("found", "asked", "distance"), [
    ("0.5.9", None, 0), (None, None, 0), ("0.5.9", "0.5.9", 0), ("0.5.9", "v0.5.9", 0), ("v0.11.2", "0.11.2", 0),
    ("0.5.9.post1", "0.5.9", 1), ("0.5.9", "0.5", 1), ("1.2.0rc6.post3", "1.2.0", 1),
    ("0.5.10", "0.5.1", 2), ("0.5.6", "0.5.9", 2), (None, "0.5.9", 2), ("", "0.5.9", 2),
])  # fmt: skip
def test_a_release_is_near_the_one_asked_for_when_it_is_that_release_or_of_its_line(found, asked, distance) -> None:
    from infercost.performance.predict import release_distance

    assert release_distance(found, asked) == distance


def test_a_release_named_is_calibrated_on_its_own_tables_and_carries_the_same_release_error() -> None:
    from infercost.performance.expected_error import held_out_error
    from infercost.performance.predict import Layout, predict_roofline

    layout = Layout(expert_parallel=4)
    named = predict_roofline("deepseek-r1", "B200", 4, "nvfp4", 1024, 1024, engine="sglang", layout=layout,
                             release="v0.5.9")  # fmt: skip
    assert "SGLang 0.5.9" in named.notes[0] and named.transfer == "shape"
    assert named.as_dict()["engine_version"] == "v0.5.9"
    unnamed = predict_roofline("deepseek-r1", "B200", 4, "nvfp4", 1024, 1024, engine="sglang", layout=layout)
    assert unnamed.transfer == "any_release" and unnamed.expected_error == held_out_error("moe", "sglang",
                                                                                         "any_release")
    assert any(note.startswith("no engine release named (--engine-version") for note in unnamed.notes)
    assert unnamed.as_dict()["engine_version"] is None
    # the any-release error is the wider: releases of one engine differ more than its GPUs do (in throughput; MoE
    # SGLang's TTFT from other shapes widened past it with InferenceX's sweeps that end in undrained queues)
    wide, narrow = unnamed.expected_error["request_throughput"], named.expected_error["request_throughput"]
    assert wide["p90"] - wide["p10"] > narrow["p90"] - narrow["p10"]


def test_a_release_with_no_table_of_those_weights_says_what_it_was_calibrated_on() -> None:
    from infercost.performance.predict import predict_roofline

    predicted = predict_roofline("deepseek-r1", "B200", 4, "nvfp4", 1024, 1024, engine="sglang", release="0.4.2")
    assert predicted.transfer == "any_release"
    assert any(note.startswith("no table of release 0.4.2 of this model and weights") and "(nearest)" in note
               for note in predicted.notes)  # fmt: skip
    line = predict_roofline("deepseek-r1", "B200", 8, "nvfp4", 1024, 1024, engine="trtllm", release="1.2.0rc6")
    assert line.transfer == "any_release" and "TensorRT-LLM 1.2.0rc6." in line.notes[0]
    assert any("(of its line)" in note for note in line.notes)


def test_a_release_named_beside_calibration_tables_of_no_release_says_so() -> None:
    """Llama-3.1-8B's tables are NIM's, of no stated release: a release named for it was dropped without a word."""
    from infercost.performance.predict import predict_roofline

    predicted = predict_roofline("llama-3.1-8b", "H100", 1, "fp8", 1000, 100, release="1.2.0")
    assert any(note.startswith("no table of release 1.2.0 of this model and weights is bundled: calibrated on")
               and "leaves unnamed" in note for note in predicted.notes)  # fmt: skip
    unnamed = predict_roofline("llama-3.1-8b", "H100", 1, "fp8", 1000, 100)
    assert not any("release" in note for note in unnamed.notes)


def test_a_release_named_for_a_model_with_no_table_says_there_is_none_to_take_it_from() -> None:
    from infercost.performance.predict import predict_roofline

    predicted = predict_roofline("qwen3-30b-a3b", "H100", 1, "bfloat16", 1000, 100, engine="sglang", release="0.5.9")
    assert predicted.transfer == "model"
    assert "release 0.5.9 named, but no table of this model is bundled to take it from" in predicted.notes


def test_a_setup_its_own_fit_misses_is_not_the_calibration_though_it_has_the_layout_asked_for() -> None:
    """Moved to 4x MI355X, the misfit sweep (plain TP4, the layout asked for) predicted 541 ms TTFT at 4 users where
    InferenceX measured 148 ms (SGLang 0.5.9, 1K/1K). A setup that fits itself is taken instead: InferenceX's July
    2026 sweep of that layout, since its tables are no longer pooled with the misfit's (118 ms; before, 0.5.9's
    sweep under EP4, 127 ms)."""
    from infercost.performance.predict import _misfit, predict_roofline

    predicted = predict_roofline("deepseek-r1", "MI355X", 4, "mxfp4", 1024, 1024, engine="sglang")
    assert _misfit(MISFIT_TABLE)
    assert "aic-sglang-unversioned" not in predicted.notes[0]
    assert predicted.parallel == {"tensor_parallel": 4, "expert_parallel": 1, "data_parallel": 1}
    assert 148 / 2 < next(p for p in predicted.points if p.level == 4).mean_ttft_ms < 148 * 2


def test_a_release_named_whose_every_table_is_a_misfit_is_calibrated_on_another_and_says_why() -> None:
    """gpt-oss-120b under vLLM 0.11.2 on 2x H100: two tables, both at 512 users, queued for 113 s and 462 s. Its fit
    put 79 s on every request, and named, that release predicted 172 s of TTFT for 4 users of 1K prompts. A misfit
    is a source only where no other will do, of the release named too: another release's fitting tables are taken,
    and the prediction says why and carries the error of a source of any release."""
    from infercost.performance.expected_error import held_out_error
    from infercost.performance.predict import _misfit, predict_roofline

    misfit = "published:aic-vllm-0.11.2-gpt-oss-120b-2xh100-sxm-fp4-tp2-dp1-ep1-1024in-8192out"
    assert _misfit(misfit)
    predicted = predict_roofline("gpt-oss-120b", "H100", 2, "mxfp4", 1024, 1024, engine="vllm", release="0.11.2")
    assert "vLLM 0.11.2" not in predicted.notes[0] and predicted.transfer == "any_release"
    assert predicted.expected_error == held_out_error("moe", "vllm", "any_release")
    assert any(note.startswith("release 0.11.2's tables of this model and weights (") and "cannot fit" in note
               for note in predicted.notes)  # fmt: skip
    assert next(p for p in predicted.points if p.level == 4).mean_ttft_ms < 1000


def test_a_prediction_on_a_setup_its_own_calibration_misses_says_the_error_quoted_understates_it() -> None:
    """Asked by name, a misfit table is still predicted from its own setup (a person chose it), but the error quoted
    is that of setups the engine model fits (5% median on throughput here, where it predicted 172 s of TTFT for 4
    users of a setup its tables put at 512): the notes say so; a setup that fits itself says nothing of it."""
    from infercost.performance.predict import predict_profile
    from infercost.performance.profiles import find_profile

    misfit = predict_profile(find_profile("published:aic-vllm-0.11.2-gpt-oss-120b-2xh100-sxm-fp4-tp2-dp1-ep1-1024in-"
                                          "8192out"), 1024, 1024)  # fmt: skip
    assert any("cannot fit" in note and "understates" in note for note in misfit.notes)
    fits = predict_profile(find_profile("published:aic-sglang-0.5.9-deepseek-r1-4xb200-fp4-tp4-dp1-ep4-1024in-1024out"),
                           1024, 1024)  # fmt: skip
    assert not any("cannot fit" in note for note in fits.notes)


def _throughput(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "infercost", "throughput", *args, "--input-tokens", "1000",
                           "--output-tokens", "300"], capture_output=True, text=True, timeout=180)  # fmt: skip


@pytest.mark.parametrize("args", [
    ["roofline:deepseek-r1@4xB200:nvfp4", "--engine", "sglang", "--engine-version", "0.5.9; rm -rf /"],
    ["roofline:deepseek-r1@4xB200:nvfp4", "--engine", "sglang", "--engine-version", ""],
    ["roofline:deepseek-r1@4xB200:nvfp4", "--engine", "sglang", "--engine-version", "v"],  # not the unnamed release
    [MISFIT_TABLE, "--engine-version", "0.5.9"],  # a published table was measured on its own release
])  # fmt: skip
def test_a_bad_or_misplaced_release_is_one_line_naming_the_field(args: list[str]) -> None:
    done = _throughput(*args)
    assert done.returncode == 2 and "engine_version" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_json_answer_names_the_release_asked_for() -> None:
    done = _throughput("roofline:deepseek-r1@4xB200:nvfp4", "--engine", "sglang", "--engine-version", "0.5.9",
                       "--expert-parallel", "4", "--concurrency", "4", "--json")  # fmt: skip
    payload = json.loads(done.stdout)
    assert payload["engine_version"] == "0.5.9" and payload["transfer"] == "shape"


def test_the_stored_held_out_calibrations_are_current_and_what_fitting_gives() -> None:
    """A roofline ranked and calibrated on held-out setups fitted each afresh: 7 s before the first answer for
    Llama-3.1-8B under SGLang on 8x H100 (ten setups). They are stored with a fingerprint of the tables and engine
    model they were fitted to; one that is not current is fitted again (slow, never wrong), and this keeps them
    current: `python -m bench.held_out_accuracy --write-calibrations` after a change to either."""
    from infercost.performance.calibrate import Calibration, prompts_vary
    from infercost.performance.expected_error import stored_held_out_calibrations
    from infercost.performance.predict import group_fingerprint, group_key, held_out_scalings, held_out_tables
    from infercost.performance.validation import model_engine, points_of, prompt_scaling

    setups = group_tables(t.table for t in held_out_tables().values())
    stored = stored_held_out_calibrations()
    scalings = held_out_scalings()
    stale = [group_key(m[0]) for m in setups.values()
             if stored.get(group_key(m[0]), {}).get("fingerprint") != group_fingerprint(m, scalings)]  # fmt: skip
    assert not stale, f"{len(stale)} stale, e.g. {stale[:3]}: run python -m bench.held_out_accuracy " \
                      "--write-calibrations"  # fmt: skip
    one_prompt = next(g for g in setups if g[0] == "deepseek-r1" and not prompts_vary(points_of(setups[g])))
    assert prompt_scaling(model_engine(setups[one_prompt][0]), points_of(setups[one_prompt]), scalings)
    for group in (next(g for g in setups if g[0] == "qwen3-235b-a22b"), one_prompt):  # the second takes R1's scaling
        members = setups[group]
        fitted, entry = fit_tables(members, scalings=scalings), stored[group_key(members[0])]
        assert Calibration.from_json(entry["calibration"]).coefficients == pytest.approx(fitted.coefficients,
                                                                                          rel=1e-3)  # fmt: skip
        assert entry["misfit"] == (fit_error(fitted, members) > MISFIT)
