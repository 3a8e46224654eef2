"""docs/tokens.md's table of what the same passage costs per language is what the bundled samples count today."""

import re
from pathlib import Path

from infercost.tokenizers.languages import LANGUAGE_NAMES, multiplier_vs_english

PAGE = Path(__file__).resolve().parents[2] / "docs" / "tokens.md"


def language_rows() -> tuple[list[str], list[list[str]]]:
    lines = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    header = next(line for line in lines if line.startswith("| language |"))
    start = lines.index(header)
    rows = [re.split(r"\s*\|\s*", line.strip("| ")) for line in lines[start + 2:]]
    return re.split(r"\s*\|\s*", header.strip("| "))[1:], [row for row in rows if row[0] in LANGUAGE_NAMES.values()]


def test_every_multiplier_in_the_page_is_what_the_tokenizer_counts():
    tokenizers, rows = language_rows()
    codes = {name: code for code, name in LANGUAGE_NAMES.items()}
    assert len(tokenizers) == 6 and len(rows) >= 5
    for language, *cells in rows:
        counted = [f"{multiplier_vs_english(tokenizer, codes[language]):.2f}" for tokenizer in tokenizers]
        assert cells == counted, language
