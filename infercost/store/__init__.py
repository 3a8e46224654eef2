"""SQLite persistence: runs, load levels and per-request records, with schema migrations applied on open."""

from infercost.store.db import connect
from infercost.store.migrations import MIGRATIONS, apply_migrations, migration
from infercost.store.redact import REDACTED, scrub
from infercost.store.runs import (
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
    "MIGRATIONS", "apply_migrations", "connect", "create_run", "finish_level", "get_levels", "get_requests",
    "get_run", "insert_requests", "list_runs", "migration", "new_run_id", "next_session", "plan_levels",
    "set_run_engine", "set_run_status", "settle_in_flight", "stored_seqs", "REDACTED", "scrub",
    "delete_scenario", "duplicate_scenario", "get_scenario", "list_scenarios", "rename_scenario", "save_scenario",
]
