"""AIConfigurator's bundled predictions (``aic-predictions-aiconfigurator-*.csv``) join the bundled AIConfigurator
tables: every id is a point's ``source_id`` or one of its copies' (``same_as``), ids are unique, and a prediction is
two positive numbers exactly where the status says it was predicted. Reads the files directly (fast: no engine
model)."""

import json
import math
from pathlib import Path

import infercost.performance
from bench.aiconfigurator_same_points import PREDICTIONS, read_predictions

PUBLISHED = Path(infercost.performance.__file__).parent / "data" / "published"


def test_the_bench_reads_the_bundled_csv():
    assert PREDICTIONS.resolve().parent == PUBLISHED.resolve()
    assert PREDICTIONS.read_text(encoding="utf-8").startswith("#")  # the header comment says how it was made


def test_every_prediction_joins_a_bundled_point():
    source_ids = set()
    for path in PUBLISHED.glob("aic-*.json"):
        for point in json.loads(path.read_text(encoding="utf-8"))["points"]:
            source_ids.update([point["source_id"], *point.get("same_as", ())])
    rows = read_predictions(PREDICTIONS)
    with PREDICTIONS.open(encoding="utf-8") as f:
        assert sum(1 for line in f if not line.startswith("#")) == len(rows) + 1  # no id twice (+ the header)
    assert len(rows) >= 100
    unjoined = set(rows) - source_ids  # the converter leaves out the 12 sample rows with no client concurrency
    assert len(unjoined) <= 12 and all("_c_" in i for i in unjoined), sorted(unjoined)  # their id reads "..._c_tp8"
    for row in rows.values():
        values = (row["predicted_ttft_ms"], row["predicted_tpot_ms"])
        if row["status"].startswith("ok"):
            assert all(math.isfinite(float(v)) and float(v) > 0 for v in values), row
        else:
            assert row["status"].startswith("error: ") and values == ("", ""), row


def test_the_engine_model_page_shows_the_stored_comparison():
    from bench.aiconfigurator_same_points import DOCS_MARKER, STORED, markdown
    from bench.prediction_accuracy import ENGINE_MODEL_DOC

    stored = json.loads(STORED.read_text(encoding="utf-8"))
    assert stored["aiconfigurator"]["tried"] == len(read_predictions(PREDICTIONS))  # stored from the bundled CSV
    table = markdown(stored)
    assert f"<!-- {DOCS_MARKER}:start -->\n{table}\n<!-- {DOCS_MARKER}:end -->" in ENGINE_MODEL_DOC.read_text(
        encoding="utf-8"), "run python -m bench.aiconfigurator_same_points --write-docs"
