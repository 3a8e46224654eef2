"""How exactly does infercost's runner measure a server? Compare it, request by request, with the server's own log.

The scripted server (pinned to CPU 1) sends tokens on a schedule and logs the ``perf_counter()`` of every send;
the runner (this process, pinned to CPU 0) measures through the normal ``bench`` path (HTTP client, SSE parser,
records committed to SQLite). Both clocks are the same monotonic clock, so the server's times are the truth:

- TTFT, TPOT and per-user speed (1/TPOT) of every request against the server's values: max and p99 relative error;
- streams kept busy: requests the server had in progress, averaged over the measured window (Little's law);
- the client's CPU (user + system, all threads) over the measured window, as a fraction of one core.

    python bench/runner_accuracy.py            # both scenarios, a table on stdout
    python bench/runner_accuracy.py --json     # the figures as JSON
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from infercost import store  # noqa: E402
from infercost.runner.backends import BackendOptions  # noqa: E402
from infercost.runner.hardware import fingerprint  # noqa: E402
from infercost.runner.scripted_server import Script, read_log, running  # noqa: E402
from infercost.runner.sweep import Progress, SweepConfig, request_seed, run_sweep  # noqa: E402

CLIENT_CPU, SERVER_CPU = 0, 1


@dataclass
class Scenario:
    name: str
    streams: int
    tokens_per_s: float  # per user, what the server is scripted to send
    tokens_per_chunk: int
    ttft_ms: float
    output_tokens: int
    requests: int


SCENARIOS = [
    Scenario("single stream, 17,000 tok/s", streams=1, tokens_per_s=17_000, tokens_per_chunk=1, ttft_ms=20,
             output_tokens=1024, requests=30),
    Scenario("50 streams, 1,000 tok/s each", streams=50, tokens_per_s=1_000, tokens_per_chunk=1, ttft_ms=20,
             output_tokens=256, requests=200),
]


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # the whole process: event loop and record-writer thread
    return usage.ru_utime + usage.ru_stime


def measure(scenario: Scenario, workdir: Path) -> dict:
    log = workdir / f"server-{scenario.streams}.jsonl"
    db = workdir / "bench.db"
    script = Script(ttft_ms=scenario.ttft_ms, gap_us=1e6 / scenario.tokens_per_s,
                    tokens_per_chunk=scenario.tokens_per_chunk)
    window: dict[str, float] = {}

    def mark(progress: Progress) -> None:
        if progress.phase == "measuring" and "t" not in window:
            window.update(t=time.perf_counter(), cpu=_cpu_seconds())

    with running(script, log=log, cpu=SERVER_CPU) as url:
        config = SweepConfig(backend="openai", options=BackendOptions(model="scripted", base_url=url),
                             levels=[scenario.streams], input_tokens=64, output_tokens=scenario.output_tokens,
                             requests=scenario.requests, warmup=scenario.streams)
        run_id = run_sweep(config, db_path=db, progress=Progress(on_change=mark))
        wall, cpu = time.perf_counter() - window["t"], _cpu_seconds() - window["cpu"]
    connection = store.connect(db)
    records = store.get_requests(connection, run_id)
    connection.close()
    truth = {entry["tag"]: entry for entry in read_log(log)}
    return compare(scenario, config, records, truth, cpu / wall)


def compare(scenario: Scenario, config: SweepConfig, records: list[dict], truth: dict, cpu_cores: float) -> dict:
    errors: dict[str, list[float]] = {"ttft": [], "tpot": [], "user_speed": []}
    busy_spans = []
    for record in records:
        sent = truth[f"r{request_seed(config, record['idx'], record['repeat'], record['seq'], 'measure')}"]
        n = record["n_out"]
        client_ttft, server_ttft = record["t_first"] - record["t0"], sent["t_first"] - sent["t_recv"]
        client_tpot = (record["t_last"] - record["t_first"]) / (n - 1)
        server_tpot = (sent["t_last"] - sent["t_first"]) / (sent["n_out"] - 1)
        errors["ttft"].append(abs(client_ttft / server_ttft - 1))
        errors["tpot"].append(abs(client_tpot / server_tpot - 1))
        errors["user_speed"].append(abs(server_tpot / client_tpot - 1))
        busy_spans.append((sent["t_recv"], sent["t_last"]))
    start, end = min(s for s, _ in busy_spans), max(e for _, e in busy_spans)
    result = {"scenario": scenario.name, "requests": len(records),
              "failed": sum(r["status"] != "ok" for r in records),
              "streams_busy": sum(e - s for s, e in busy_spans) / (end - start),
              "client_cpu_cores": cpu_cores}
    for name, values in errors.items():
        result[f"max_{name}_error_pct"] = 100 * max(values)
        result[f"p99_{name}_error_pct"] = 100 * float(np.percentile(values, 99))
    result["server_tokens_per_s_per_user"] = float(np.median([1 / (
        (truth[k]["t_last"] - truth[k]["t_first"]) / (truth[k]["n_out"] - 1)) for k in truth if truth[k]["n_out"] > 1]))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.sched_setaffinity(0, {CLIENT_CPU})
    fingerprint()  # import torch and friends now, outside any measured window
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(scenario, Path(tmp)) for scenario in SCENARIOS]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    columns = ["requests", "failed", "streams_busy", "client_cpu_cores", "server_tokens_per_s_per_user",
               "max_ttft_error_pct", "p99_ttft_error_pct", "max_tpot_error_pct", "p99_tpot_error_pct",
               "max_user_speed_error_pct", "p99_user_speed_error_pct"]
    for result in results:
        print(result["scenario"])
        for column in columns:
            print(f"  {column:32s} {result[column]:10.3f}")


if __name__ == "__main__":
    main()
