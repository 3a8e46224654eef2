"""A batch job's input: the OpenAI batch file format, or plain records turned into requests by a prompt template.

The OpenAI batch input format (one JSON object per line: ``custom_id``, ``method``, ``url``, ``body``) is the one
OpenAI's Batch API reads (https://platform.openai.com/docs/guides/batch, ``BatchRequestInput`` in its API
reference) and vLLM's ``python -m vllm.entrypoints.openai.run_batch -i FILE`` reads (``BatchRequestInput`` in
``vllm/entrypoints/openai/run_batch.py``), so one file runs on either and here. Plain JSONL, CSV or Parquet records are
read with the corpus readers (``tokenizers/corpus.py``: same skipping and reporting of bad records) and become chat
requests whose user message is ``template`` with ``{text}`` replaced by the record's field.

Records are streamed, never held all at once; their order is their index ``idx``, which the store keys records by.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infercost.errors import InputError
from infercost.runner.records import MAX_REQUEST_TOKENS
from infercost.tokenizers.corpus import MAX_RECORD_BYTES, READERS, Collector, Source, decode, detect_format, raw_lines

ENDPOINTS = ("/v1/chat/completions", "/v1/completions")
DEFAULT_TEMPLATE = "{text}"
# Bounds on what a record may ask for, checked when the job is planned: a budget and a cost cap are made of these
# numbers, so a negative or absurd one is refused before anything is sent. OpenAI allows n up to 128.
MAX_OUTPUT_TOKENS = MAX_REQUEST_TOKENS
MAX_CHOICES = 128
LIMITS = {"max_tokens": MAX_OUTPUT_TOKENS, "max_completion_tokens": MAX_OUTPUT_TOKENS, "n": MAX_CHOICES,
          "best_of": MAX_CHOICES}


@dataclass(slots=True)
class BatchRecord:
    idx: int
    custom_id: str
    url: str  # /v1/chat/completions | /v1/completions
    body: dict[str, Any]
    line: int

    @property
    def max_tokens(self) -> int | None:
        """The output cap of one choice, as the body sets it (None: no cap)."""
        value = self.body.get("max_completion_tokens", self.body.get("max_tokens"))
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def choices(self) -> int:
        """How many completions the server writes, and bills: ``n``, or a completion's ``best_of`` if larger."""
        counts = [self.body.get("n")]
        if not self.url.endswith("/chat/completions"):
            counts.append(self.body.get("best_of"))
        return max([1] + [c for c in counts if isinstance(c, int) and not isinstance(c, bool)])

    @property
    def max_out(self) -> int | None:
        """The most completion tokens the server may write for this record: every choice's cap (None: no cap)."""
        cap = self.max_tokens
        return None if cap is None else cap * self.choices

    def prompt_text(self) -> str:
        """The text a tokenizer counts as the request's input: every message's text, or the prompt."""
        if self.url.endswith("/chat/completions"):
            return "\n".join(_content_text(m.get("content")) for m in self.body.get("messages") or []
                             if isinstance(m, dict))
        prompt = self.body.get("prompt", "")
        return "\n".join(map(str, prompt)) if isinstance(prompt, list) else str(prompt)


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # content parts: only text parts are tokens of the prompt text
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def is_openai_batch(path: str | Path, field: str | None) -> bool:
    """Without ``--field``, a .jsonl file is an OpenAI batch file."""
    return field is None and detect_format(str(path), None) == "jsonl"


def read_records(path: str | Path, *, field: str | None = None, template: str = DEFAULT_TEMPLATE,
                 model: str | None = None, max_tokens: int | None = None,
                 skipped: Collector | None = None) -> Iterator[BatchRecord]:
    """Every request of the input, in order. An OpenAI batch file's bad line is an InputError naming the line (a
    batch must be sent whole or the person fixes it); a plain record that cannot be read is skipped and reported."""
    if "{text}" not in template:
        raise InputError("template", "the prompt template must contain {text}, where each record's field goes")
    if not Path(path).is_file():
        raise InputError("input", f"{path}: no such file")
    if is_openai_batch(path, field):
        yield from _openai_records(path, model, max_tokens)
    else:
        yield from _plain_records(path, field, template, model, max_tokens, skipped or Collector(str(path)))


def _openai_records(path: str | Path, model: str | None, max_tokens: int | None) -> Iterator[BatchRecord]:
    source = Source(path)
    skip = Collector(str(path))
    try:
        idx = 0
        for line, raw in raw_lines(source, skip):
            text = decode(raw, line, skip)
            if skip.count:
                raise InputError("input", f"{path} line {skip.items[0].line}: {skip.items[0].reason}")
            if text is None or not text.strip():
                continue
            yield _openai_record(text, idx, line, path, model, max_tokens)
            idx += 1
        if skip.count:  # a line that raw_lines itself skipped (a record over the size limit) never reached the loop
            raise InputError("input", f"{path} line {skip.items[0].line}: {skip.items[0].reason}")
        if idx == 0:
            raise InputError("input", f"{path}: no requests in the file")
    finally:
        source.close()


def _openai_record(text: str, idx: int, line: int, path: str | Path, model: str | None,
                   max_tokens: int | None) -> BatchRecord:
    where = f"{path} line {line}"
    try:
        item = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError("input", f"{where}: malformed JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(item, dict):
        raise InputError("input", f"{where}: not a JSON object")
    for key, kind in (("custom_id", str), ("url", str), ("body", dict)):
        if not isinstance(item.get(key), kind):
            raise InputError(key, f"{where}: missing or not a {kind.__name__}")
    if item.get("method", "POST") != "POST":
        raise InputError("method", f"{where}: only POST requests are batched (got {item.get('method')!r})")
    if item["url"] not in ENDPOINTS:
        raise InputError("url", f"{where}: {item['url']!r} is not one of {', '.join(ENDPOINTS)}")
    body = _with_defaults(item["body"], model, max_tokens)
    check_limits(body, f"{where} (custom_id {item['custom_id'][:60]!r})")
    return BatchRecord(idx, item["custom_id"], item["url"], body, line)


def check_limits(body: dict[str, Any], where: str) -> None:
    """Each output cap and choice count a body sets is a whole number within ``LIMITS``, or null (unset)."""
    for name, most in LIMITS.items():
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
            raise InputError(name, f"{where}: {json.dumps(value)[:40]} is not a whole number from 1 to {most:,}")


def _with_defaults(body: dict[str, Any], model: str | None, max_tokens: int | None) -> dict[str, Any]:
    """``--model`` names the model on the server the job runs against, so one file runs anywhere; a record without
    an output cap gets ``--max-tokens`` when given."""
    body = dict(body)
    if model:
        body["model"] = model
    if max_tokens is not None and "max_tokens" not in body and "max_completion_tokens" not in body:
        body["max_tokens"] = max_tokens
    return body


def _plain_records(path: str | Path, field: str | None, template: str, model: str | None, max_tokens: int | None,
                   skip: Collector) -> Iterator[BatchRecord]:
    fmt = detect_format(str(path), None)
    if fmt == "txt" and field:
        field = None
    source = Source(path)
    try:
        for idx, (line, text) in enumerate(READERS[fmt](source, field, skip)):
            if len(text) > MAX_RECORD_BYTES:
                continue
            body = {"messages": [{"role": "user", "content": template.replace("{text}", text)}]}
            yield BatchRecord(idx, f"line-{line}", "/v1/chat/completions", _with_defaults(body, model, max_tokens),
                              line)
    finally:
        source.close()
