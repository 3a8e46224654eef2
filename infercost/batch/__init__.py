"""Batch jobs: an OpenAI batch file (or plain records and a prompt template) sent to any OpenAI-compatible server,
checkpointed record by record in the store, with the budget before and the actual bill after.

- ``create_job``: read and count the input, store it as pending records in shards, plan the budget; nothing is sent.
- ``run_job``: send the pending records (resume after any stop, ``kill -9`` included), write each shard's output
  files when it ends; ``retry_failed`` sends the failed ones again as a new pass.
- ``job_status`` / ``list_jobs`` / ``control_job``: what the store holds; pause or cancel a running job.
"""

from infercost.batch.budget import Budget, Pricing, compare
from infercost.batch.job import (
    BACKENDS,
    EXECUTORS,
    JobConfig,
    control_job,
    create_job,
    job_status,
    list_jobs,
    retry_failed,
    run_job,
    sample_budget,
)

__all__ = [
    "BACKENDS", "EXECUTORS", "Budget", "JobConfig", "Pricing", "compare", "control_job", "create_job", "job_status",
    "list_jobs", "retry_failed", "run_job", "sample_budget",
]
