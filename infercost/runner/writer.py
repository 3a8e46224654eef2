"""Commits request records from a thread, so a commit never stalls the event loop that timestamps other streams.

Each record is committed as soon as the thread takes it off the queue (microseconds after the request ends);
records that arrive together share one transaction. SQLite releases the GIL while it works. Secrets (the API key
in use) are scrubbed from the rows here, off the event loop, once, as they are stored.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from infercost.store import connect, insert_requests

_STOP = object()


class RecordWriter:
    def __init__(self, db_path: str | Path | None, secrets: Iterable[str] = ()) -> None:
        self._secrets = [secret for secret in secrets if secret]
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._loop, args=(db_path,), name="record-writer", daemon=True)
        self._thread.start()
        self._ready.wait()
        self._check()

    def put(self, row: dict[str, Any]) -> None:
        """Queue a record; a store that already failed stops the sweep here, not a whole level later (nothing
        measured from now on could be kept)."""
        self._check()
        self._queue.put(row)

    def flush(self) -> None:
        """Block until everything put so far is committed."""
        done = threading.Event()
        self._queue.put(done)
        done.wait()
        self._check()

    def close(self) -> None:
        self._queue.put(_STOP)
        self._thread.join()
        self._check()

    def _check(self) -> None:
        if self._error is not None:
            raise self._error

    def _loop(self, db_path: str | Path | None) -> None:
        try:
            db = connect(db_path)
        except BaseException as error:  # reported to the caller by _check, not lost in the thread
            self._error = error
            self._ready.set()
            return
        self._ready.set()
        try:
            while True:
                items = [self._queue.get()]
                while True:  # take everything already waiting: one commit for records that ended together
                    try:
                        items.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                rows = [item for item in items if isinstance(item, dict)]
                if rows:
                    try:
                        insert_requests(db, rows, self._secrets)
                    except Exception as error:  # noqa: BLE001 - surfaced on the next flush
                        self._error = error
                for item in items:
                    if isinstance(item, threading.Event):
                        item.set()
                if any(item is _STOP for item in items):
                    break
        finally:
            db.close()
