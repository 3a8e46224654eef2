"""Profiles the scenario tests share (a module, not conftest, so tests can import them)."""

SELF_HOST = {
    "name": "llama-8b-on-h100", "gpu": "H100 SXM", "gpu_price_per_hour": 2.5, "gpus_per_replica": 1,
    "throughput": {"points": [{"concurrency": 1, "request_throughput": 0.8, "output_throughput": 210.0,
                               "p95_ttft_ms": 40.0, "p95_tpot_ms": 4.8}]},
    "slo": {"p95_ttft_ms": 1000.0, "p95_tpot_ms": 50.0},
}  # fmt: skip
