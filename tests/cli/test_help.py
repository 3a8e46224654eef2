"""Every command has help, and the README (or a page of docs/) documents every command."""

from pathlib import Path

import pytest

from infercost.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
NAMES = sorted(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]


def test_every_command_module_is_registered():
    assert len(NAMES) >= len(COMMANDS)


@pytest.mark.parametrize("name", NAMES)
def test_every_command_has_help_and_an_example(name, capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([name, "--help"])
    assert exited.value.code == 0
    assert "Example" in capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_every_command_is_in_the_readme(name):
    pages = [README, *sorted((ROOT / "docs").glob("*.md"))]
    assert any(f"python -m infercost {name}" in page.read_text(encoding="utf-8") for page in pages)
