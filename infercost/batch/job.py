"""A batch job from its input file to its output files: plan (budget before), run or resume, retry the failed,
and the budget-versus-actual after. The store holds every record's state, so any of these may follow a ``kill -9``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from sqlalchemy import exc

from infercost.batch import budget as budgets
from infercost.batch.executor import Work, drive
from infercost.batch.inputs import MAX_OUTPUT_TOKENS, BatchRecord, file_sha256, read_records
from infercost.batch.outputs import check_writable, write_shard
from infercost.batch.pricing import resolve_pricing, resolve_tokenizer
from infercost.batch.progress import Progress
from infercost.batch.send import HEADERS, send_record
from infercost.errors import InputError
from infercost.runner.credentials import Credentials
from infercost.runner.http import HttpClient, make_room_for
from infercost.store import connect
from infercost.store import jobs as store_jobs
from infercost.store.db import set_lock_wait, store_failed
from infercost.tokenizers.corpus import Collector

TOKENIZE_BATCH = 4096
HEARTBEAT_S = 1.0  # how often a running job beats; it is alive while its last beat is under STALE_BEATS old
STALE_BEATS = 3
# A job's own writes wait this long for another writer's lock (SQLite), then retry with backoff from the event loop:
# a lock held elsewhere never freezes the sends for the 30 s of the store's usual wait, nor outlasts a heartbeat.
LOCK_WAIT_S = 0.5
STORE_PATIENCE_S = 300.0  # how long the store may refuse the job's writes before the job stops (resumable)
STORE_RETRY_S = (0.05, 5.0)  # the first retry of a refused write, and the longest gap (doubling in between)
INPUT_MARGIN = 1.1  # worst-case prompt tokens the server may count (chat template) per counted token …
INPUT_MARGIN_TOKENS = 32  # … plus this per request
EXECUTORS = ("local", "ray")
BACKENDS = ("http", "transformers")
PLAN_COLUMNS = ("idx", "shard", "attempts", "pass", "n_in_est")


@dataclass
class JobConfig(Credentials):
    """How the job runs; stored with the job so ``resume`` runs it the same way (a ``base_url`` with credentials is
    refused: ``Credentials`` takes them out, and a job that could not send them on resume is no use)."""

    base_url: str | None
    model: str
    out_dir: str
    shard_size: int = 1000
    concurrency: int = 16
    max_attempts: int = 3
    read_timeout_s: float = 60.0
    max_cost: float | None = None
    field: str | None = None
    template: str = "{text}"
    max_tokens: int | None = None
    api_key_env: str = "OPENAI_API_KEY"
    executor: str = "local"
    address: str | None = None
    backend: str = "http"  # or "transformers": ``model`` runs in-process, in Ray actors
    actors: int = 1  # with the transformers backend: Ray actors, each holding the model
    gpus: bool = False  # … each on a GPU of its own

    def check(self) -> None:
        for name in ("shard_size", "concurrency", "max_attempts"):
            if getattr(self, name) < 1:
                raise InputError(name.replace("_", "-"), "must be at least 1")
        if self.read_timeout_s <= 0:
            raise InputError("timeout", "must be positive")
        if self.max_cost is not None and self.max_cost <= 0:
            raise InputError("max-cost", "must be a positive amount of USD")
        if self.max_tokens is not None and not 1 <= self.max_tokens <= MAX_OUTPUT_TOKENS:
            raise InputError("max-tokens", f"must be a whole number from 1 to {MAX_OUTPUT_TOKENS:,}")
        if self.executor not in EXECUTORS:
            raise InputError("executor", f"{self.executor!r} is not one of {', '.join(EXECUTORS)}")
        if self.backend not in BACKENDS:
            raise InputError("backend", f"{self.backend!r} is not one of {', '.join(BACKENDS)}")
        if self.backend == "transformers":
            self._check_in_process()
            return
        if not self.base_url:
            raise InputError("base-url", "is required (the server to send to), unless --backend transformers")
        if self._basic:  # a job is resumed from what is stored, often by another process: it could not send them
            raise InputError("base-url", "credentials in the URL are never stored, so a resumed job could not send "
                                         "them; put the API key in $OPENAI_API_KEY instead")
        try:
            HttpClient(self.base_url)
        except ValueError as error:
            raise InputError("base-url", str(error)) from None
        if self.executor == "local":
            room_for_connections(self.concurrency)


    def _check_in_process(self) -> None:
        if self.actors < 1:
            raise InputError("actors", "must be at least 1")
        if self.executor == "local" and (self.actors > 1 or self.gpus):
            raise InputError("actors", "--actors and --gpus are Ray actors: add --executor ray (locally the model "
                                       "runs once, in this process)")
        if self.base_url:
            raise InputError("base-url", "--backend transformers runs the model in-process: drop --base-url")


def room_for_connections(concurrency: int) -> None:
    """A connection per request in flight: the process must be allowed that many open files, checked (and the
    soft limit raised where the hard one allows) before anything is sent."""
    try:
        make_room_for(concurrency)
    except ValueError as error:
        raise InputError("concurrency", str(error)) from None


def _records(input_path: str | Path, config: JobConfig, skipped: Collector | None = None) -> Iterator[BatchRecord]:
    return read_records(input_path, field=config.field, template=config.template, model=config.model,
                        max_tokens=config.max_tokens, skipped=skipped)


class _Tally:
    """Counts every record's prompt as the records stream into the store, and keeps only the totals."""

    def __init__(self, counter: Any, shard_size: int, assume_output_tokens: int,
                 context: int | None = None) -> None:  # fmt: skip
        self.counter, self.shard_size, self.assumed, self.context = counter, shard_size, assume_output_tokens, context
        self.records = self.input_tokens = self.output_tokens = self.uncapped = 0
        self.shard_sizes: Counter[int] = Counter()
        self.too_long: list[int] = []  # record numbers (1-based) whose prompt + max_tokens pass the context
        self.too_long_count = 0

    def rows(self, records: Iterator[BatchRecord]) -> Iterator[tuple]:
        """(idx, shard, custom_id, n_in_est, max_out) per record, counted in batches through the library's batch
        call; memory stays flat whatever the number of records."""
        while chunk := list(islice(records, TOKENIZE_BATCH)):
            counts = self.counter.count_batch([record.prompt_text() for record in chunk])
            for record, n_in in zip(chunk, counts, strict=True):
                shard = record.idx // self.shard_size
                self.shard_sizes[shard] += 1
                self.records += 1
                self.input_tokens += n_in
                self.output_tokens += record.max_out if record.max_out is not None else self.assumed * record.choices
                self.uncapped += record.max_out is None
                if self.context is not None and n_in + (record.max_out or 0) > self.context:
                    self.too_long_count += 1
                    if len(self.too_long) < SHOWN_TOO_LONG:
                        self.too_long.append(record.idx + 1)
                yield record.idx, shard, record.custom_id, n_in, record.max_out


SHOWN_TOO_LONG = 10  # record numbers named in the warning
MODELS_TIMEOUT_S = 3.0  # asking the server for its context must not hold up planning


def server_context(config: JobConfig) -> tuple[int | None, str]:
    """The context the server reports for the job's model (``max_model_len`` in ``/v1/models``, as vLLM and
    ``infercost serve`` give it), and where it came from; (None, "") where the server says none or cannot be asked."""
    if config.backend != "http" or not config.base_url:
        return None, ""
    import json
    import urllib.request

    request = urllib.request.Request(config.base_url.rstrip("/") + "/models", headers=config.auth_headers())
    try:
        with urllib.request.urlopen(request, timeout=MODELS_TIMEOUT_S) as response:  # noqa: S310 - the job's server
            models = json.loads(response.read(2**20)).get("data") or []
    except (OSError, ValueError, AttributeError):
        return None, ""
    for entry in models if isinstance(models, list) else []:
        if isinstance(entry, dict) and entry.get("id") == config.model and isinstance(entry.get("max_model_len"), int):
            return entry["max_model_len"], "the server's max_model_len"
    return None, ""


def context_limit(config: JobConfig, price: str | None) -> tuple[int | None, str]:
    """The context a record must fit: the server's own where it reports one, else the priced model's catalog
    context_window."""
    context, source = server_context(config)
    if context is not None or not price:
        return context, source
    from infercost.pricing import bundled_api_prices

    entry = next((e for e in bundled_api_prices() if e.id == price), None)
    window = entry.context_window if entry is not None else None
    return (window, f"{price}'s context window in the catalog") if window else (None, "")


def _context_warning(tally: _Tally, source: str, tokenizer_id: str) -> list[str]:
    if not tally.too_long_count:
        return []
    shown = ", ".join(f"{n:,}" for n in tally.too_long)
    left = tally.too_long_count - len(tally.too_long)
    more = f" and {left:,} more" if left else ""
    return [f"{tally.too_long_count:,} records ask for more than the {tally.context:,}-token context ({source}): "
            f"prompt (counted with {tokenizer_id}) + max_tokens; records {shown}{more}. The server will refuse or "
            "truncate them: shorten them or lower their max_tokens"]


def create_job(input_path: str | Path, config: JobConfig, *, db_path: str | Path | None = None,
               price: str | None = None, throughput: str | None = None, gpu_price: float | None = None,
               tokenizer: str | None = None, retry_rate: float = 0.0,
               assume_output_tokens: int = 256) -> dict[str, Any]:
    """Read the input once: count each record's prompt with the model's tokenizer, cut it into shards, store every
    record as pending with its counts, and the budget, all in one transaction. Nothing is sent."""
    config.check()
    if not 0 <= retry_rate < 1:
        raise InputError("retry-rate", "must be in [0, 1)")
    input_path = Path(input_path).resolve()
    if not input_path.is_file():
        raise InputError("input", f"{input_path}: no such file")
    check_writable(config.out_dir)
    pricing, tokenizer_id, fidelity = _pricing(config, price, throughput, gpu_price, tokenizer, db_path)
    from infercost.tokenizers import get_tokenizer

    context, context_source = context_limit(config, price)
    tally = _Tally(get_tokenizer(tokenizer_id), config.shard_size, assume_output_tokens, context)
    skipped = Collector(str(input_path))
    job_id = store_jobs.new_job_id()
    job = {"id": job_id, "input_path": str(input_path), "input_sha256": file_sha256(input_path),
           "out_dir": str(Path(config.out_dir).resolve() / job_id), "config": asdict(config)}

    def finish() -> tuple[list[tuple[int, int, int]], dict[str, Any]]:
        if not tally.records:
            first = f"; first on line {skipped.items[0].line}: {skipped.items[0].reason}" if skipped.items else ""
            raise InputError("input", f"{input_path}: no usable records ({skipped.count} skipped{first})")
        if tally.uncapped and config.max_cost is not None:
            raise InputError("max_tokens", f"{tally.uncapped} records set no max_tokens, so their cost has no "
                                           "bound; give --max-tokens to cap them, or drop --max-cost")
        warnings = _warnings(fidelity, tokenizer_id, tally.uncapped, assume_output_tokens, skipped)
        warnings += _context_warning(tally, context_source, tokenizer_id)
        basis = "max_tokens" if not tally.uncapped else f"max_tokens, {assume_output_tokens} assumed where unset"
        job["budget"] = budgets.plan_budget(
            records=tally.records, input_tokens=tally.input_tokens, output_tokens=tally.output_tokens,
            output_basis=basis, retry_rate=retry_rate, pricing=pricing, tokenizer=tokenizer_id, fidelity=fidelity,
            warnings=warnings).as_dict()
        shards = [(shard, shard * config.shard_size, n) for shard, n in sorted(tally.shard_sizes.items())]
        return shards, job["budget"]

    db = connect(db_path)
    try:
        store_jobs.create_job(db, job, tally.rows(_records(input_path, config, skipped)), finish)
    finally:
        db.close()
    return {"job_id": job_id, "out_dir": job["out_dir"], "budget": job["budget"],
            "skipped": [asdict(s) for s in skipped.items], "skipped_count": skipped.count}


def _pricing(config: JobConfig, price: str | None, throughput: str | None, gpu_price: float | None,
             tokenizer: str | None, db_path: str | Path | None) -> tuple[budgets.Pricing, str, str]:
    pricing = resolve_pricing(price=price, throughput=throughput, gpu_price=gpu_price,
                              concurrency=config.concurrency, db_path=db_path)
    tokenizer_id, fidelity = resolve_tokenizer(price=price, tokenizer=tokenizer, model=config.model)
    return pricing, tokenizer_id, fidelity


def _warnings(fidelity: str, tokenizer_id: str, uncapped: int, assumed: int, skipped: Collector) -> list[str]:
    warnings = []
    if fidelity != "exact":
        warnings.append(f"input tokens counted with {tokenizer_id} ({fidelity}), not the model's own tokenizer")
    if uncapped:
        warnings.append(f"{uncapped} records set no max_tokens: {assumed} output tokens assumed for each")
    if skipped.count:
        first = skipped.items[0]
        warnings.append(f"{skipped.count} records skipped (first: line {first.line}: {first.reason})")
    return warnings


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def this_host() -> str:
    """Where a process id means something: this host's name, boot and pid namespace (a container on this machine,
    or this machine after a reboot, is another host). ``INFERCOST_HOST`` names it instead."""
    if os.environ.get("INFERCOST_HOST"):
        return os.environ["INFERCOST_HOST"]
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8]
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return socket.gethostname()
    return f"{socket.gethostname()} (boot {boot}, pid namespace {namespace})"


def job_alive(job: dict[str, Any]) -> bool:
    """Whether the process noted as running the job still runs it. On this host its process id answers at once
    (a killed job resumes without waiting); on another host only its heartbeat can: alive while the last beat is
    under ``STALE_BEATS`` beats old. A job noted before hosts were recorded is taken to be on this host."""
    if job["status"] != "running" or not job["pid"]:
        return False
    if job["host"] is None or job["host"] == this_host():
        return _pid_alive(job["pid"])
    age = job["heartbeat_age_s"]
    return age is not None and age < STALE_BEATS * (job["heartbeat_s"] or HEARTBEAT_S)


class _StoreTrouble:
    """The store refusing the job's writes (a lock held elsewhere, a server gone): since when, why, and when the
    next try is due. Past ``patience_s`` the job gives up: it stops sending and says so, resumable."""

    def __init__(self, patience_s: float) -> None:
        self.patience_s = patience_s
        self.since: float | None = None
        self.error: exc.DBAPIError | None = None
        self.tries = 0

    def failed(self, error: exc.DBAPIError) -> float:
        """Note a refused write; returns the seconds to wait before the next try."""
        now = time.monotonic()
        self.since = self.since or now
        self.error, self.tries = error, self.tries + 1
        first, longest = STORE_RETRY_S
        return min(first * 2 ** (self.tries - 1), longest)

    def recovered(self) -> None:
        self.since, self.error, self.tries = None, None, 0

    @property
    def gave_up(self) -> bool:
        return self.since is not None and time.monotonic() - self.since >= self.patience_s


class JobRun:
    """One process working on a job: it alone writes the job's rows until it returns."""

    def __init__(self, job_id: str, *, db_path: str | Path | None, progress: Callable[[dict], None] | None,
                 max_cost: float | None, limit: int | None = None, reopen_failed: bool = False,
                 store_patience_s: float = STORE_PATIENCE_S, heartbeat_s: float = HEARTBEAT_S) -> None:
        self.limit, self.admitted = limit, 0  # a sample run sends at most ``limit`` records
        self.reopen_failed = reopen_failed  # retry-failed: failed records go back to pending once the job is ours
        self.db_path = db_path
        self.db = connect(db_path)
        self.job = store_jobs.get_job(self.db, job_id)
        self.job_id = job_id
        self.config = JobConfig(**self.job["config"])
        if max_cost is not None:
            self.config.max_cost = max_cost
        self.pricing = budgets.Pricing(**self.job["budget"]["pricing"])
        self.out_dir = Path(self.job["out_dir"])
        self.progress = Progress(self.job["budget"], progress)
        self.active_before_s = float(self.job["active_s"] or 0.0)
        self.started = time.perf_counter()
        done = store_jobs.totals(self.db, job_id)
        self.spent = float(done["cost"])
        self.reserved = 0.0
        self.unsaved: list[dict] = []  # outcomes not yet committed, in the order they ended
        self.due: set[tuple[int, int]] = set()  # (shard, pass) whose records all ended: written once committed
        self.save_due = False  # a save is scheduled on the event loop
        self.trouble = _StoreTrouble(store_patience_s)
        self.store_ok: asyncio.Event | None = None  # set while the store takes writes: sends wait for it
        self.failure: InputError | None = None  # why the job must stop (the store gave out, a disk is full)
        self.heartbeat_s = heartbeat_s
        self.owner = (os.getpid(), this_host())
        self.workers: list[dict] | None = None  # what each Ray actor did (the transformers backend)
        self.progress.start(done)

    # -- the cost cap: every in-flight attempt holds its worst-case cost -----------------------------------------
    def active_s(self) -> float:
        return self.active_before_s + time.perf_counter() - self.started

    def spent_now(self) -> float:
        return self.spent + self.pricing.time_cost(self.active_s())

    def admit(self, work: Work) -> bool:
        cap = self.config.max_cost
        if cap is not None and self.spent_now() + self.reserved + work.worst_cost > cap:
            return False
        self.reserved += work.worst_cost
        self.admitted += 1
        return True

    def sampled(self) -> str | None:
        return "sample" if self.limit is not None and self.admitted >= self.limit else None

    def worst_cost(self, n_in_est: int, max_out: int | None) -> float:
        return self.pricing.attempt_cost(n_in_est * INPUT_MARGIN + INPUT_MARGIN_TOKENS, max_out or 0)

    # -- what an attempt's end changes ------------------------------------------------------------------------------
    def on_attempt(self, work: Work, outcome: dict, final: bool) -> None:
        self.reserved -= work.worst_cost
        cost = self.pricing.attempt_cost(outcome["n_in"], outcome["n_out"]) \
            if outcome.get("state") == "ok" and self.pricing.kind == "api" else 0.0
        self.spent += cost
        row = {**outcome, "cost": cost}
        if not final:
            row["state"] = store_jobs.PENDING
        self.save_soon(row)
        self.progress.attempt(outcome, final, cost)
        if final:
            self.pending_per_shard[work.shard] -= 1
            if not self.pending_per_shard[work.shard]:
                self.due.add((work.shard, work.pass_))
                self.save_now()

    def save_soon(self, row: dict) -> None:
        """Commit at the end of this turn of the event loop: outcomes that ended together share one transaction.
        A kill before that commit is a kill while the request was in flight: the record is sent again on resume,
        and never recorded twice."""
        self.unsaved.append(row)
        if not self.save_due:
            self.save_due = True
            asyncio.get_running_loop().call_soon(self.save_now)

    def save_now(self) -> bool:
        """Commit what is unsaved, then write the shards whose records have all ended. A write the store refuses
        keeps its rows (in order) and is tried again after a backoff; sends wait meanwhile, and past the store's
        patience the job stops. Returns whether everything is committed and written."""
        self.save_due = False
        if self.unsaved:
            rows, self.unsaved = self.unsaved, []
            try:
                store_jobs.save_outcomes(self.db, self.job_id, rows)
            except exc.DBAPIError as error:
                self.unsaved[:0] = rows
                self._store_refused(error)
                return False
        if not self._write_due_shards():
            return False
        self.trouble.recovered()
        if self.store_ok is not None:
            self.store_ok.set()
        return True

    def _store_refused(self, error: exc.DBAPIError) -> None:
        self.db.connection.rollback()  # a connection the server dropped reconnects on its next statement
        wait_s = self.trouble.failed(error)
        if self.trouble.gave_up:
            self.failure = self.failure or self._store_gone()
            if self.store_ok is not None:
                self.store_ok.set()  # let the sends see the failure and stop
            return
        if self.store_ok is not None:
            self.store_ok.clear()
        if not self.save_due:
            self.save_due = True
            asyncio.get_running_loop().call_later(wait_s, self.save_now)

    def _store_gone(self) -> InputError:
        why = store_failed(self.trouble.error, self.db_path)
        return InputError("db", f"{why.reason.removesuffix(' (what was stored before is kept)')}: the store refused "
                                f"the job's writes for {self.trouble.patience_s:g} s, so it stopped sending; "
                                f"{len(self.unsaved)} outcomes that could not be saved will be sent again; "
                                f"resume it with `batch resume {self.job_id}` when the store is back")

    def _write_due_shards(self) -> bool:
        """Write the output files of each shard whose records have all ended, once the store holds every one of
        its outcomes (never before: a file once named is kept)."""
        for shard, pass_ in sorted(self.due):
            try:
                if store_jobs.shard_pending(self.db, self.job_id, shard):
                    self.due.discard((shard, pass_))  # the store says otherwise (another process sends some of
                    continue  # them): the run's end, or a resume, writes it once the store holds them all
                self.finish_shard(shard, pass_)
            except exc.DBAPIError as error:
                self._store_refused(error)
                return False
            except OSError as error:
                self.failure = self.failure or _unwritable(self.out_dir, error)
                return False
            self.due.discard((shard, pass_))
        return True

    def finish_shard(self, shard: int, pass_: int) -> None:
        files = write_shard(self.db, self.job_id, self.out_dir, shard, pass_)
        previous = next((s["files"] for s in store_jobs.shards(self.db, self.job_id) if s["shard"] == shard), [])
        store_jobs.set_shard(self.db, self.job_id, shard, "written", sorted(set(previous) | set(files)))

    async def wait_for_store(self) -> None:
        """Before a send: while the store refuses writes, wait (an outcome that cannot be saved would be paid for
        again on resume)."""
        if self.store_ok is not None:
            await self.store_ok.wait()

    def stop_reason(self, control: dict[str, str | None]) -> str | None:
        return "error" if self.failure else control["stop"] or self.sampled()

    # -- the run ---------------------------------------------------------------------------------------------------
    def works(self) -> Iterator[Work]:
        """The pending records, read again from the input (its hash was checked), with their stored counts. The
        plan is kept as arrays of 8-byte integers: 40 bytes a record, whatever the records hold."""
        plan = {name: array("q") for name in PLAN_COLUMNS}
        for row in store_jobs.pending_records(self.db, self.job_id):
            for name, value in zip(PLAN_COLUMNS, row, strict=True):
                plan[name].append(value)
        self.pending_per_shard = Counter(plan["shard"])
        return self._matching(plan)

    def _matching(self, plan: dict[str, array]) -> Iterator[Work]:
        position, idx = 0, plan["idx"]
        for record in _records(self.job["input_path"], self.config):
            if position >= len(idx):
                return
            if record.idx != idx[position]:
                continue
            n_in_est = plan["n_in_est"][position]
            yield Work(record, plan["shard"][position], plan["attempts"][position], plan["pass"][position],
                       n_in_est, self.worst_cost(n_in_est, record.max_out))
            position += 1

    def check_input(self) -> None:
        if not Path(self.job["input_path"]).is_file():
            raise InputError("input", f"{self.job['input_path']}: the job's input file is gone")
        if file_sha256(self.job["input_path"]) != self.job["input_sha256"]:
            raise InputError("input", f"{self.job['input_path']} changed since the job was created (SHA-256 "
                                      "differs); a resume would send different requests: start a new job")

    def run(self) -> dict[str, Any]:
        self.check_input()
        check_writable(self.out_dir)
        store_jobs.claim_job(self.db, self.job_id, self.owner[0], host=self.owner[1], heartbeat_s=self.heartbeat_s,
                             is_alive=job_alive)
        set_lock_wait(self.db, LOCK_WAIT_S)
        status = "failed"
        try:
            if self.reopen_failed:  # only now: a job another process runs was refused above, its records untouched
                store_jobs.reopen_failed(self.db, self.job_id, store_jobs.last_pass(self.db, self.job_id) + 1)
                self.progress.start(store_jobs.totals(self.db, self.job_id))
            works = self.works()
            self.write_finished_shards()
            stopped = asyncio.run(self._run(works))
            if self.failure:
                raise self.failure
            self.write_finished_shards()  # any shard a retry pass left unwritten (its records ended elsewhere)
            status = {"pause": "paused", "cancel": "cancelled", "max_cost": "stopped_max_cost",
                      "sample": "paused"}.get(stopped, "done")
        except KeyboardInterrupt:
            status = "paused"
            raise
        finally:
            self.finish(status)
        return job_status(self.job_id, db_path=None, db=self.db)

    def write_finished_shards(self) -> None:
        """Shards whose records all ended but whose files were not noted (a kill in between): write them now; a
        temporary file a kill left behind is removed (it never had an output's name)."""
        for stale in self.out_dir.glob(".shard-*.tmp"):
            stale.unlink(missing_ok=True)
        for shard in store_jobs.shards(self.db, self.job_id):
            if not shard["pending"] and shard["status"] != "written":
                for pass_ in store_jobs.shard_passes(self.db, self.job_id, shard["shard"]):
                    try:
                        self.finish_shard(shard["shard"], pass_)
                    except OSError as error:
                        raise _unwritable(self.out_dir, error) from None

    async def _run(self, works: Iterator[Work]) -> str | None:
        control: dict[str, str | None] = {"stop": None}
        self.store_ok = asyncio.Event()
        self.store_ok.set()
        beat = asyncio.create_task(self._heartbeat(control))
        try:
            executor = _executor(self.config)
            stopped = await executor(self, works, should_stop=lambda: self.stop_reason(control))
        finally:
            beat.cancel()
            await self._save_all()
        if control["stop"] == store_jobs.LOST:
            self.failure = self.failure or self._taken_over()
        return stopped

    async def _save_all(self) -> None:
        """The last commit: retried with backoff until it is in or the store's patience is spent."""
        while not self.save_now() and not self.failure:
            first, longest = STORE_RETRY_S
            await asyncio.sleep(min(first * 2 ** self.trouble.tries, longest))

    async def _heartbeat(self, control: dict[str, str | None]) -> None:
        """Beat, and read the control asked for, every ``heartbeat_s``. A beat the store refuses is tried again at
        the next; it counts toward the store's patience as a refused save does."""
        while True:
            try:
                answer = store_jobs.heartbeat(self.db, self.job_id, self.active_s(), owner=self.owner)
            except exc.DBAPIError as error:
                self.db.connection.rollback()
                self.trouble.failed(error)
                if self.trouble.gave_up:
                    self.failure = self.failure or self._store_gone()
                    self.store_ok.set()
            else:
                control["stop"] = answer or control["stop"]
                if not self.unsaved and not self.due:
                    self.trouble.recovered()
            self.progress.tick(self.spent_now())
            await asyncio.sleep(self.heartbeat_s)

    def _taken_over(self) -> InputError:
        try:
            job = store_jobs.get_job(self.db, self.job_id)
            who = f"process {job['pid']} on {job['host']}"
        except exc.DBAPIError:
            who = "another process"
        return InputError("job_id", f"{self.job_id} was taken over by {who} (this process's heartbeat was taken "
                                    "for stale); this process stopped sending and left the job to it")

    def finish(self, status: str) -> None:
        """Note how the run ended, unless the job is no longer this process's, or the store is gone (the job then
        shows as interrupted once this process has exited, and resumes)."""
        self.progress.close(self.spent_now())
        if self.trouble.gave_up:
            return
        actual = actual_of(self.db, self.job_id, self.pricing, self.active_s(), status)
        if self.workers is not None:
            actual["workers"] = self.workers
        store_jobs.set_job(self.db, self.job_id, owner=self.owner, status=status, control=None, pid=None,
                           active_s=self.active_s(), actual=actual)


def _unwritable(out_dir: Path, error: OSError) -> InputError:
    return InputError("out", f"{out_dir}: cannot write an output file ({error.strerror or error}); every outcome "
                             "so far is stored: make room, then resume the job")


def _executor(config: JobConfig):
    if config.executor == "ray":
        from infercost.batch.ray_executor import run_on_ray

        return run_on_ray
    if config.backend == "transformers":
        from infercost.batch.model_actor import run_in_process

        return run_in_process
    return run_local


async def run_local(job: JobRun, works: Iterator[Work], *, should_stop: Callable[[], str | None]) -> str | None:
    room_for_connections(job.config.concurrency)  # a resume may run where the limit is lower than at the start
    client = HttpClient(job.config.base_url, read_timeout=job.config.read_timeout_s)
    headers = {**HEADERS, **job.config.auth_headers()}  # read at start; never stored
    try:
        return await drive(works, send=lambda w: send_record(client, w.record, w.n_in_est, headers),
                           concurrency=job.config.concurrency, max_attempts=job.config.max_attempts,
                           admit=job.admit, on_attempt=job.on_attempt, should_stop=should_stop,
                           hold=job.wait_for_store)
    finally:
        await client.close()


def actual_of(db, job_id: str, pricing: budgets.Pricing, active_s: float, status: str) -> dict[str, Any]:
    done = store_jobs.totals(db, job_id)
    finished = done["ok"] + done["failed"]
    cost = done["cost"] + pricing.time_cost(active_s) if pricing.kind != "none" else None
    over = store_jobs.over_asked(db, job_id)
    return {"status": status, "records": finished, "ok": done["ok"], "failed": done["failed"],
            "attempts": done["attempts"],
            "retries": done["attempts"] - finished - store_jobs.pending_attempts(db, job_id),
            "input_tokens": done["input_tokens"], "output_tokens": done["output_tokens"],
            "usage_reported": done["usage_reported"], "cost": cost, "duration_s": active_s,
            "records_per_s": finished / active_s if active_s else None,
            "failure_reasons": store_jobs.failures(db, job_id, 5),
            "usage_over_asked": over["records"], "warnings": _over_asked_warnings(over)}


def _over_asked_warnings(over: dict[str, Any]) -> list[str]:
    """A server that reports more completion tokens than a record could ask for is billed as it reports (that is
    what the invoice will say) and named here; the cost cap then stops the job at the next record."""
    worst = over["worst"]
    if not worst:
        return []
    return [f"{over['records']} records reported more completion tokens than they asked for (worst: "
            f"{worst['custom_id']!r:.60} reported {worst['n_out']:,} for at most {worst['max_out']:,}); billed as "
            "the server reported them"]


def run_job(job_id: str, *, db_path: str | Path | None = None, progress: Callable[[dict], None] | None = None,
            max_cost: float | None = None, reopen_failed: bool = False, store_patience_s: float = STORE_PATIENCE_S,
            heartbeat_s: float = HEARTBEAT_S) -> dict[str, Any]:
    """Run (or resume) a job until every record is done, or it is paused, cancelled or stopped by the cost cap;
    ``reopen_failed`` sends its failed records again first (``retry_failed``). A store that refuses its writes for
    ``store_patience_s`` stops it (``InputError("db")``), resumable."""
    run = JobRun(job_id, db_path=db_path, progress=progress, max_cost=max_cost, reopen_failed=reopen_failed,
                 store_patience_s=store_patience_s, heartbeat_s=heartbeat_s)
    try:
        return run.run()
    finally:
        run.db.close()


def sample_budget(job_id: str, records: int, *, db_path: str | Path | None = None,
                  progress: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Send the first ``records`` records (they are the job's own: their outputs count), then budget the output
    tokens and retries of the whole job from what they did, instead of from ``max_tokens``."""
    if records < 1:
        raise InputError("sample", "must be at least 1 record")
    run = JobRun(job_id, db_path=db_path, progress=progress, max_cost=None, limit=records)
    try:
        run.run()
        done = store_jobs.totals(run.db, job_id)
        if not done["ok"]:
            raise InputError("sample", f"none of the {records} sampled records succeeded; see `batch status`")
        old = run.job["budget"]
        attempts = done["attempts"] - store_jobs.pending_attempts(run.db, job_id)
        mean_out = done["output_tokens"] / done["ok"]
        budget = budgets.plan_budget(
            records=old["records"], input_tokens=old["input_tokens"], output_tokens=mean_out * old["records"],
            output_basis=f"sample of {done['ok']} records ({mean_out:.1f} output tokens each)",
            retry_rate=min(0.99, max(0.0, 1 - (done["ok"] + done["failed"]) / attempts)) if attempts else 0.0,
            pricing=run.pricing, tokenizer=old["tokenizer"], fidelity=old["fidelity"], warnings=old["warnings"])
        store_jobs.set_job(run.db, job_id, budget=budget.as_dict())
        return budget.as_dict()
    finally:
        run.db.close()


def retry_failed(job_id: str, *, db_path: str | Path | None = None, progress: Callable[[dict], None] | None = None,
                 max_cost: float | None = None) -> dict[str, Any]:
    """Send the job's failed records again, as a new pass whose files are named ``.retry-N``. Nothing is changed
    before this process holds the job: a job running elsewhere is refused with its failed records as they were."""
    db = connect(db_path)
    try:
        store_jobs.get_job(db, job_id)
        if not store_jobs.record_counts(db, job_id)[store_jobs.FAILED]:
            raise InputError("job_id", f"{job_id} has no failed records to retry")
    finally:
        db.close()
    return run_job(job_id, db_path=db_path, progress=progress, max_cost=max_cost, reopen_failed=True)


def job_status(job_id: str, *, db_path: str | Path | None = None, db=None) -> dict[str, Any]:
    """The job as stored: its state, counts, files, budget, actual and their comparison."""
    own = db is None
    db = db or connect(db_path)
    try:
        job = store_jobs.get_job(db, job_id)
        counts = store_jobs.record_counts(db, job_id)
        shards = store_jobs.shards(db, job_id)
        actual = job["actual"]
        rows = budgets.compare(budgets.budget_view(job["budget"]), actual) if actual else []
        done = store_jobs.totals(db, job_id)
        spent = done["cost"] + budgets.Pricing(**job["budget"]["pricing"]).time_cost(job["active_s"] or 0.0)
        finished = done["ok"] + done["failed"]
        return {"job_id": job_id, "status": _live_status(job), "created_at": job["created_at"],
                "input": job["input_path"], "out_dir": job["out_dir"], "config": job["config"], "counts": counts,
                "shards_total": len(shards), "shards_written": sum(s["status"] == "written" for s in shards),
                "files": [name for s in shards for name in s["files"]], "budget": job["budget"], "actual": actual,
                "budget_vs_actual": rows, "spent": spent,
                "projected_cost": budgets.projected_cost(spent, finished, counts["records"], job["budget"]["cost"])}
    finally:
        if own:
            db.close()


def _live_status(job: dict[str, Any]) -> str:
    """A job noted as running whose process is gone (killed, or silent past its heartbeat) is ``interrupted``:
    resume it."""
    if job["status"] == "running" and not job_alive(job):
        return "interrupted"
    return job["status"]


def list_jobs(*, db_path: str | Path | None = None) -> list[dict[str, Any]]:
    db = connect(db_path)
    try:
        return [{"job_id": job["id"], "created_at": job["created_at"], "status": _live_status(job),
                 "input": Path(job["input_path"]).name, "records": job["records"], "ok": job["ok"],
                 "failed": job["failed"], "pending": job["pending"],
                 "budget_cost": job["budget"].get("cost"), "actual_cost": (job["actual"] or {}).get("cost")}
                for job in store_jobs.list_jobs(db)]
    finally:
        db.close()


def control_job(job_id: str, control: str, *, db_path: str | Path | None = None) -> None:
    """Ask a running job to ``pause`` or ``cancel`` (it finishes what is in flight first)."""
    db = connect(db_path)
    try:
        store_jobs.request_control(db, job_id, control)
        job = store_jobs.get_job(db, job_id)
        if _live_status(job) != "running":  # nobody is running it: the state changes now
            if control == "cancel":
                store_jobs.set_job(db, job_id, status="cancelled", control=None)
            elif job["status"] in ("running", "created"):
                store_jobs.set_job(db, job_id, status="paused", control=None)
    finally:
        db.close()
