"""An INFERCOST_HOME that cannot be created: commands that need no store still work; those that do say why in one
line (exit 2)."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_estimate_cli import DESIGN_PROFILE


@pytest.fixture
def unmakeable_home(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("INFERCOST_HOME", str(blocker / "home"))  # a directory inside a file: mkdir fails
    return blocker / "home"


def test_estimate_and_prices_need_no_home(cli, tmp_path, unmakeable_home):
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps(DESIGN_PROFILE))
    done = cli("estimate", str(profile), "--json")
    assert done.code == 0 and done.json()["self_host"][0]["replicas"] >= 1, done.stderr
    done = cli("prices", "--json")
    assert done.code == 0 and done.json(), done.stderr


def test_a_command_that_opens_the_store_says_the_home_cannot_be_made(cli, unmakeable_home):
    done = cli("runs", "--json")
    assert done.code == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: INFERCOST_HOME: cannot create {unmakeable_home}") and \
        done.stderr.count("\n") == 1
