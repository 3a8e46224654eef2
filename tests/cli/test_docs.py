"""The docs and the CLI cannot drift apart: docs/cli.md is what the parsers say, every command is documented, and
every flag a page names exists (``python -m infercost.docs_cli --check`` runs the same checks)."""

import re

import pytest

from infercost.cli import build_parser
from infercost.docs_cli import CLI_DOC, PROG, broken_links, doc_pages, main, reference, unknown_flags, walk

PAGES = doc_pages()
PATHS = [" ".join(path) for path, _ in walk(build_parser())]


def test_the_cli_reference_is_what_the_parsers_say():
    assert CLI_DOC.read_text(encoding="utf-8") == reference(), "stale: run python -m infercost.docs_cli --write"


@pytest.mark.parametrize("path", PATHS)
def test_every_command_and_sub_command_has_a_section_in_the_reference(path):
    assert re.search(rf"^#+ `{re.escape(path)}`$", CLI_DOC.read_text(encoding="utf-8"), re.M), path


@pytest.mark.parametrize("name", sorted({path.split()[0] for path in PATHS}))
def test_every_command_is_shown_at_work_in_a_page_beside_the_reference(name):
    pages = [page for page in PAGES if page != CLI_DOC]
    assert any(f"{PROG} {name}" in page.read_text(encoding="utf-8") for page in pages), name


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_flag_a_page_names_exists(page):
    assert unknown_flags(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(("markdown", "problem"), [
    ("`python -m infercost bench --concurency 1,5`", "--concurency is not an option of `python -m infercost bench`"),
    ("`python -m infercost batch run x.jsonl --shard 5`", "--shard is not an option of `python -m infercost batch"),
    ("```bash\npython -m infercost tokens --tokenizer llama3 \\\n    --feild prompt f.jsonl\n```", "--feild"),
    ("`python -m infercost modles list`", "there is no command `python -m infercost modles`"),
    ("`--max-costs`", "no command takes --max-costs"),
    ("`python -m bench.prediction_accuracy --write-doc`", "--write-doc is not an option"),
])
def test_a_flag_or_command_that_does_not_exist_is_named(markdown, problem):
    assert any(problem in line for line in unknown_flags(markdown)), unknown_flags(markdown)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_link_of_a_page_reaches_its_file_and_heading(page):
    assert broken_links(page) == []


def test_a_link_to_a_missing_file_or_heading_is_named(tmp_path):
    (tmp_path / "there.md").write_text("# Here\n\n## On a GPU\n")
    page = tmp_path / "page.md"
    page.write_text("[a](there.md#on-a-gpu) [b](there.md#on-a-cpu) [c](gone.md) [d](https://example.com/x.md)\n")
    assert broken_links(page) == ["there.md#on-a-cpu: no such heading", "gone.md: no such file"]


def test_the_check_fails_on_a_stale_reference(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "cli.md"
    stale.write_text(reference().replace("--max-cost", "--max-spend"), encoding="utf-8")
    monkeypatch.setattr("infercost.docs_cli.CLI_DOC", stale)
    assert main(["--check"]) == 1 and "stale" in capsys.readouterr().err
    assert main(["--write"]) == 0 and main(["--check"]) == 0
