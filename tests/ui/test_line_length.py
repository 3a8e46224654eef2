"""infercost/ui keeps to the line length that pyproject's ruff config sets (E501): "# fmt: skip" lines included,
since a formatter skipping a line does not make it shorter."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_ui_line_is_longer_than_the_project_allows():
    limit = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["line-length"]
    files = sorted((ROOT / "infercost/ui").rglob("*.py"))
    long = [f"{path.relative_to(ROOT)}:{number} ({len(line)})" for path in files
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if len(line) > limit]
    assert not long, long
