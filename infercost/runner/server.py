"""An OpenAI-compatible HTTP server over the in-process engine, so the HTTP benchmark has a real engine to measure.

Routes: ``GET /v1/models``, ``POST /v1/completions``, ``POST /v1/chat/completions`` (streaming SSE or not), plus
``GET /health``. Each SSE chunk carries exactly one token, so chunk gaps are decode steps.

Request fields honoured: ``max_tokens`` (default 16; chat also takes ``max_completion_tokens``), ``min_tokens``,
``ignore_eos``, ``stream``, ``stream_options.include_usage``. Decoding is greedy: ``temperature``, ``top_p`` and other
sampling fields are accepted and ignored. One prompt per request (``n`` must be 1).

Prompts: text, or a list of token ids (exact, the best way to control input length). A model with a tokenizer
encodes text with it (completions add special tokens as the tokenizer does by default; chat uses its chat template).
A ``random:`` model has no vocabulary of its own: its text is counted as its family's bundled tokenizer counts it
(Llama 3's for a llama, Qwen's for a qwen, ``RANDOM_TEXT_TOKENIZERS``), each id folded into the model's ordinary ids,
so a benchmark asked for 128 tokens or a batch job's budget counts what a real model of that family would read; each
generated token reads as `` tok<ID>``. ``usage`` counts the token ids the model actually read and generated.

Concurrency: one worker thread owns the model and runs *static batches*: it takes every waiting request (up to
``max_batch``), decodes them together until the longest is done, then takes the next batch. Requests arriving
mid-batch wait for the next one; ``max_batch=1`` serialises requests.
"""

from __future__ import annotations

import asyncio
import json
import queue
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from infercost.errors import InputError, from_pydantic
from infercost.runner.inprocess import InProcessModel
from infercost.tokenizers.registry import get_tokenizer

DEFAULT_MAX_TOKENS = 16


# ---- requests ----------------------------------------------------------------------------------------------------


class _Request(BaseModel):
    model_config = ConfigDict(extra="allow")  # OpenAI clients send fields we do not use (temperature, top_p, ...)

    model: str | None = None
    max_tokens: int | None = Field(None, ge=1)
    min_tokens: int = Field(0, ge=0)
    ignore_eos: bool = False
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    n: int = Field(1, ge=1, le=1)


class CompletionRequest(_Request):
    prompt: str | list[int] | list[str] | list[list[int]]


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(_Request):
    messages: list[ChatMessage] = Field(min_length=1)
    max_completion_tokens: int | None = Field(None, ge=1)


@dataclass
class Job:
    """One request on its way through the worker: tokens flow back through ``emit`` (None ends the stream)."""

    prompt_ids: list[int]
    max_tokens: int
    min_tokens: int
    emit: Callable[[tuple[int, bool] | BaseException | None], None]
    cancelled: bool = False
    finish_reason: str = "length"
    completion_ids: list[int] = field(default_factory=list)


# ---- text <-> token ids --------------------------------------------------------------------------------------------


# The bundled (offline) tokenizer that counts a random model's text, by its architecture's model_type
RANDOM_TEXT_TOKENIZERS = {"llama": "llama3", "qwen2": "qwen2.5", "qwen3": "qwen2.5", "qwen2_moe": "qwen2.5",
                          "qwen3_moe": "qwen2.5", "deepseek_v2": "deepseek", "deepseek_v3": "deepseek",
                          "mistral": "mistral-tekken", "mixtral": "mistral-tekken"}  # fmt: skip
OTHER_FAMILIES_TOKENIZER = "o200k_base"


class TextCodec:
    """Text to token ids and back, with the model's tokenizer or, for a random model, its family's (the ids folded
    into the model's ordinary range: the count is real, the ids are as random as the weights)."""

    def __init__(self, model: InProcessModel) -> None:
        self.model = model
        self.tokenizer = model.tokenizer
        self.counter = None if model.tokenizer is not None else get_tokenizer(RANDOM_TEXT_TOKENIZERS.get(
            model.model.config.model_type, OTHER_FAMILIES_TOKENIZER))  # fmt: skip

    def encode(self, text: str) -> list[int]:
        if self.tokenizer is not None:
            return list(self.tokenizer(text)["input_ids"])
        low, high = self.model.regular_ids
        return [low + token % (high - low) for token in self.counter.encode(text)]

    def chat_prompt(self, messages: Sequence[ChatMessage]) -> list[int]:
        plain = [{"role": m.role, "content": _content_text(m.content)} for m in messages]
        if self.tokenizer is not None and getattr(self.tokenizer, "chat_template", None):
            return list(self.tokenizer.apply_chat_template(plain, add_generation_prompt=True, tokenize=True,
                                                           return_dict=True)["input_ids"])
        return self.encode("".join(f"{m['role']}: {m['content']}\n" for m in plain) + "assistant:")

    def detokenizer(self, prompt_ids: list[int]) -> Callable[[int], str]:
        """A function from each new token id to the text it adds, in constant time per token.

        A tokenizer may need earlier ids to place a token's bytes (a leading space, half of a UTF-8 character), so
        text is decoded from a few ids back and only what became final is handed out (TGI's method).
        """
        if self.tokenizer is None:
            return lambda token: "" if token in self.model.special_ids else f" tok{token}"
        ids = list(prompt_ids[-5:])
        offsets = [0, len(ids)]  # [start of the decoded window, end of the text already handed out]

        def piece(token: int) -> str:
            ids.append(token)
            prefix = self.tokenizer.decode(ids[offsets[0]:offsets[1]], skip_special_tokens=True)
            text = self.tokenizer.decode(ids[offsets[0]:], skip_special_tokens=True)
            if len(text) <= len(prefix) or text.endswith("\ufffd"):
                return ""  # an incomplete character: it comes out with a later token
            offsets[:] = [offsets[1], len(ids)]
            return text[len(prefix):]

        return piece


def _content_text(content: str | list[dict[str, Any]] | None) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if part.get("type") == "text")
    return content or ""


# ---- the worker ----------------------------------------------------------------------------------------------------


class Worker:
    """The one thread that runs the model: static batches of whatever is waiting, up to ``max_batch``."""

    def __init__(self, model: InProcessModel, max_batch: int) -> None:
        self.model = model
        self.max_batch = max_batch
        self.jobs: queue.Queue[Job | None] = queue.Queue()
        self.running: list[Job] = []
        self.thread = threading.Thread(target=self._loop, name="infercost-worker", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        """Finish now: the running batch stops at its next step, waiting requests are dropped."""
        for job in self.running:
            job.cancelled = True
        self.jobs.put(None)
        self.thread.join(timeout=30)

    def submit(self, job: Job) -> None:
        self.jobs.put(job)

    def _loop(self) -> None:
        while (first := self.jobs.get()) is not None:
            batch = [first]
            while len(batch) < self.max_batch and not self.jobs.empty():
                job = self.jobs.get_nowait()
                if job is None:
                    return
                batch.append(job)
            self._run(batch)

    def _run(self, batch: list[Job]) -> None:
        self.running = batch
        try:
            steps = self.model.stream_batch([j.prompt_ids for j in batch], [j.max_tokens for j in batch],
                                            [j.min_tokens for j in batch])
            for row in steps:
                for job, item in zip(batch, row, strict=False):
                    if item is not None and not job.cancelled:
                        job.emit(item)
                if all(job.cancelled for job in batch):
                    break
        except Exception as error:  # noqa: BLE001 - reported to every waiting client, and the server goes on
            for job in batch:
                job.emit(error)


# ---- HTTP --------------------------------------------------------------------------------------------------------


class Server:
    """The aiohttp application: validates requests, feeds the worker, writes responses."""

    def __init__(self, model: InProcessModel, *, served_name: str, max_batch: int = 32) -> None:
        self.model = model
        self.served_name = served_name
        self.codec = TextCodec(model)
        self.worker = Worker(model, max_batch)
        self.created = int(time.time())

    def app(self) -> web.Application:
        app = web.Application(middlewares=[_json_errors], client_max_size=16 * 1024 * 1024)
        app.router.add_get("/health", self.health)
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/completions", self.completions)
        app.router.add_post("/v1/chat/completions", self.chat_completions)
        app.on_startup.append(lambda _app: self._start_worker())
        app.on_cleanup.append(lambda _app: self._stop_worker())
        return app

    async def _start_worker(self) -> None:
        self.worker.start()

    async def _stop_worker(self) -> None:
        await asyncio.to_thread(self.worker.stop)

    async def health(self, _request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def models(self, _request: web.Request) -> web.Response:
        entry = {"id": self.served_name, "object": "model", "created": self.created, "owned_by": "infercost",
                 "max_model_len": self.model.max_context, "root": self.model.name}
        return web.json_response({"object": "list", "data": [entry]})

    async def completions(self, request: web.Request) -> web.StreamResponse:
        body = _parse(CompletionRequest, await _json_body(request))
        prompt_ids = self._prompt_ids(body.prompt)
        return await self._generate(request, body, prompt_ids, body.max_tokens, kind="text_completion")

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        body = _parse(ChatRequest, await _json_body(request))
        prompt_ids = self.codec.chat_prompt(body.messages)
        max_tokens = body.max_completion_tokens or body.max_tokens
        return await self._generate(request, body, prompt_ids, max_tokens, kind="chat.completion")

    def _prompt_ids(self, prompt: str | list[int] | list[str] | list[list[int]]) -> list[int]:
        if not prompt:
            raise InputError("prompt", "is empty")
        if isinstance(prompt, str):
            ids = self.codec.encode(prompt)
        elif isinstance(prompt[0], int):
            ids = list(prompt)  # type: ignore[arg-type]
        elif len(prompt) == 1:
            return self._prompt_ids(prompt[0])  # type: ignore[arg-type]
        else:
            raise InputError("prompt", "send exactly one prompt per request")
        if not all(0 <= token < self.model.vocab_size for token in ids):
            raise InputError("prompt", f"token ids must lie in 0..{self.model.vocab_size - 1}")
        return ids

    def _check(self, body: _Request, prompt_ids: list[int], max_tokens: int) -> None:
        if body.model not in (None, self.served_name, self.model.name):
            raise _NotFound("model", f"this server serves {self.served_name!r}, not {body.model!r}")
        if body.min_tokens > max_tokens:
            raise InputError("min_tokens", f"{body.min_tokens} is more than max_tokens ({max_tokens})")
        if len(prompt_ids) + max_tokens > self.model.max_context:
            raise InputError("max_tokens", f"prompt ({len(prompt_ids)} tokens) plus max_tokens ({max_tokens}) "
                                           f"exceeds the context of {self.model.max_context}")

    async def respond(self, url: str, payload: Any) -> dict[str, Any]:
        """One request without HTTP (a batch job's Ray actor calls this): the whole, non-streamed body the route
        would return. Raises InputError for a bad request and what the engine raised for an engine failure."""
        if url.endswith("/chat/completions"):
            body = _parse(ChatRequest, payload)
            prompt_ids, max_tokens, kind = (self.codec.chat_prompt(body.messages),
                                            body.max_completion_tokens or body.max_tokens, "chat.completion")
        else:
            body = _parse(CompletionRequest, payload)
            prompt_ids, max_tokens, kind = self._prompt_ids(body.prompt), body.max_tokens, "text_completion"
        job, tokens = self._submit(body, prompt_ids, max_tokens)
        try:
            return await _Reply(self, kind, job).whole_body(tokens)
        finally:
            job.cancelled = True

    def _submit(self, body: _Request, prompt_ids: list[int], max_tokens: int | None) -> tuple[Job, asyncio.Queue]:
        max_tokens = max_tokens or DEFAULT_MAX_TOKENS
        self._check(body, prompt_ids, max_tokens)
        min_tokens = max_tokens if body.ignore_eos else body.min_tokens
        loop = asyncio.get_running_loop()
        tokens: asyncio.Queue[Any] = asyncio.Queue()
        job = Job(prompt_ids, max_tokens, min_tokens,
                  emit=lambda item: loop.call_soon_threadsafe(tokens.put_nowait, item))
        self.worker.submit(job)
        return job, tokens

    async def _generate(self, request: web.Request, body: _Request, prompt_ids: list[int], max_tokens: int | None,
                        *, kind: str) -> web.StreamResponse:
        job, tokens = self._submit(body, prompt_ids, max_tokens)
        reply = _Reply(self, kind, job)
        try:
            if body.stream:
                include_usage = bool((body.stream_options or {}).get("include_usage"))
                return await reply.stream(request, tokens, include_usage)
            return await reply.whole(tokens)
        finally:
            job.cancelled = True  # a client that went away frees its batch slot


class _Reply:
    """Turns a job's token stream into OpenAI's response objects, streamed or whole."""

    def __init__(self, server: Server, kind: str, job: Job) -> None:
        self.server, self.kind, self.job = server, kind, job
        self.chat = kind == "chat.completion"
        self.id = f"{'chatcmpl' if self.chat else 'cmpl'}-{uuid.uuid4().hex}"
        self.piece = server.codec.detokenizer(job.prompt_ids)
        self.created = int(time.time())

    async def tokens(self, tokens: asyncio.Queue[Any]) -> Any:
        """The job's text pieces as they come; raises what the worker raised."""
        while True:
            item = await tokens.get()
            if isinstance(item, BaseException):
                raise item
            token, last = item
            self.job.completion_ids.append(token)
            if last and token in self.server.model.eos_ids:
                self.job.finish_reason = "stop"
            yield self.piece(token), last
            if last:
                return

    async def whole(self, tokens: asyncio.Queue[Any]) -> web.Response:
        return web.json_response(await self.whole_body(tokens))

    async def whole_body(self, tokens: asyncio.Queue[Any]) -> dict[str, Any]:
        text = "".join([piece async for piece, _last in self.tokens(tokens)])
        choice: dict[str, Any] = {"index": 0, "finish_reason": self.job.finish_reason, "logprobs": None}
        choice.update({"message": {"role": "assistant", "content": text}} if self.chat else {"text": text})
        return {**self._head(self.kind), "choices": [choice], "usage": self._usage()}

    async def stream(self, request: web.Request, tokens: asyncio.Queue[Any], include_usage: bool) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        chunk_kind = "chat.completion.chunk" if self.chat else "text_completion"
        try:
            await self._chunks(response, tokens, chunk_kind)
        except Exception as error:  # noqa: BLE001 - headers are sent: the error travels as an SSE event
            await _send(response, {"error": {"message": f"engine error: {type(error).__name__}: {error}",
                                             "type": "server_error", "param": None, "code": 500}})
            include_usage = False
        if include_usage:
            await _send(response, {**self._head(chunk_kind), "choices": [], "usage": self._usage()})
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _chunks(self, response: web.StreamResponse, tokens: asyncio.Queue[Any], chunk_kind: str) -> None:
        first = True
        async for piece, last in self.tokens(tokens):
            delta: dict[str, Any] = {"content": piece}
            if self.chat and first:
                delta = {"role": "assistant", "content": piece}  # role rides on the first token, no empty chunk
            choice: dict[str, Any] = {"index": 0, "logprobs": None,
                                      "finish_reason": self.job.finish_reason if last else None}
            choice.update({"delta": delta} if self.chat else {"text": piece})
            await _send(response, {**self._head(chunk_kind), "choices": [choice]})
            first = False

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.server.served_name}

    def _usage(self) -> dict[str, int]:
        prompt, completion = len(self.job.prompt_ids), len(self.job.completion_ids)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


async def _send(response: web.StreamResponse, payload: dict[str, Any]) -> None:
    await response.write(b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n")


class _NotFound(InputError):
    """A request naming something this server does not have (OpenAI answers 404)."""


async def _json_body(request: web.Request) -> Any:
    try:
        return await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError("body", f"is not valid JSON ({error})") from error


def _parse(model: type[BaseModel], body: Any) -> Any:
    if not isinstance(body, dict):
        raise InputError("body", "must be a JSON object")
    try:
        return model.model_validate(body)
    except ValidationError as error:
        raise from_pydantic(error) from error


@web.middleware
async def _json_errors(request: web.Request, handler: Any) -> web.StreamResponse:
    """Every failure is an OpenAI-style JSON error naming the field, never an HTML page or a traceback."""
    try:
        return await handler(request)
    except InputError as error:
        status = 404 if isinstance(error, _NotFound) else 400
        return _error(status, str(error), error.field)
    except web.HTTPException as error:
        if error.status < 400:
            raise
        return _error(error.status, error.reason, None)
    except Exception as error:  # noqa: BLE001 - an engine failure: say so, keep serving
        return _error(500, f"engine error: {type(error).__name__}: {error}", None)


def _error(status: int, message: str, param: str | None) -> web.Response:
    kind = "invalid_request_error" if status < 500 else "server_error"
    payload = {"error": {"message": message, "type": kind, "param": param, "code": status}}
    return web.json_response(payload, status=status)


# ---- running -----------------------------------------------------------------------------------------------------


def serve(model: InProcessModel, *, host: str = "127.0.0.1", port: int = 8000, max_batch: int = 32,
          served_name: str | None = None) -> None:
    """Warm the model up, listen, print the URL to stderr, and serve until SIGINT or SIGTERM."""
    model.generate_timed([[model.regular_ids[0]] * 4], max_new_tokens=2)  # one-time costs before the first client
    server = Server(model, served_name=served_name or model.name, max_batch=max_batch)
    asyncio.run(_serve_until_stopped(server.app(), host, port))


async def _serve_until_stopped(app: web.Application, host: str, port: int) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        raise InputError("port", f"cannot listen on {host}:{port}: {error.strerror or error}") from error
    bound_host, bound_port = runner.addresses[0][:2]
    print(f"infercost serve: listening on http://{_url_host(bound_host)}:{bound_port}/v1", file=sys.stderr,
          flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host

