"""The profiles a newcomer starts from (examples/ and the one docs/profile.md shows) are priced without an error."""

import re
from pathlib import Path

import pytest

from infercost.estimate import estimate, load_catalog
from infercost.files import parse_document, read_document
from infercost.profile import parse_profile

ROOT = Path(__file__).resolve().parents[2]
PROFILE_PAGE = (ROOT / "docs" / "profile.md").read_text(encoding="utf-8")


def documents() -> list[tuple[str, dict]]:
    examples = [(path.name, read_document(path)) for path in sorted((ROOT / "examples").glob("*.yaml"))]
    (shown,) = re.findall(r"```json\n(.*?)```", PROFILE_PAGE, re.S)
    return [*examples, ("docs/profile.md", parse_document(shown, name="docs/profile.md"))]


@pytest.mark.parametrize(("name", "document"), documents(), ids=[name for name, _ in documents()])
def test_every_example_profile_is_priced_on_every_model_it_names(name, document):
    result = estimate(parse_profile(document, name=name), catalog=load_catalog(None), load_run=None)
    assert {row["model"] for row in result["api"]} >= set(document.get("api_models", []))
    assert all(row["meets_slo"] and row["cost_per_month"] > 0 for row in result["self_host"]), result["self_host"]


def test_the_example_batch_file_is_budgeted_record_by_record(tmp_path):
    from infercost import batch

    config = batch.JobConfig(base_url="http://127.0.0.1:8000/v1", model="random:tiny-llama", out_dir=str(tmp_path))
    created = batch.create_job(ROOT / "examples" / "requests.jsonl", config, price="gpt-4o-mini")
    assert created["budget"]["records"] == 12 and created["budget"]["cost"] > 0
