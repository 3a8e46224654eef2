"""``tokens --executor ray``: corpus statistics over a directory or glob of files with Ray Data.

The driver resolves the files exactly as the local path does (``corpus.corpus_files``: sorted, format per file), and
Ray Data maps over them, one file per block: each map task counts its file with ``corpus.count_part``, the same
reader and the same tokenizers from the registry as the local path (their bundled data, nothing downloaded), and
hands back the file's ``Part`` (every record's count, totals, skipped records). The driver puts the parts in file
order and adds them up with ``corpus.merge_parts``, the one merge the local path uses too, so both executors print
the same statistics byte for byte. Bad input in a file comes back as data and is raised in file order, the error the
local path would have stopped at.

The files must be readable at the same path on every Ray node: a local Ray instance (the default, or
``--address local``) always sees them; a remote cluster needs them on a shared filesystem. The infercost package
travels to the workers as a ``py_modules`` runtime environment. A file is the unit of work, so a corpus of one huge
file runs on one worker; many files keep every CPU of the cluster busy.
"""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path
from typing import Any

from infercost.errors import InputError
from infercost.tokenizers.corpus import (
    CorpusFile,
    CorpusStats,
    Part,
    Progress,
    checked_tokenizers,
    corpus_files,
    corpus_name,
    count_part,
    merge_parts,
)

PACKAGE = Path(__file__).resolve().parents[1]  # infercost/


def corpus_stats_on_ray(path: str | os.PathLike, *, field: str | None, tokenizer_ids: list[str],
                        fmt: str | None = None, address: str | None = None,
                        progress: Progress | None = None) -> CorpusStats:
    """``corpus_stats`` for a file, directory or glob, counted by Ray Data tasks; see the module docstring."""
    tokenizer_ids = checked_tokenizers(tokenizer_ids)
    files = corpus_files(path, fmt=fmt, field=field)
    ray, started = connect(address)
    try:
        parts = count_files(ray, files, field, tokenizer_ids, progress)
    finally:
        if started:  # a Ray instance this call started ends with it; one the caller holds stays up
            ray.shutdown()
    stats = merge_parts(corpus_name(path), field, parts)
    if progress:
        progress(1.0)
    return stats


def connect(address: str | None) -> tuple[Any, bool]:
    """Ray, initialised (to ``address``, or a new local instance) unless it already is; and whether this started it."""
    try:
        import ray
    except ImportError:
        raise InputError("executor", "Ray is not installed: pip install ray==2.60.0") from None
    refuse_unreachable(address)
    if ray.is_initialized():  # a caller (a test, a notebook) holds a connection already: use it
        return ray, False
    try:
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING,
                 runtime_env={"py_modules": [str(PACKAGE)]})
    except ConnectionError as error:
        raise InputError("address", f"{address}: cannot reach a Ray cluster ({str(error).splitlines()[0]})") from None
    return ray, True


def refuse_unreachable(address: str | None, timeout_s: float = 5.0) -> None:
    """A ``host:port`` (or ``ray://host:port``) where nothing listens is one line at once: ``ray.init`` itself waits
    minutes for a head that is not there. ``auto``, ``local`` and no address are Ray's to resolve."""
    host, _, port = (address or "").removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as error:
        raise InputError("address", f"{address}: no Ray head answers there ({error.strerror or error})") from None


def count_files(ray: Any, files: list[CorpusFile], field: str | None, tokenizer_ids: list[str],
                progress: Progress | None) -> list[Part]:
    """One Ray Data block per file, mapped by ``count_row``; the parts come back in any order and leave in file
    order. Progress is the share of the corpus's bytes in files already counted."""
    import ray.data

    ray.data.DataContext.get_current().enable_progress_bars = False  # progress is ours, on stderr, when it is a tty
    logging.getLogger("ray.data").setLevel(logging.WARNING)  # not INFO lines per execution on a person's terminal
    logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)  # nor "progress bars disabled"
    rows = [{"index": i, "path": f.path, "fmt": f.fmt} for i, f in enumerate(files)]
    dataset = ray.data.from_items(rows, override_num_blocks=len(rows)).map(
        count_row, fn_kwargs={"field": field, "tokenizer_ids": tokenizer_ids})
    total, done, parts = sum(f.size for f in files) or 1, 0, {}
    for row in dataset.iter_rows():
        parts[row["index"]] = row["part"]
        done += files[row["index"]].size
        if progress:
            progress(min(done / total, 1.0))
    return [parts[i] for i in range(len(files))]


def count_row(row: dict[str, Any], *, field: str | None, tokenizer_ids: list[str]) -> dict[str, Any]:
    """Runs on a Ray worker: one file's part, or its bad input as data (``Part.error``) for the driver to raise."""
    try:
        part = count_part(row["path"], row["fmt"], field=field, tokenizer_ids=tokenizer_ids)
    except InputError as error:
        part = Part(row["path"], row["fmt"], {}, error=(error.field, error.reason))
    return {"index": row["index"], "part": part}
