"""docs/engine-model.md shows the errors the harness stored, not figures typed by hand that could drift from them."""

import json

from bench.prediction_accuracy import ENGINE_MODEL_DOC, TABLE_MARKER, accuracy_table, main, replace_between
from infercost.performance.expected_error import EXPECTED_ERROR_PATH


def stored() -> dict:
    return json.loads(EXPECTED_ERROR_PATH.read_text(encoding="utf-8"))


def test_the_engine_model_page_shows_the_stored_errors():
    table = accuracy_table(stored())
    text = ENGINE_MODEL_DOC.read_text(encoding="utf-8")
    assert f"<!-- {TABLE_MARKER}:start -->\n{table}\n<!-- {TABLE_MARKER}:end -->" in text, \
        "run python -m bench.prediction_accuracy --write-docs"


def test_the_table_has_a_row_per_stored_error_with_its_figures():
    summary = stored()
    rows = accuracy_table(summary).splitlines()[2:]
    expected = sum(len(metrics) for metrics in summary["transfers"].values()) + 2  # + the two cross-GPU ratios
    assert len(rows) == expected
    throughput = summary["transfers"]["gpu"]["request_throughput"]
    row = next(row for row in rows if row.startswith("| gpu | request_throughput |"))
    assert row.startswith(f"| gpu | request_throughput | {throughput['n']} | {throughput['median_abs']:.1%} |")


def test_write_docs_rewrites_only_what_lies_between_the_markers(tmp_path, monkeypatch):
    page = tmp_path / "engine-model.md"
    page.write_text(f"before\n<!-- {TABLE_MARKER}:start -->\nold figures\n<!-- {TABLE_MARKER}:end -->\nafter\n")
    monkeypatch.setattr("bench.prediction_accuracy.ENGINE_MODEL_DOC", page)
    assert main(["--write-docs"]) == 0
    assert page.read_text() == replace_between(page.read_text(), TABLE_MARKER, accuracy_table(stored()))
    assert page.read_text().startswith("before\n") and page.read_text().endswith("\nafter\n")
    assert "old figures" not in page.read_text() and "| shape | request_throughput |" in page.read_text()


def test_the_engine_model_page_shows_the_stored_held_out_errors():
    from bench.held_out_accuracy import HELD_OUT_MARKER, held_out_table
    from infercost.performance.expected_error import HELD_OUT_ERROR_PATH

    table = held_out_table(json.loads(HELD_OUT_ERROR_PATH.read_text(encoding="utf-8")))
    text = ENGINE_MODEL_DOC.read_text(encoding="utf-8")
    assert f"<!-- {HELD_OUT_MARKER}:start -->\n{table}\n<!-- {HELD_OUT_MARKER}:end -->" in text, \
        "run python -m bench.held_out_accuracy --write-docs"


def test_the_readme_shows_the_stored_held_out_errors_in_short():
    from bench.held_out_accuracy import README, README_MARKER, readme_table
    from infercost.performance.expected_error import HELD_OUT_ERROR_PATH

    summary = json.loads(HELD_OUT_ERROR_PATH.read_text(encoding="utf-8"))
    table = readme_table(summary)
    assert f"<!-- {README_MARKER}:start -->\n{table}\n<!-- {README_MARKER}:end -->" in README.read_text(
        encoding="utf-8"), "run python -m bench.held_out_accuracy --write-docs"  # fmt: skip
    moe_vllm = summary["slices"]["moe/vllm"]["shape"]["request_throughput"]
    assert f"| moe/vllm | other shapes, same setup | {moe_vllm['median_abs']:.0%} |" in table
