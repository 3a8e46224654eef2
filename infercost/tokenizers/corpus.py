"""Corpus statistics: per-record token counts of a TXT, JSONL, CSV or Parquet file, streamed in flat memory.

Records: TXT is one record per line (blank lines are not records); JSONL is one JSON object per line and ``field``
names the text; CSV has a header row and ``field`` names a column; Parquet ``field`` names a string column. The
line terminator is not part of a record. Memory stays flat in the size of the text: records are read in batches,
counted, and only their counts are kept (4 bytes per record, enough for percentiles and a histogram).

Bad records (invalid UTF-8, NUL bytes, malformed JSON, a missing or non-text field, a record over
``MAX_RECORD_BYTES``) are skipped and reported with file, line and reason; good ones are still counted. The input
as a whole is refused (``InputError``) when it is empty, binary, has no such column, or leaves no usable record.

A corpus may be many files: a directory (recursively) or a glob, in sorted path order, each file in the format its
own extension names (``corpus_files``). Each file is counted into a ``Part`` and the parts are merged in file order by
``merge_parts``; ``corpus_ray`` counts the same parts on Ray and merges them with the same function.
"""

from __future__ import annotations

import contextlib
import csv
import glob
import io
import json
import os
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import IO, Any

import numpy as np

from infercost.errors import InputError
from infercost.tokenizers.chat import chat_text
from infercost.tokenizers.registry import get_tokenizer

MAX_RECORD_BYTES = 8 * 2**20  # one prompt of 8 MiB is ~2M tokens, past every context window
MAX_TEXT_BYTES = 32 * 2**20  # a whole file counted as one text
BATCH_BYTES = 2 * 2**20  # text per library batch call: big enough to keep both cores busy
BATCH_RECORDS = 8192
PARQUET_DECODED_FLOOR_BYTES = 64 * 2**20  # text any Parquet file may decode to …
PARQUET_DECODED_PER_FILE_BYTE = 100  # … plus this much per byte of the file (zstd text is ~4x; labels repeat more)
MAX_SKIPPED_LISTED = 100
HISTOGRAM_BINS = 40
FORMATS = {".txt": "txt", ".text": "txt", ".md": "txt", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
           ".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet"}

Progress = Callable[[float], None]


@dataclass(frozen=True)
class Skipped:
    file: str
    line: int  # 1-based line (TXT, JSONL, CSV) or row (Parquet)
    reason: str


@dataclass
class TokenStats:
    """One tokenizer's distribution over the corpus; ``counts`` holds every record's tokens (int32)."""

    tokenizer: str
    counts: np.ndarray

    @property
    def records(self) -> int:
        return int(self.counts.size)

    def summary(self) -> dict[str, Any]:
        counts = self.counts
        p50, p90, p95, p99 = np.percentile(counts, [50, 90, 95, 99]).tolist()
        hist, edges = np.histogram(counts, bins=min(HISTOGRAM_BINS, max(1, int(np.unique(counts).size))))
        return {
            "tokenizer": self.tokenizer, "records": self.records, "tokens_total": int(counts.sum(dtype=np.int64)),
            "mean": float(counts.mean()), "p50": p50, "p90": p90, "p95": p95, "p99": p99, "max": int(counts.max()),
            "histogram": {"edges": edges.tolist(), "counts": hist.tolist()},
        }


@dataclass
class CorpusStats:
    """Everything ``corpus_stats`` learned: per-tokenizer distributions and the records it had to skip."""

    file: str
    fmt: str
    field: str | None
    records: int
    chars: int
    bytes: int
    stats: dict[str, TokenStats]
    skipped: list[Skipped] = dataclass_field(default_factory=list)
    skipped_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file, "format": self.fmt, "field": self.field, "records": self.records,
            "chars": self.chars, "bytes": self.bytes,
            "tokenizers": {tid: s.summary() for tid, s in self.stats.items()},
            "skipped_count": self.skipped_count,
            "skipped": [{"line": s.line, "reason": s.reason} for s in self.skipped],
        }


@dataclass
class Batch:
    lines: list[int]
    texts: list[str]
    fraction: float | None  # how far through the input, when its size is known


class Source:
    """A binary input (path, uploaded file or stdin) with a display name and, when known, its size."""

    def __init__(self, path_or_fileobj: str | os.PathLike | IO[bytes]) -> None:
        if isinstance(path_or_fileobj, (str, os.PathLike)):
            path = Path(path_or_fileobj)
            if not path.is_file():
                raise InputError("file", f"{path}: no such file")
            self.name, self.stream, self.owned = str(path), open(path, "rb"), True
        else:
            self.stream, self.owned = path_or_fileobj, False
            self.name = str(getattr(path_or_fileobj, "name", "<stdin>"))
        self.size = self._size()

    def _size(self) -> int | None:
        try:
            return os.fstat(self.stream.fileno()).st_size or None
        except (AttributeError, OSError, io.UnsupportedOperation):
            if getattr(self.stream, "size", None):  # Streamlit's UploadedFile
                return int(self.stream.size)
            if hasattr(self.stream, "getbuffer"):  # io.BytesIO
                with self.stream.getbuffer() as view:
                    return view.nbytes or None
            return None

    def fraction(self) -> float | None:
        try:
            return min(1.0, self.stream.tell() / self.size) if self.size else None
        except (OSError, io.UnsupportedOperation):
            return None

    def close(self) -> None:
        if self.owned:
            self.stream.close()


class Collector:
    """Skipped records: the first ``MAX_SKIPPED_LISTED`` kept with their reasons, all of them counted."""

    def __init__(self, name: str) -> None:
        self.name, self.items, self.count = name, [], 0

    def __call__(self, line: int, reason: str) -> None:
        self.count += 1
        if len(self.items) < MAX_SKIPPED_LISTED:
            self.items.append(Skipped(self.name, line, reason))


def detect_format(name: str, fmt: str | None) -> str:
    if fmt:
        if fmt not in set(FORMATS.values()):
            raise InputError("format", f"{fmt!r} is not one of txt, jsonl, csv, parquet")
        return fmt
    suffix = Path(name).suffix.lower()
    if suffix not in FORMATS:
        raise InputError("format", f"{name}: cannot tell the format from {suffix or 'no extension'!r}; "
                                   "name it .txt, .jsonl, .csv or .parquet, or give the format")
    return FORMATS[suffix]


def utf8(raw: bytes, line: int, skip: Collector) -> str | None:
    """Strict UTF-8; ``None`` (and a skip saying why) for bytes that are not text."""
    if b"\x00" in raw:
        skip(line, "NUL byte: binary data, not text")
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        skip(line, f"not valid UTF-8 (byte {error.start + 1}: {raw[error.start:error.start + 1]!r})")
        return None


def decode(raw: bytes, line: int, skip: Collector) -> str | None:
    """A line as text without its terminator (and without a BOM on line 1)."""
    text = utf8(raw, line, skip)
    if text is None:
        return None
    if line == 1 and text.startswith("\ufeff"):
        text = text[1:]
    return text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text


def head(stream: IO[bytes], size: int = 8192) -> bytes:
    """The first bytes, left in place for the reader."""
    if hasattr(stream, "peek"):
        return stream.peek(size)[:size]
    start = stream.tell()
    data = stream.read(size)
    stream.seek(start)
    return data


def refuse_binary(source: Source) -> None:
    """A NUL byte in the first 8 KiB (git's rule) means a binary file (an image, an archive, UTF-16): refuse it."""
    start = head(source.stream)
    if (nul := start.find(b"\x00")) >= 0:
        raise InputError("file", f"{source.name}: looks binary (NUL byte on line {line_of(start, nul)}), "
                                 "not UTF-8 text")


def raw_lines(source: Source, skip: Collector) -> Iterator[tuple[int, bytes]]:
    """Lines as bytes, each at most ``MAX_RECORD_BYTES``; longer ones are skipped without being held in memory."""
    refuse_binary(source)
    stream, line = source.stream, 0
    while raw := stream.readline(MAX_RECORD_BYTES + 1):
        line += 1
        if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
            total = len(raw)
            while (rest := stream.readline(2**20)) and (total := total + len(rest)) and not rest.endswith(b"\n"):
                pass
            skip(line, f"record of {total / 2**20:.1f} MiB is over the {MAX_RECORD_BYTES // 2**20} MiB limit")
            continue
        yield line, raw
    if line == 0:
        raise InputError("file", f"{source.name}: file is empty")


def batched(records: Iterator[tuple[int, str]], source: Source) -> Iterator[Batch]:
    """Group records into batches of about ``BATCH_BYTES`` for the libraries' batch calls."""
    lines, texts, size = [], [], 0
    for line, text in records:
        lines.append(line)
        texts.append(text)
        size += len(text)
        if size >= BATCH_BYTES or len(texts) >= BATCH_RECORDS:
            yield Batch(lines, texts, source.fraction())
            lines, texts, size = [], [], 0
    if texts:
        yield Batch(lines, texts, source.fraction())


def txt_records(source: Source, field: str | None, skip: Collector) -> Iterator[tuple[int, str]]:
    if field:
        raise InputError("field", f"{source.name}: a TXT file has no fields (one record per line); leave it empty")
    for line, raw in raw_lines(source, skip):
        text = decode(raw, line, skip)
        if text:
            yield line, text


def text_value(record: Any, field: str, line: int, skip: Collector) -> str | None:
    """The text under ``field``, or a skip that says why there is none."""
    if not isinstance(record, dict):
        skip(line, f"not a JSON object ({type(record).__name__})")
    elif field not in record:
        skip(line, f"no field {field!r} (fields: {', '.join(map(str, list(record)[:10])) or 'none'})")
    elif isinstance(record[field], list) and (conversation := chat_text(record[field])) is not None:
        return conversation  # chat format: the messages' contents (tokenizers/chat.py)
    elif not isinstance(record[field], str):
        skip(line, f"field {field!r} is {type(record[field]).__name__}, not text")
    else:
        return record[field]
    return None


def jsonl_records(source: Source, field: str | None, skip: Collector) -> Iterator[tuple[int, str]]:
    if not field:
        raise InputError("field", f"{source.name}: JSONL records need a field naming the text")
    for line, raw in raw_lines(source, skip):
        text = decode(raw, line, skip)
        if text is None or not text.strip():
            continue
        record = json_record(text, line, skip)
        value = None if record is None else text_value(record, field, line, skip)
        if value and "\\u" in text:  # only a \u escape puts a lone surrogate into a JSON string
            value = checked_text(value, line, skip, nul_is_text=True)
        if value:
            yield line, value


def json_record(text: str, line: int, skip: Collector) -> Any:
    """One JSONL record, or a skip: malformed, nested past the parser's stack, or an integer too long to convert."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        skip(line, f"malformed JSON: {error.msg} at column {error.colno}")
    except RecursionError:
        skip(line, "JSON nested too deep to read")
    except ValueError as error:  # "Exceeds the limit (4300 digits) for integer string conversion"
        skip(line, f"unreadable JSON: {str(error).split(';')[0]}")
    return None


@contextlib.contextmanager
def csv_reader(source: Source, errors: str) -> Iterator[Any]:
    """A csv reader over the binary stream; detached afterwards so an uploaded file stays open for the next read."""
    text = io.TextIOWrapper(source.stream, encoding="utf-8-sig", errors=errors, newline="")
    try:
        yield csv.reader(text, delimiter="\t" if source.name.lower().endswith(".tsv") else ",")
    finally:
        text.detach()


def csv_records(source: Source, field: str | None, skip: Collector) -> Iterator[tuple[int, str]]:
    csv.field_size_limit(MAX_RECORD_BYTES)
    starts = [0]  # the line where the record the csv reader last took starts
    delimiter = "\t" if source.name.lower().endswith(".tsv") else ","
    reader = csv.reader(csv_texts(source, skip, starts), delimiter=delimiter)
    try:
        header = next(reader, None)
    except csv.Error as error:
        raise InputError("file", f"{source.name}: malformed CSV header: {error}") from None
    if header is None:
        raise InputError("file", f"{source.name}: file is empty")
    if not field or field not in header:
        raise InputError("field", f"{source.name}: no column {field!r} (columns: {', '.join(header)})")
    column = header.index(field)
    width = len(header)  # a wider row is malformed (a quote inside a quoted field not doubled): its column a fragment
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:  # e.g. a bare carriage return in an unquoted field: only this record is bad
            skip(starts[0], f"malformed CSV: {error}")
            continue
        line = starts[0]
        if len(row) <= column:
            skip(line, f"row has {len(row)} columns, {field!r} is column {column + 1}")
        elif len(row) > width:
            skip(line, f"malformed CSV: row has {len(row)} columns, the header {width} (a quote not doubled?)")
        elif (value := checked_text(row[column], line, skip)) is not None:
            yield line, value


def csv_texts(source: Source, skip: Collector, starts: list[int]) -> Iterator[str]:
    """Whole CSV records as text, one per item, so the csv reader never starts reading inside a quoted field.

    Decoded with ``surrogateescape`` so one bad byte spoils only its own value; ``starts[0]`` tells the caller
    where the record begins."""
    for line, raw in csv_raw_records(source, skip):
        starts[0] = line
        text = raw.decode("utf-8", "surrogateescape")
        yield text.removeprefix("\ufeff") if line == 1 else text


def csv_raw_records(source: Source, skip: Collector) -> Iterator[tuple[int, bytes]]:
    """(first line, bytes) of each CSV record. A record ends at a newline outside quotes: with RFC 4180 quoting
    (a quote inside a quoted field is doubled) that is a newline after an even number of quotes. A record over
    ``MAX_RECORD_BYTES`` is read to its end without being kept, and skipped with its size."""
    refuse_binary(source)
    stream, start, newlines = source.stream, 1, 0
    parts: list[bytes] = []
    size = quotes = 0
    while piece := stream.readline(2**20):
        quotes += piece.count(b'"')
        size += len(piece)
        if size <= MAX_RECORD_BYTES:
            parts.append(piece)
        newlines += piece.endswith(b"\n")
        if piece.endswith(b"\n") and quotes % 2 == 0:
            yield from _csv_record(start, parts, size, skip)
            start, parts, size, quotes = newlines + 1, [], 0, 0
    if size:
        yield from _csv_record(start, parts, size, skip)


def _csv_record(start: int, parts: list[bytes], size: int, skip: Collector) -> Iterator[tuple[int, bytes]]:
    if size > MAX_RECORD_BYTES:
        skip(start, f"record of {size / 2**20:.1f} MiB is over the {MAX_RECORD_BYTES // 2**20} MiB limit")
    else:
        yield start, b"".join(parts)


def checked_text(value: str, line: int, skip: Collector, *, nul_is_text: bool = False) -> str | None:
    """Text that every tokenizer accepts: CSV decodes with ``surrogateescape`` so one bad byte does not end the file,
    and JSON may escape a lone surrogate (``\\ud800``); such records are skipped. A NUL byte in a CSV file is binary
    data, but a JSON string's ``\\u0000`` is a valid character of the text and is counted (``nul_is_text``)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        skip(line, "not valid UTF-8")
        return None
    if "\x00" in value and not nul_is_text:
        skip(line, "NUL byte: binary data, not text")
        return None
    return value or None


def parquet_records(source: Source, field: str | None, skip: Collector) -> Iterator[tuple[int, str]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    stream = source.stream if source.stream.seekable() else io.BytesIO(source.stream.read())
    try:
        parquet = pq.ParquetFile(stream)
    except (pa.ArrowException, OSError) as error:
        raise InputError("file", f"{source.name}: not a readable Parquet file ({error})") from None
    names = parquet.schema_arrow.names
    if not field or field not in names:
        raise InputError("field", f"{source.name}: no column {field!r} (columns: {', '.join(names)})")
    kind = parquet.schema_arrow.field(field).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise InputError("field", f"{source.name}: column {field!r} is {kind}, not text")
    budget = DecodedBudget(source.name, stream.seek(0, io.SEEK_END))
    parquet = pq.ParquetFile(stream, read_dictionary=[field])  # each distinct text once, however many rows repeat it
    column = [parquet.metadata.schema.column(i).path for i in range(parquet.metadata.num_columns)].index(field)
    row = 0
    for group in range(parquet.num_row_groups):
        meta = parquet.metadata.row_group(group)
        chunk_bytes = meta.column(column).total_uncompressed_size
        yield from parquet_group(parquet, group, field, row, meta.num_rows, skip, budget, chunk_bytes)
        row += meta.num_rows


class DecodedBudget:
    """Text a Parquet file may decode to: dictionary pages and compression let a 547-byte file hold 600 copies of
    a 1 MiB string (600 MiB of text, 2.5 GB of memory read naively). Counted batch by batch before a batch is
    decoded; past the limit, reading stops with an error that names it."""

    def __init__(self, name: str, file_bytes: int) -> None:
        self.name, self.spent = name, 0
        self.limit = PARQUET_DECODED_FLOOR_BYTES + PARQUET_DECODED_PER_FILE_BYTE * file_bytes

    def spend(self, size: int) -> None:
        self.spent += size
        if self.spent > self.limit:
            raise InputError("file", f"{self.name}: decodes to more than {self.limit / 2**20:,.0f} MiB of text (at "
                                     f"most {PARQUET_DECODED_FLOOR_BYTES // 2**20} MiB plus "
                                     f"{PARQUET_DECODED_PER_FILE_BYTE} bytes per byte of the file)")


def parquet_group(parquet: Any, group: int, field: str, first: int, rows: int, skip: Collector,
                  budget: DecodedBudget, chunk_bytes: int) -> Iterator[tuple[int, str]]:
    """One row group's texts; a corrupt group (a bad page, a bad checksum) is skipped whole, with the reason.

    The column is read dictionary-encoded (each distinct text once, whatever the number of rows holding it), in
    batches of about ``BATCH_BYTES`` of the chunk's uncompressed size, and each text is decoded only when its row
    is reached: memory stays flat however much text the rows repeat."""
    import pyarrow as pa
    import pyarrow.compute as pc

    row = first
    per_batch = max(1, min(BATCH_RECORDS, rows * BATCH_BYTES // max(1, chunk_bytes)))
    try:
        for batch in parquet.iter_batches(row_groups=[group], columns=[field], batch_size=per_batch):
            values = batch.column(0)
            texts = values.dictionary.cast(pa.large_binary())
            lengths = pc.binary_length(texts)
            budget.spend(pc.sum(pc.take(lengths, values.indices)).as_py() or 0)  # before any of it is decoded
            sizes = lengths.to_pylist()
            for index in values.indices.to_pylist():
                row += 1
                if index is None:
                    skip(row, f"field {field!r} is null")
                elif sizes[index] > MAX_RECORD_BYTES:
                    skip(row, f"record of {sizes[index] / 2**20:.1f} MiB is over the {MAX_RECORD_BYTES // 2**20} "
                              "MiB limit")
                elif text := utf8(texts[index].as_py(), row, skip):  # an empty text is no record, as elsewhere
                    yield row, text
    except (pa.ArrowException, OSError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        skip(row + 1, f"row group {group + 1} unreadable from this row on ({first + rows - row} rows): {reason}")


READERS: dict[str, Callable[[Source, str | None, Collector], Iterator[tuple[int, str]]]] = {
    "txt": txt_records, "jsonl": jsonl_records, "csv": csv_records, "parquet": parquet_records,
}


def prefetch(batches: Iterator[Batch], depth: int = 2) -> Iterator[Batch]:
    """Read and parse the next batches in a thread while the tokenizers work on this one."""
    slots: queue.Queue = queue.Queue(depth)
    done = object()
    stop = threading.Event()

    def offer(item: object) -> bool:
        """Put unless the consumer has gone; a blocked put would hang its ``join``."""
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for batch in batches:
                if not offer(batch):
                    return
            offer(done)
        except BaseException as error:  # handed to the consumer, which re-raises it
            offer(error)

    worker = threading.Thread(target=produce, name="corpus-reader", daemon=True)
    worker.start()
    try:
        while (item := slots.get()) is not done:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()


@dataclass
class Part:
    """One file counted: what the local and the Ray executors both produce, and ``merge_parts`` adds up. Plain data
    (arrays, numbers, strings), so it travels back from a Ray worker unchanged. ``error`` is an ``InputError``'s
    ``(field, reason)`` that a Ray worker hands back instead of raising, so the driver raises the first in file order,
    as the local path does."""

    file: str
    fmt: str
    counts: dict[str, np.ndarray]  # tokenizer id -> tokens of each record, in file order (int32)
    chars: int = 0
    bytes: int = 0
    skipped: list[Skipped] = dataclass_field(default_factory=list)
    skipped_count: int = 0
    error: tuple[str, str] | None = None


def count_part(path_or_fileobj: str | os.PathLike | IO[bytes], fmt: str | None, *, field: str | None,
               tokenizer_ids: list[str], progress: Progress | None = None) -> Part:
    """Count one file (or stream) with each tokenizer, reading and parsing the next batch while this one counts."""
    tokenizers = {tid: get_tokenizer(tid) for tid in dict.fromkeys(tokenizer_ids)}
    source = Source(path_or_fileobj)
    try:
        fmt = detect_format(source.name, fmt)
        skip = Collector(source.name)
        chunks: dict[str, list[np.ndarray]] = {tid: [np.zeros(0, np.int32)] for tid in tokenizers}
        chars = size = 0
        for batch in prefetch(batched(READERS[fmt](source, field, skip), source)):
            for tid, tokenizer in tokenizers.items():
                chunks[tid].append(np.asarray(tokenizer.count_batch(batch.texts), dtype=np.int32))
            chars += sum(map(len, batch.texts))
            # after counting: the tokenizers have cached each string's UTF-8 form, so this is a copy, not an encode
            size += sum(len(text.encode("utf-8")) for text in batch.texts)
            if progress and batch.fraction is not None:
                progress(batch.fraction)
    finally:
        source.close()
    counts = {tid: np.concatenate(parts) for tid, parts in chunks.items()}
    return Part(source.name, fmt, counts, chars, size, skip.items, skip.count)


def merge_parts(name: str, field: str | None, parts: list[Part]) -> CorpusStats:
    """The corpus from its files' parts, in file order: the one merge both executors use, so they cannot drift.

    Exact: every record's count is kept and concatenated in file order, so totals, percentiles and the histogram
    come from the same array whichever machine counted which file. The first part's error is raised; a corpus
    without a usable record is refused, naming the field when every skip says it was missing."""
    if failed := next((part for part in parts if part.error), None):
        raise InputError(*failed.error)
    skip = Collector(name)
    for part in parts:
        skip.items.extend(part.skipped[:MAX_SKIPPED_LISTED - len(skip.items)])
        skip.count += part.skipped_count
    tokenizer_ids = list(parts[0].counts)
    stats = {tid: TokenStats(tid, np.concatenate([part.counts[tid] for part in parts])) for tid in tokenizer_ids}
    records = stats[tokenizer_ids[0]].records
    if records == 0:
        missing_field = bool(skip.items) and all(s.reason.startswith("no field") for s in skip.items)
        raise InputError("field" if missing_field else "file", no_records_reason(name, skip))
    fmt = "+".join(sorted({part.fmt for part in parts}))
    return CorpusStats(name, fmt, field, records, sum(p.chars for p in parts), sum(p.bytes for p in parts), stats,
                       skip.items, skip.count)


def no_records_reason(name: str, skip: Collector) -> str:
    if not skip.count:
        return f"{name}: no records with text"
    first = skip.items[0]
    where = f"on line {first.line}" if first.file == name else f"in {first.file} on line {first.line}"
    return f"{name}: no usable records; {skip.count} skipped, first {where}: {first.reason}"


@dataclass(frozen=True)
class CorpusFile:
    path: str
    fmt: str
    size: int  # bytes, for progress over the whole corpus


def corpus_files(path: str | os.PathLike, *, fmt: str | None, field: str | None) -> list[CorpusFile]:
    """The files a path names, in sorted order (the same on every executor): a file; a glob (quoted, so the shell
    leaves it alone; ``**`` recurses), every file it matches; or a directory, recursively, the files whose extension
    names a records format (JSONL, CSV, Parquet with a field; TXT without one; every file with ``fmt``), leaving out
    names that start with ``.`` or ``_`` (``_SUCCESS``, ``.crc`` files beside a Spark or Hive output). Each file's
    format comes from its own extension unless ``fmt`` names one for all."""
    text = str(path)
    if glob.has_magic(text) and not Path(text).exists():
        paths = sorted(p for p in glob.glob(text, recursive=True) if Path(p).is_file())
        if not paths:
            raise InputError("file", f"{text}: no file matches")
    elif Path(text).is_dir():
        paths = directory_files(Path(text), fmt, field)
    elif Path(text).is_file():
        paths = [str(Path(text))]
    else:
        raise InputError("file", f"{Path(text)}: no such file")
    return [CorpusFile(p, detect_format(p, fmt), os.stat(p).st_size) for p in paths]


def directory_files(directory: Path, fmt: str | None, field: str | None) -> list[str]:
    wanted = {"jsonl", "csv", "parquet"} if field else {"txt"}
    paths = sorted(str(p) for p in directory.rglob("*")
                   if p.is_file() and not any(part[0] in "._" for part in p.relative_to(directory).parts)
                   and (fmt or FORMATS.get(p.suffix.lower()) in wanted))
    if not paths:
        suffixes = ", ".join(sorted(s for s, f in FORMATS.items() if f in wanted))
        raise InputError("file", f"{directory}: no record files in this directory ({suffixes})")
    return paths


def corpus_name(path_or_fileobj: str | os.PathLike | IO[bytes]) -> str:
    if isinstance(path_or_fileobj, (str, os.PathLike)):
        text = str(path_or_fileobj)
        return text if glob.has_magic(text) and not Path(text).exists() else str(Path(text))
    return str(getattr(path_or_fileobj, "name", "<stdin>"))


def corpus_stats(path_or_fileobj: str | os.PathLike | IO[bytes], *, field: str | None, tokenizer_ids: list[str],
                 fmt: str | None = None, progress: Progress | None = None) -> CorpusStats:
    """Count every record with each tokenizer: one file, stream or upload, or a directory or glob of files (in
    sorted order); see the module docstring for formats and bad input. Each file is a part; ``merge_parts`` adds
    them up, as it does for ``corpus_ray.corpus_stats_on_ray``."""
    tokenizer_ids = checked_tokenizers(tokenizer_ids)
    if not isinstance(path_or_fileobj, (str, os.PathLike)):  # stdin or an upload: one stream
        parts = [count_part(path_or_fileobj, fmt, field=field, tokenizer_ids=tokenizer_ids, progress=progress)]
    else:
        files = corpus_files(path_or_fileobj, fmt=fmt, field=field)
        total, done, parts = sum(f.size for f in files) or 1, 0, []
        for file in files:
            within = within_file(progress, done / total, file.size / total)
            parts.append(count_part(file.path, file.fmt, field=field, tokenizer_ids=tokenizer_ids, progress=within))
            done += file.size
    stats = merge_parts(corpus_name(path_or_fileobj), field, parts)
    if progress:
        progress(1.0)
    return stats


def within_file(progress: Progress | None, start: float, share: float) -> Progress | None:
    """Progress through one file as progress through the corpus: the file is ``share`` of it, from ``start``."""
    return (lambda fraction: progress(start + fraction * share)) if progress else None


def checked_tokenizers(tokenizer_ids: list[str]) -> list[str]:
    """The ids without repeats, each loaded once here so a bad id fails before any file is read."""
    if not tokenizer_ids:
        raise InputError("tokenizer", "choose at least one tokenizer")
    for tid in tokenizer_ids:
        get_tokenizer(tid)
    return list(dict.fromkeys(tokenizer_ids))


@dataclass(frozen=True)
class TextCount:
    tokenizer: str
    tokens: int
    chars: int
    bytes: int


def read_text(path_or_fileobj: str | os.PathLike | IO[bytes]) -> tuple[str, str]:
    """A whole file as one text, exactly: strict UTF-8, nothing stripped (an empty file is the empty text);
    returns (name, text)."""
    source = Source(path_or_fileobj)
    try:
        data = source.stream.read(MAX_TEXT_BYTES + 1)
    finally:
        source.close()
    if len(data) > MAX_TEXT_BYTES:
        raise InputError("file", f"{source.name}: over {MAX_TEXT_BYTES // 2**20} MiB as one text; "
                                 "count it as records (a field, or one line per record)")
    if (nul := data.find(b"\x00")) >= 0:
        raise InputError("file", f"{source.name}: looks binary (NUL byte on line {line_of(data, nul)})")
    try:
        return source.name, data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError("file", f"{source.name}: not valid UTF-8 on line {line_of(data, error.start)} "
                                 f"(byte {error.start + 1}: {data[error.start:error.start + 1]!r})") from None


def line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def count_text_file(path_or_fileobj: str | os.PathLike | IO[bytes], tokenizer_id: str) -> TextCount:
    """Tokens of a file's exact content as one text (the ``tokens`` command without ``--field``)."""
    tokenizer = get_tokenizer(tokenizer_id)
    _, text = read_text(path_or_fileobj)
    return TextCount(tokenizer.info.id, tokenizer.count(text), len(text), len(text.encode("utf-8")))


def corpus_fields(path_or_fileobj: str | os.PathLike | IO[bytes], fmt: str | None = None) -> list[str]:
    """The fields a record file offers (the UI's field chooser): JSONL keys of the first object, CSV header, schema."""
    source = Source(path_or_fileobj)
    try:
        fmt = detect_format(source.name, fmt)
        return FIELD_READERS[fmt](source)
    finally:
        source.close()


def jsonl_fields(source: Source) -> list[str]:
    skip = Collector(source.name)
    for line, raw in raw_lines(source, skip):
        text = decode(raw, line, skip)
        if text and text.strip():
            record = json_record(text, line, skip)
            if isinstance(record, dict):
                texts = [key for key, value in record.items() if isinstance(value, str) or chat_text(value) is not None]
                return texts or list(record)
    if skip.count:  # no record could be read (malformed JSON, a record over the size limit): say why, not "no field"
        raise InputError("file", no_records_reason(source.name, skip))
    return []


def csv_fields(source: Source) -> list[str]:
    with csv_reader(source, "replace") as reader:
        return next(reader, [])


def parquet_fields(source: Source) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.ParquetFile(source.stream).schema_arrow
    except (pa.ArrowException, OSError) as error:
        raise InputError("file", f"{source.name}: not a readable Parquet file ({error})") from None
    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]


FIELD_READERS: dict[str, Callable[[Source], list[str]]] = {
    "txt": lambda source: [], "jsonl": jsonl_fields, "csv": csv_fields, "parquet": parquet_fields,
}
