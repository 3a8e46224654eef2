"""Retired and retiring models are flagged with their successor; a newer price file is reviewed as a diff before it
applies, and applying it writes the person's own overrides, never the bundled data."""

import datetime as dt
import json
from importlib import resources
from pathlib import Path

import pytest

from infercost.pricing import ApiPrice, GpuPrice, bundled_api_prices
from infercost.pricing.diff import API_FIELDS, diff_entries, review_api_upload, updated_entries
from infercost.pricing.lifecycle import lifecycle, lifecycle_note

EXCERPT = Path(__file__).with_name("fixtures") / "litellm_1.110.2_excerpt.json"
BASE = {"id": "m", "provider": "p", "input_per_mtok": 1.0, "output_per_mtok": 2.0, "source": "https://x",
        "as_of": "2026-11-20"}  # fmt: skip
TODAY = dt.date(2026, 12, 1)


@pytest.mark.parametrize(
    ("deprecation", "status"),
    [(None, "current"), ("2027-06-01", "current"), ("2026-12-31", "retiring"), ("2026-12-01", "retired"),
     ("2026-07-24", "retired")],
)  # fmt: skip
def test_lifecycle_follows_the_deprecation_date(deprecation, status):
    assert lifecycle(ApiPrice(**BASE, deprecation_date=deprecation), today=TODAY) == status


def test_a_flagged_model_names_its_successor():
    entry = ApiPrice(**BASE, deprecation_date="2026-12-11", successor="m2")
    assert lifecycle_note(entry, today=TODAY) == "retires 2026-12-11 (in 10 days); successor: m2"


def test_the_bundled_catalog_dates_retired_models_and_names_successors_it_holds():
    catalog = {entry.id: entry for entry in bundled_api_prices()}
    assert lifecycle(catalog["deepseek-chat"], today=TODAY) == "retired"
    assert catalog["deepseek-chat"].successor == "deepseek-v4-flash"
    assert lifecycle(catalog["gpt-5"], today=TODAY) == "retiring" and catalog["gpt-5"].successor == "gpt-5.6-sol"
    assert all(entry.successor in catalog for entry in catalog.values() if entry.successor)


def test_no_retired_model_appears_unflagged_in_prices(cli):
    payload = cli("prices", "--json").json()
    today = dt.date.today()
    for row in payload["api"]:
        retired = row["deprecation_date"] is not None and dt.date.fromisoformat(row["deprecation_date"]) <= today
        assert (row["lifecycle"] == "retired") == retired, row["id"]
    text = cli("prices").stdout
    assert "Retired or retiring within 30 days" in text and "deepseek-chat" in text.split("Retired or retiring")[1]


def test_diff_lists_new_removed_and_changed_values_with_deliberate_ones_marked():
    old = [ApiPrice(**BASE, notes="Corrected cached_input_per_mtok: provider page says so.", cached_input_per_mtok=0.2),
           ApiPrice(**BASE | {"id": "gone"})]  # fmt: skip
    new = [ApiPrice(**BASE | {"input_per_mtok": 1.5}, cached_input_per_mtok=0.1), ApiPrice(**BASE | {"id": "fresh"})]
    diff = diff_entries(old, new, API_FIELDS, today=TODAY)
    assert diff.added == ["fresh"] and diff.removed == ["gone"]
    assert [(c.field, c.old, c.new, c.deliberate) for c in diff.changed] == [
        ("input_per_mtok", 1.0, 1.5, False), ("cached_input_per_mtok", 0.2, 0.1, True)]  # fmt: skip
    assert diff.to_json()["summary"] == {"added": 1, "removed": 1, "flagged": 0, "changed": 1, "deliberate": 1}
    (kept,) = [e for e in updated_entries(old, new, diff) if e.id == "m"]
    assert kept.input_per_mtok == 1.5 and kept.cached_input_per_mtok == 0.2  # the deliberate correction survives


def test_the_map_differs_from_the_catalog_only_where_the_catalog_says_why(cli):
    payload = cli("prices", "diff", "--litellm", str(EXCERPT), "--json").json()
    assert payload["changed"], "the excerpt holds the catalog's deliberate differences"
    assert all(change["deliberate"] for change in payload["changed"]), payload["changed"]
    deliberate = {(c["id"], c["field"]) for c in payload["changed"]}
    assert {("claude-sonnet-5-5", "cached_input_per_mtok"), ("deepseek-v4-flash", "cache_write_per_mtok"),
            ("fireworks/deepseek-v3", "cached_input_per_mtok")} <= deliberate  # fmt: skip
    assert payload["added"] == []
    assert {row["id"] for row in payload["flagged"]} >= {"gpt-5", "claude-sonnet-4-5", "deepseek-chat"}


def test_update_writes_your_overrides_and_prices_then_uses_them(cli, tmp_path, infercost_home):
    entry = json.loads(EXCERPT.read_text())["gpt-4o"] | {"input_cost_per_token": 2e-06}
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"gpt-4o": entry, "gpt-7-nova": entry}))
    bundled = resources.files("infercost.pricing").joinpath("data", "api_prices.json").read_text()
    done = cli("prices", "update", "--litellm", str(path))
    assert done.code == 0, done.stderr
    assert "changed: gpt-4o.input_per_mtok: 2.5 -> 2.0" in done.stdout and "new: gpt-7-nova" in done.stdout
    saved = json.loads((infercost_home / "price_overrides.json").read_text())["entries"]
    assert {e["id"] for e in saved} == {"gpt-4o", "gpt-7-nova"}
    assert resources.files("infercost.pricing").joinpath("data", "api_prices.json").read_text() == bundled
    prices = {row["id"]: row for row in cli("prices", "--json").json()["api"]}
    assert prices["gpt-4o"]["input_per_mtok"] == 2.0 and prices["gpt-4o"]["tokenizer_fidelity"] == "exact"
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"calls_per_day": 1000, "prompt_tokens": 1000, "output_tokens": 0,
                                   "api_models": ["gpt-7-nova"]}))  # fmt: skip
    estimate = cli("estimate", str(profile), "--json")
    assert estimate.code == 0, estimate.stderr
    assert estimate.json()["api"][0]["cost_per_day"] == pytest.approx(2.0)  # 1e6 tokens at the updated $2.00


@pytest.mark.parametrize("args", [(), ("--litellm", "a.json", "--gpu", "b.json")])
def test_diff_needs_exactly_one_source(cli, args):
    done = cli("prices", "diff", *args)
    assert done.code == 2 and done.stderr.count("\n") == 1 and "exactly one of" in done.stderr


def test_gpu_offers_get_the_same_diff(cli, tmp_path):
    offer = {"id": "lambda-gh200-on-demand", "gpu": "GH200", "provider": "Lambda", "price_per_hour": 1.99,
             "kind": "on-demand", "source": "https://lambda.ai/instances", "as_of": "2026-12-01"}  # fmt: skip
    path = tmp_path / "offers.json"
    path.write_text(json.dumps([offer, offer | {"id": "new-gh200", "provider": "Elsewhere"}]))
    payload = cli("prices", "diff", "--gpu", str(path), "--json").json()
    assert payload["kind"] == "gpu" and payload["added"] == ["new-gh200"]
    assert [(c["id"], c["field"], c["old"], c["new"]) for c in payload["changed"]] == [
        ("lambda-gh200-on-demand", "price_per_hour", 2.29, 1.99)]  # fmt: skip


def test_an_upload_is_reviewed_before_it_applies():
    catalog = list(bundled_api_prices())
    document = json.loads(EXCERPT.read_text())
    entries, diff, skipped = review_api_upload(document, catalog, name="map.json", today=TODAY)
    assert all(change.deliberate for change in diff.changed) and not entries  # nothing but deliberate differences
    assert skipped["gemini/gemma-3-27b-it"] == "no price (free or experimental)"
    mine = [BASE | {"id": "gpt-4o", "provider": "OpenAI", "input_per_mtok": 1.0}]
    entries, diff, _ = review_api_upload(mine, catalog, name="mine.json", today=TODAY)
    assert [e.id for e in entries] == ["gpt-4o"] and ("gpt-4o", "input_per_mtok", 2.5, 1.0) in [
        (c.id, c.field, c.old, c.new) for c in diff.changed]  # fmt: skip


def test_every_gpu_the_throughput_tables_name_has_sourced_dated_offers():
    from infercost.pricing import bundled_gpu_prices

    offers = bundled_gpu_prices()
    named = ("H100 SXM", "H100 PCIe", "H200", "B200", "A100 80GB", "A100 40GB", "A100 80GB PCIe", "L40S", "L4",
             "RTX 4090", "RTX PRO 6000 Blackwell Server")
    for gpu in named:
        mine = [o for o in offers if o.gpu == gpu]
        assert len(mine) >= 3, gpu
        assert all(o.source.startswith("https://") and o.as_of.year == 2026 for o in mine)
    assert {o.kind for o in offers if o.gpu == "H100 SXM"} == {"on-demand", "spot", "reserved"}
    assert len([o for o in offers if o.gpu == "GH200"]) == 2  # only two sourced offers (SOURCES.md says so)
    assert len([o for o in offers if o.gpu == "GB200"]) == 1  # one (SOURCES.md says so)
    assert all(isinstance(o, GpuPrice) for o in offers)


def test_every_gpu_a_published_table_names_has_an_offer_under_its_datasheet_name():
    from infercost.pricing import bundled_gpu_prices, bundled_gpu_specs

    published = resources.files("infercost.performance").joinpath("data", "published")
    named = {json.loads(table.read_text())["hardware"] for table in published.iterdir() if table.name.endswith(".json")}
    offered = {offer.gpu for offer in bundled_gpu_prices()}
    assert named and named <= offered, named - offered
    assert offered <= {spec.gpu for spec in bundled_gpu_specs()}


def test_an_estimate_of_a_retired_model_says_so_and_names_the_successor(cli, tmp_path):
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"calls_per_day": 1000, "prompt_tokens": 100, "output_tokens": 10,
                                   "api_models": ["deepseek-chat", "deepseek-v4-flash"]}))  # fmt: skip
    rows = {row["model"]: row for row in cli("estimate", str(profile), "--json").json()["api"]}
    assert rows["deepseek-chat"]["warnings"][0] == "model retired 2026-07-24; successor: deepseek-v4-flash"
    assert rows["deepseek-chat"]["cost_per_day"] > 0  # still priced for old scenarios
    assert not any(w.startswith("model ") for w in rows["deepseek-v4-flash"]["warnings"])
