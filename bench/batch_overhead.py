"""What a batch job costs the client per record, and whether its memory stays flat, against a fast local server.

The scripted server (pinned to CPU 1) answers each request at once; the client (pinned to CPU 0) runs in a fresh
process per measurement, so CPU time and peak RSS (``ru_maxrss``) belong to one measurement:

- ``baseline``: the runner's HTTP client and SSE parser alone send the same records at the same concurrency (read
  the file, send, parse, keep nothing): what any client pays;
- ``job``: ``infercost batch`` end to end: plan (count every prompt with the tokenizer, store every record) and run
  (send, commit each record as it completes, write every shard's output file from the store).

Overhead per record = (job CPU − baseline CPU) / records, and the ratio job / baseline. Memory: the job's peak RSS
at 10,000 and at 100,000 records (flat means the same).

    python -m bench.batch_overhead                 # 10,000 and 100,000 records, a table on stdout
    python -m bench.batch_overhead --records 20000 --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONCURRENCY = 32
MAX_TOKENS = 4


def write_input(path: Path, records: int) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for i in range(records):
            body = {"model": "m", "max_tokens": MAX_TOKENS,
                    "messages": [{"role": "user", "content": f"classify review {i}: the phone was fine"}]}
            out.write(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
                                  "body": body}) + "\n")


def usage() -> dict:
    self = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_s": self.ru_utime + self.ru_stime, "peak_rss_mib": self.ru_maxrss / 1024}


async def baseline(path: Path, url: str) -> int:
    from infercost.batch.inputs import read_records
    from infercost.batch.send import HEADERS, request_body
    from infercost.runner.backends.openai import StreamSink, parse_response
    from infercost.runner.http import HttpClient
    from infercost.runner.records import RequestSpec

    client, slots, tasks, ok = HttpClient(url), asyncio.Semaphore(CONCURRENCY), set(), 0

    async def one(record) -> None:
        nonlocal ok
        try:
            sink = StreamSink()
            response = await client.request("POST", "/chat/completions", request_body(record), HEADERS, sink)
            ok += parse_response(response, sink, RequestSpec(record.idx, "", 0, MAX_TOKENS), chat=True).ok
        finally:
            slots.release()

    for record in read_records(path):
        await slots.acquire()
        task = asyncio.create_task(one(record))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)
    await client.close()
    return ok


def child(mode: str, path: Path, url: str, out: Path) -> dict:
    """One measurement in this (fresh) process."""
    out.mkdir(parents=True, exist_ok=True)
    start, wall = usage(), time.perf_counter()
    if mode == "baseline":
        ok = asyncio.run(baseline(path, url))
        phases = {}
    else:
        from infercost import batch

        config = batch.JobConfig(base_url=url, model="m", out_dir=str(out), shard_size=1000,
                                 concurrency=CONCURRENCY)
        created = batch.create_job(path, config, db_path=out / "jobs.db", price="gpt-4o-mini")
        planned = usage()
        status = batch.run_job(created["job_id"], db_path=out / "jobs.db")
        ok = status["counts"]["ok"]
        phases = {"plan_cpu_s": planned["cpu_s"] - start["cpu_s"]}
    end = usage()
    return {"mode": mode, "ok": ok, "wall_s": time.perf_counter() - wall, "cpu_s": end["cpu_s"] - start["cpu_s"],
            "peak_rss_mib": end["peak_rss_mib"], **phases}


def measure(mode: str, path: Path, url: str, out: Path) -> dict:
    command = ["taskset", "-c", "0", sys.executable, "-m", "bench.batch_overhead", "--child", mode, str(path), url,
               str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{mode} measurement failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=4, metavar=("MODE", "INPUT", "URL", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, path, url, out = args.child
        print(json.dumps(child(mode, Path(path), url, Path(out))))
        return
    from infercost.runner.scripted_server import Script, running

    rows = []
    with tempfile.TemporaryDirectory() as tmp, running(Script(ttft_ms=0.0, gap_us=1.0, tokens_per_chunk=4),
                                                      cpu=1) as url:
        for records in args.records:
            path = Path(tmp) / f"in-{records}.jsonl"
            write_input(path, records)
            base = measure("baseline", path, url, Path(tmp) / f"base-{records}")
            job = measure("job", path, url, Path(tmp) / f"job-{records}")
            assert base["ok"] == job["ok"] == records, (base, job)
            rows.append(summary(records, base, job))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        render(rows)


def summary(records: int, base: dict, job: dict) -> dict:
    return {"records": records, "baseline_cpu_us_per_record": base["cpu_s"] / records * 1e6,
            "job_cpu_us_per_record": job["cpu_s"] / records * 1e6,
            "job_plan_cpu_us_per_record": job["plan_cpu_s"] / records * 1e6,
            "overhead_cpu_us_per_record": (job["cpu_s"] - base["cpu_s"]) / records * 1e6,
            "job_over_baseline_cpu": job["cpu_s"] / base["cpu_s"],
            "baseline_records_per_s": records / base["wall_s"], "job_records_per_s": records / job["wall_s"],
            "baseline_peak_rss_mib": base["peak_rss_mib"], "job_peak_rss_mib": job["peak_rss_mib"]}


def render(rows: list[dict]) -> None:
    names = list(rows[0])
    print("  ".join(f"{name:>28}" for name in ["metric"] + [str(row["records"]) for row in rows]))
    for name in names[1:]:
        print("  ".join([f"{name:>28}"] + [f"{row[name]:>28.3f}" for row in rows]))


if __name__ == "__main__":
    main()
