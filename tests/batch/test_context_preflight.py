"""Issue 24: planning a job warns, naming the records, when a record's prompt + max_tokens passes the context the
server reports (``max_model_len`` in ``/v1/models``, as vLLM gives it) or, without one, the priced model's catalog
context window. Nothing warned before: the server refused those records one by one during the run."""

import json

from infercost.batch import JobConfig, create_job


def write_records(path, prompt_words: list[int], max_tokens: int = 64):
    with open(path, "w", encoding="utf-8") as out:
        for i, words in enumerate(prompt_words):
            messages = [{"role": "user", "content": "hello " * words}]
            body = {"model": "scripted", "max_tokens": max_tokens, "messages": messages}
            out.write(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
                                  "body": body}) + "\n")  # fmt: skip
    return path


def context_warnings(created: dict) -> list[str]:
    return [w for w in created["budget"]["warnings"] if "context" in w]


def test_records_past_the_servers_max_model_len_are_named(tmp_path, scripted):
    source = write_records(tmp_path / "in.jsonl", [10, 2_000, 10, 990, 950])
    with scripted(max_model_len=1_024) as url:
        config = JobConfig(base_url=url, model="scripted", out_dir=str(tmp_path / "out"))
        created = create_job(source, config, db_path=tmp_path / "db.sqlite")
    [warning] = context_warnings(created)
    assert "2 records" in warning and "1,024-token context (the server's max_model_len)" in warning
    assert "records 2, 4." in warning  # 2,000 + 64 and 990 + 64 pass 1,024; 950 + 64 does not


def test_without_a_server_context_the_catalog_window_of_the_priced_model_is_used(tmp_path, scripted):
    source = write_records(tmp_path / "in.jsonl", [10, 130_000])
    with scripted() as url:  # reports no max_model_len
        config = JobConfig(base_url=url, model="scripted", out_dir=str(tmp_path / "out"))
        created = create_job(source, config, db_path=tmp_path / "db.sqlite", price="gpt-4o-mini")
    [warning] = context_warnings(created)
    assert "gpt-4o-mini's context window in the catalog" in warning and "records 2." in warning


def test_records_that_fit_get_no_warning(tmp_path, scripted):
    source = write_records(tmp_path / "in.jsonl", [10, 20])
    with scripted(max_model_len=1_024) as url:
        config = JobConfig(base_url=url, model="scripted", out_dir=str(tmp_path / "out"))
        assert context_warnings(create_job(source, config, db_path=tmp_path / "db.sqlite")) == []
