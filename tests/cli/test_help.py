"""Every command has help with an example, and the help text keeps its examples one to a line."""

import re

import pytest

from infercost.cli import COMMANDS, build_parser
from infercost.docs_cli import walk

NAMES = sorted(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
PATHS = [" ".join(path) for path, _ in walk(build_parser())]


def test_every_command_module_is_registered():
    assert len(NAMES) >= len(COMMANDS)


@pytest.mark.parametrize("name", NAMES)
def test_every_command_has_help_and_an_example(name, capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([name, "--help"])
    assert exited.value.code == 0
    assert "Example" in capsys.readouterr().out


@pytest.mark.parametrize("path", PATHS)
def test_no_example_in_the_help_runs_two_lines_together(path):
    # Regression: a docstring's lone "\" at a line's end joined `batch run ... random:tiny-llama` and its indented
    # `--executor ray ...` continuation into one line, with 14 spaces before the flag.
    description = dict(walk(build_parser()))[tuple(path.split())].description or ""
    joined = [line for line in description.splitlines() if re.search(r"\S {4,}--", line)]
    assert not joined, joined
