"""The README's five-step tour, run as a newcomer runs it: every command of it, as written, from a clean home, and
the figures its text quotes checked against what those commands print. A README that drifts from the product, or a
tour step that stops working, fails here."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.ui.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TOUR = README.split("## A five-step tour", 1)[1].split("\n## ", 1)[0]


def tour_commands() -> list[list[str]]:
    """Each command of the tour's code blocks as its arguments: continuation lines joined, comments dropped."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", TOUR, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip():
                commands.append(shlex.split(line, comments=True))
    return commands


def quoted(pattern: str) -> float:
    """A figure the tour's text states, e.g. 'about 180 tokens/s'."""
    match = re.search(pattern, " ".join(TOUR.split()))  # a sentence may break across lines
    assert match, f"the README's tour no longer says {pattern!r}"
    return float(match.group(1).replace(",", ""))


def run(arguments: list[str]) -> str:
    """A command of the tour, in the clone as the README runs it."""
    assert arguments[:3] == ["python", "-m", "infercost"], arguments
    done = subprocess.run([sys.executable, *arguments[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (arguments, done.stderr[-2000:])
    return done.stdout


def test_the_tour_is_five_steps_of_infercost_commands():
    commands = tour_commands()
    assert len(re.findall(r"^\*\*\d\. ", TOUR, re.M)) == 5
    assert commands and all(command[:3] == ["python", "-m", "infercost"] for command in commands), commands


def test_step_1_prices_the_workload_it_describes_on_four_models():
    command = next(c for c in tour_commands() if c[3:5] == ["estimate", "examples/support-bot.yaml"])
    profile = (ROOT / command[4]).read_text(encoding="utf-8")
    calls = quoted(r"\*\*1\..*?([\d,]+) calls a day")
    assert f"calls_per_day: {calls:.0f}" in profile
    models = re.search(r"api_models: \[(.*)\]", profile).group(1).split(", ")
    assert "on four models" in " ".join(TOUR.split()) and len(models) == 4
    shown = run(command)
    assert all(model in shown for model in models) and "exact" in shown


def test_step_2_a_self_hosted_setup_reads_one_replica_or_two_beside_two_offers_of_its_weights():
    commands = [c for c in tour_commands() if c[3] == "estimate"][1:]
    shown = run(commands[0])
    assert "fitted" in shown and "cost_per_month_p10_p90" in shown
    document = json.loads(run([*commands[0], "--json"]))
    (setup,) = document["self_host"]
    low, high = setup["cost_per_month_range"]
    assert "here one replica, or two" in " ".join(TOUR.split())
    assert setup["replicas"] == 1 and high == pytest.approx(2 * low)
    assert setup["band"]["p90"] == pytest.approx(high)  # the band tab says what the range says
    offers = [row["model"] for row in document["api"] if "llama-3.1-8b" in row["model"]]
    assert "beside two API offers of the same weights" in " ".join(TOUR.split()) and len(offers) == 2
    same_weights = run(commands[1])
    assert "openai/gpt-oss-120b" in same_weights and "exact" in same_weights


def test_step_3_the_claim_reads_as_the_tour_says():
    command = next(c for c in tour_commands() if c[3] == "throughput")
    lines = run(command).splitlines()
    header = next(line.split() for line in lines if line.startswith("concurrency"))
    rows = {row[0]: row for row in (line.split() for line in lines) if row and row[0] in ("1", "250")}

    def value(level: str, column: str) -> float:
        return float(rows[level][header.index(column)].replace(",", ""))

    assert value("1", "user_tokens_per_s") == pytest.approx(quoted(r"alone gets about ([\d,]+) tokens/s"), rel=0.05)
    assert value("250", "user_tokens_per_s") == pytest.approx(quoted(r"250 users get about ([\d,]+) each"), rel=0.05)
    assert value("250", "output_throughput") == pytest.approx(quoted(r"each, ([\d,]+) together"), rel=0.05)


def test_steps_4_and_5_benchmark_the_projects_server_and_run_a_batch_job_within_its_budget(tmp_path):
    commands = tour_commands()
    port = str(free_port())
    serve = next(c for c in commands if c[3] == "serve")
    server = subprocess.Popen([sys.executable, *[port if a == "8000" else a for a in serve[1:]]], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:  # "in a second terminal": ready once it lists its model
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "the tour's server did not start"
                time.sleep(0.5)

        def local(command: list[str]) -> list[str]:
            return [a.replace(":8000/", f":{port}/") for a in command]

        bench = next(c for c in commands if c[3] == "bench")
        printed = run(local(bench))
        run_id = re.search(r"^run (\S+) \(done\)", printed, re.M).group(1)
        assert "warning" not in printed  # the shape asked for is the shape measured
        diagnose = next(c for c in commands if c[3] == "diagnose")
        assert "RUN_ID" in diagnose
        assert run([run_id if a == "RUN_ID" else a for a in diagnose]).strip()
        batch = [str(tmp_path / "results") if a == "results" else a for a in local(next(c for c in commands
                                                                                          if c[3] == "batch"))]
        shown = run(batch)
        answers = [json.loads(line) for path in (tmp_path / "results").rglob("*.jsonl")
                   for line in path.read_text(encoding="utf-8").splitlines()]  # fmt: skip
        assert answers and all(answer["response"]["status_code"] == 200 for answer in answers), shown
        assert "budget" in shown.lower()
    finally:
        server.terminate()
        server.wait(timeout=30)
