"""Persistence in SQLite (the default) or PostgreSQL: runs, load levels, per-request records, scenarios and batch
jobs, with Alembic migrations applied on open."""

from infercost.store.db import Row, Rows, Store, apply_migrations, connect, describe, is_server, resolve
from infercost.store.migrations import heads
from infercost.store.redact import REDACTED, scrub
from infercost.store.runs import (
    change_stamp,
    create_run,
    finish_level,
    get_levels,
    get_requests,
    get_run,
    insert_requests,
    list_runs,
    new_run_id,
    next_session,
    plan_levels,
    set_run_engine,
    set_run_status,
    settle_in_flight,
    stored_seqs,
)
from infercost.store.scenarios import (
    delete_scenario,
    duplicate_scenario,
    get_scenario,
    list_scenarios,
    rename_scenario,
    save_scenario,
)

__all__ = [
    "Row", "Rows", "Store", "apply_migrations", "connect", "describe", "heads", "is_server", "resolve",
    "change_stamp", "create_run", "finish_level", "get_levels", "get_requests",
    "get_run", "insert_requests", "list_runs", "new_run_id", "next_session", "plan_levels",
    "set_run_engine", "set_run_status", "settle_in_flight", "stored_seqs", "REDACTED", "scrub",
    "delete_scenario", "duplicate_scenario", "get_scenario", "list_scenarios", "rename_scenario", "save_scenario",
]
