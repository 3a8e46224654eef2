"""The InferenceX importer (``scripts/published_from_inferencex.py``): microseconds become milliseconds, throughput is
derived by Little's law, and a run AIConfigurator's sample already bundles, a model without a bundled config or a
layout the scenario does not name is left out and counted, never written twice."""

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "published_from_inferencex.py"
spec = importlib.util.spec_from_file_location("published_from_inferencex", SCRIPT)
importer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(importer)
BUNDLED = "aic-trtllm-unversioned-deepseek-r1-8xh200-fp8-tp8-dp1-ep1-1024in-1024out.json"


def anchor(scenario: str, label: str, levels: dict[int, tuple[float, float]], config: int = 1) -> dict:
    """One sweep as inference-sim keeps it: per concurrency, TPOT and TTFT in microseconds."""
    return {"scenario": scenario, "label": label, "source_config_id": config, "source_run_date": "2026-05-17",
            "absolute_tpot_us": {str(c): tpot for c, (tpot, _) in levels.items()},
            "absolute_ttft_us": {str(c): ttft for c, (_, ttft) in levels.items()}}  # fmt: skip


def test_new_sweeps_are_written_and_bundled_runs_models_and_layouts_left_out(tmp_path, monkeypatch, capsys):
    out = tmp_path / "published"
    out.mkdir()
    shutil.copy(importer.OUT / BUNDLED, out / BUNDLED)
    (out / "ix-stale.json").write_text("{}")  # an earlier import's table: replaced
    bundled = json.loads((out / BUNDLED).read_text())["points"][0]  # c=4 of config 83's 2025 run
    monkeypatch.setattr(importer, "OUT", out)
    document = {"release_tag": "db-dump/2026-09-28", "anchors": [
        anchor("gpt-oss-120b-h200-fp4-vllm-tp2.yaml", "8k1k", {4: (5360.2, 268645.8), 16: (10289.0, 433688.3)}, 129),
        # the same run exported again, its TPOT 8 us off (rounded otherwise): still a copy
        anchor("deepseek-v3-h200-fp8-trt-tp8.yaml", "1k1k",
               {4: (bundled["mean_tpot_ms"] * 1000 - 8, bundled["mean_ttft_ms"] * 1000), 8: (15870.5, 289881.9)},
               83),
        anchor("minimax-m3-b200-fp4-vllm-tp2.yaml", "1k1k", {4: (7865.9, 88527.5)}),
        anchor("minimax-m2.5-b200-fp4-vllm-tp2-ep4-dp2.yaml", "1k1k", {256: (23528.6, 261440.6)}),
    ]}  # fmt: skip
    source = tmp_path / "inferencex.json"
    source.write_text(json.dumps(document))
    assert importer.main([str(source)]) == 0
    written = sorted(path.name for path in out.glob("ix-*.json"))
    assert written == ["ix-vllm-unversioned-gpt-oss-120b-2xh200-fp4-tp2-dp1-ep1-8192in-1024out-config129.json"]
    said = capsys.readouterr().out
    assert "1 tables written" in said and "already bundled" in said and "minimax-m3" in said
    assert "layout not named" in said
    table = json.loads((out / written[0]).read_text())
    assert table["source"].startswith("https://github.com/inference-sim/inference-sim/blob/129e0b8")
    assert (table["hardware"], table["gpus_per_replica"], table["engine_kind"]) == ("H200", 2, "vllm")
    assert table["engine_version"] is None and table["as_of"] == "2026-05-17" and not table["calibration_set"]
    first = table["points"][0]
    assert (first["mean_tpot_ms"], first["mean_ttft_ms"]) == pytest.approx((5.3602, 268.6458))
    assert first["request_throughput"] == pytest.approx(4 / (268.6458 + 1023 * 5.3602) * 1000, rel=1e-6)
    assert first["output_throughput"] == pytest.approx(first["request_throughput"] * 1024, rel=1e-6)
