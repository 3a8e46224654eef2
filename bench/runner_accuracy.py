"""How exactly does infercost's runner measure a server? Compare it, request by request, with the server's own log.

The scripted server (pinned to CPU 1) sends tokens on a schedule and logs the ``perf_counter()`` of every send;
the runner (this process, pinned to CPU 0) measures through the normal ``bench`` path (HTTP client, SSE parser,
records committed to SQLite). Both clocks are the same monotonic clock, so the server's times are the truth:

- TTFT, TPOT and per-user speed (1/TPOT) of every request against the server's values: max and p99 relative error;
- streams kept busy: requests the server had in progress, averaged over the measured window (Little's law);
- the client's CPU (user + system, all threads) over the measured window, as a fraction of one core.

The same scenarios are then measured by a baseline client in the same run: httpx streaming with per-line
timestamps (the approach of most Python benchmark tools), so every figure has a reference measured alongside it.
Both processes run with SCHED_FIFO priority where the OS allows it (``--no-realtime`` to skip): on a shared
2-core machine other processes otherwise delay wake-ups by scheduler slices of ~4 ms, which is the machine's
noise, not the client's error.

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
SERVER_WRAPPER: list[str] = []  # the server inherits this process's scheduling policy


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


async def _httpx_stream(client, url: str, tag: str, output_tokens: int) -> dict:
    body = {"model": "scripted", "prompt": tag + " x" * 63, "max_tokens": output_tokens, "stream": True,
            "min_tokens": output_tokens, "ignore_eos": True}
    times = []
    t0 = time.perf_counter()
    async with client.stream("POST", url + "/completions", json=body) as response:
        async for line in response.aiter_lines():
            now = time.perf_counter()
            if line.startswith("data: ") and line != "data: [DONE]" and '"text":"' in line:
                times.append(now)
    return {"tag": tag, "t0": t0, "t_first": times[0], "t_last": times[-1], "n_out": output_tokens}


def measure_baseline(scenario: Scenario, workdir: Path) -> dict:
    """The same load through httpx (a pool as large as the concurrency), compared with the server's log the same way."""
    import asyncio

    import httpx

    log = workdir / f"baseline-{scenario.streams}.jsonl"
    script = Script(ttft_ms=scenario.ttft_ms, gap_us=1e6 / scenario.tokens_per_s,
                    tokens_per_chunk=scenario.tokens_per_chunk)
    tags = iter(range(10**9))

    async def run(url: str) -> tuple[list[dict], float, float]:
        limits = httpx.Limits(max_connections=scenario.streams, max_keepalive_connections=scenario.streams)
        async with httpx.AsyncClient(limits=limits, timeout=60) as client:
            async def stream(count: int, into: list) -> None:
                for _ in range(count):
                    into.append(await _httpx_stream(client, url, f"b{next(tags)}", scenario.output_tokens))
            warm: list = []
            await asyncio.gather(*(stream(1, warm) for _ in range(scenario.streams)))
            records: list = []
            t, cpu = time.perf_counter(), _cpu_seconds()
            per_stream = scenario.requests // scenario.streams
            await asyncio.gather(*(stream(per_stream, records) for _ in range(scenario.streams)))
            return records, time.perf_counter() - t, _cpu_seconds() - cpu

    with running(script, log=log, cpu=SERVER_CPU, wrapper=SERVER_WRAPPER) as url:
        records, wall, cpu = asyncio.run(run(url))
    truth = {entry["tag"]: entry for entry in read_log(log)}
    for record in records:
        record["key"] = record["tag"]
    return compare(scenario, records, truth, cpu / wall, client="httpx (baseline)")


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

    with running(script, log=log, cpu=SERVER_CPU, wrapper=SERVER_WRAPPER) as url:
        config = SweepConfig(backend="openai", options=BackendOptions(model="scripted", base_url=url),
                             levels=[scenario.streams], input_tokens=64, output_tokens=scenario.output_tokens,
                             requests=scenario.requests, warmup=scenario.streams)
        run_id = run_sweep(config, db_path=db, progress=Progress(on_change=mark))
        wall, cpu = time.perf_counter() - window["t"], _cpu_seconds() - window["cpu"]
    connection = store.connect(db)
    records = store.get_requests(connection, run_id)
    connection.close()
    truth = {entry["tag"]: entry for entry in read_log(log)}
    for record in records:
        record["key"] = f"r{request_seed(config, record['idx'], record['repeat'], record['seq'], 'measure')}"
    return compare(scenario, records, truth, cpu / wall, client="infercost")


def compare(scenario: Scenario, records: list[dict], truth: dict, cpu_cores: float, client: str) -> dict:
    errors: dict[str, list[float]] = {"ttft": [], "tpot": [], "user_speed": []}
    busy_spans = []
    for record in records:
        sent = truth[record["key"]]
        n = record["n_out"]
        client_ttft, server_ttft = record["t_first"] - record["t0"], sent["t_first"] - sent["t_recv"]
        client_tpot = (record["t_last"] - record["t_first"]) / (n - 1)
        server_tpot = (sent["t_last"] - sent["t_first"]) / (sent["n_out"] - 1)
        errors["ttft"].append(abs(client_ttft / server_ttft - 1))
        errors["tpot"].append(abs(client_tpot / server_tpot - 1))
        errors["user_speed"].append(abs(server_tpot / client_tpot - 1))
        busy_spans.append((sent["t_recv"], sent["t_last"]))
    start, end = min(s for s, _ in busy_spans), max(e for _, e in busy_spans)
    result = {"scenario": scenario.name, "client": client, "requests": len(records),
              "failed": sum(r.get("status", "ok") != "ok" for r in records),
              "streams_busy": sum(e - s for s, e in busy_spans) / (end - start),
              "client_cpu_cores": cpu_cores}
    for name, values in errors.items():
        result[f"max_{name}_error_pct"] = 100 * max(values)
        result[f"p99_{name}_error_pct"] = 100 * float(np.percentile(values, 99))
    result["server_tokens_per_s_per_user"] = float(np.median([1 / (
        (truth[k]["t_last"] - truth[k]["t_first"]) / (truth[k]["n_out"] - 1)) for k in truth if truth[k]["n_out"] > 1]))
    return result


def realtime() -> bool:
    """SCHED_FIFO for this process and (inherited) the server it starts; False where the OS refuses."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        return True
    except (PermissionError, OSError, AttributeError):
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-realtime", action="store_true", help="keep normal scheduling priority")
    parser.add_argument("--no-baseline", action="store_true", help="skip the httpx baseline client")
    args = parser.parse_args()
    os.sched_setaffinity(0, {CLIENT_CPU})
    fingerprint()  # import torch and friends now, outside any measured window
    rt = False if args.no_realtime else realtime()

    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for scenario in SCENARIOS:
            results.append(measure(scenario, Path(tmp)))
            if not args.no_baseline:
                results.append(measure_baseline(scenario, Path(tmp)))
    for result in results:
        result["realtime_priority"] = rt
    if args.json:
        print(json.dumps(results, indent=2))
        return
    columns = ["requests", "failed", "streams_busy", "client_cpu_cores", "server_tokens_per_s_per_user",
               "max_ttft_error_pct", "p99_ttft_error_pct", "max_tpot_error_pct", "p99_tpot_error_pct",
               "max_user_speed_error_pct", "p99_user_speed_error_pct"]
    for result in results:
        print(f"{result['scenario']}: {result['client']}")
        for column in columns:
            print(f"  {column:32s} {result[column]:10.3f}")


if __name__ == "__main__":
    main()
