"""A loopback fake of the OpenAI and Anthropic HTTP APIs that scripts replies and records every request.

Tests point the official SDKs at it (``OpenAI(base_url=fake.openai_base_url)``,
``Anthropic(base_url=fake.anthropic_base_url)``) and assert on what actually reached the wire.

Served: ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages`` (Anthropic), as JSON or, when the
body has ``"stream": true``, as server-sent events over a chunked response; ``POST /v1/embeddings``
(OpenAI) answers one vector per input (:func:`fake_vector`) unless an error is scripted. Scripted replies are consumed
in order by either path; when none is queued the default reply answers. Reported usage is computed from
what was received (see :func:`count_prompt_tokens`) unless a reply overrides it. With
``prompt_cache=True`` the Anthropic path caches prompt prefixes at ``cache_control`` breakpoints and
reports cache reads and writes (see :mod:`tests.fakes.prompt_cache`, which also counts tools there).

Binds 127.0.0.1 only. Bodies over ``max_body_bytes`` are refused unread (413). A failure inside a handler
answers 500 and is kept in :attr:`FakeProvider.errors`; it never stops the server.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import urlsplit

from context_assembly.encodings import get_encoding
from tests.fakes.prompt_cache import PrefixCache

WireName = Literal["openai", "anthropic"]
EMBEDDINGS_PATH = "/v1/embeddings"
PATHS: dict[str, WireName] = {
    "/v1/chat/completions": "openai",
    "/v1/messages": "anthropic",
    EMBEDDINGS_PATH: "openai",
}
EMBEDDING_DIMENSIONS = 8
ENCODING = "o200k_base"
# The OpenAI cookbook's chat overheads ("How to count tokens with tiktoken").
TOKENS_PER_MESSAGE, TOKENS_PER_NAME, REPLY_PRIMING = 3, 1, 3
STREAM_PIECE_CHARS = 8


class FakeProviderError(RuntimeError):
    """The fake was used wrongly (e.g. its address was read before it was started)."""


# --- scripted replies ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Mapping[str, Any]

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, separators=(",", ":"))


@dataclass(frozen=True)
class HttpError:
    """An error answer, rendered in the requested provider's error JSON unless ``body`` is given."""

    status: int
    message: str
    code: str | None = None  # OpenAI's ``error.code``; Anthropic's error type follows from ``status``
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None


def _message_texts(body: Mapping[str, Any]) -> list[str]:
    """Every text of a request's messages (and an Anthropic ``system``), in order."""
    texts: list[str] = []
    system = body.get("system")
    for item in [{"content": system}] if system else []:
        texts.extend(_content_texts(item["content"]))
    for message in body.get("messages", []):
        if isinstance(message, Mapping):
            texts.extend(_content_texts(message.get("content")))
    return texts


def _content_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            str(part.get("text") or part.get("content") or "")
            for part in content
            if isinstance(part, Mapping)
        ]
    return []


@dataclass(frozen=True)
class Reply:
    """One format-agnostic scripted answer, rendered in whichever wire format was requested.

    ``latency`` seconds pass before anything is sent. ``malformed`` sends a 200 whose JSON (or, when
    streaming, one event) does not parse. ``truncate_stream`` sends the first half of the events and
    closes the connection mid-body. ``include_usage=False`` leaves usage out entirely.
    ``gate`` (an event the test sets) holds a stream after its first ``gate_after`` content events
    (one by default) until it is set,
    so a test can see a delta arrive while the rest has not been sent, and a whole answer before it
    is sent, so a test can see a request wait on the provider. Streaming only: ``chunk_interval``
    seconds pass between events.
    ``echo`` appends every message text of the request to ``text``: a model asked to "repeat everything
    above verbatim", which does.
    ``minimal_chunks`` streams OpenAI chunks as several self-hosted servers send them: each carries
    only ``choices`` with a ``delta`` (no ``id``, ``model``, ``object``, ``created``, ``index``), the
    usage chunk only ``choices: []`` and ``usage``; a finish reason only where there is one.
    ``finish_reason=False`` sends no closing chunk, so no chunk names a finish reason; ``done=False``
    ends the body without ``data: [DONE]`` (the OpenAI wire only, all three). ``hold_after_done``
    seconds pass between a stream's last event and the end of its body (a proxy that holds it open).
    ``thinking`` blocks lead an Anthropic reply (streamed as ``thinking_delta`` pieces, then a
    ``signature_delta``); the OpenAI wire leaves them out.
    ``cached_tokens`` is part of the prompt: OpenAI reports it in ``prompt_tokens_details``, Anthropic as
    ``cache_read_input_tokens`` with ``input_tokens`` = prompt - cached, as the real APIs do.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    error: HttpError | None = None
    latency: float = 0.0
    malformed: bool = False
    truncate_stream: bool = False
    include_usage: bool = True
    max_tokens_reached: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int = 0
    chunk_interval: float = 0.0
    gate: threading.Event | None = field(default=None, compare=False)
    gate_after: int = 1
    echo: bool = False
    minimal_chunks: bool = False
    finish_reason: bool = True
    done: bool = True
    hold_after_done: float = 0.0
    thinking: tuple[tuple[str, str], ...] = ()  # Anthropic thinking blocks (text, signature), before the text

    @classmethod
    def tools(cls, *calls: tuple[str, str, Mapping[str, Any]], text: str = "") -> Reply:
        return cls(text=text, tool_calls=tuple(ToolCall(*call) for call in calls))

    @classmethod
    def failing(cls, status: int, message: str, **kwargs: Any) -> Reply:
        return cls(error=HttpError(status, message, **kwargs))


@dataclass(frozen=True)
class RawReply:
    """A provider-specific answer sent verbatim, whatever path or format was requested."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


def rate_limited(retry_after: float = 1) -> Reply:
    return Reply.failing(
        429, "Rate limit reached.", code="rate_limit_exceeded", headers=(("retry-after", f"{retry_after:g}"),)
    )


def server_error() -> Reply:
    return Reply.failing(500, "The server had an error while processing your request.")


UNAUTHORIZED = HttpError(401, "Incorrect API key provided.", code="invalid_api_key")


def unauthorized() -> Reply:
    return Reply(error=UNAUTHORIZED)


def context_length_exceeded(limit: int = 128_000) -> Reply:
    # Carries both providers' telltale phrases, so either adapter's classifier recognises it.
    message = f"prompt is too long: this model's maximum context length is {limit} tokens"
    return Reply.failing(400, message, code="context_length_exceeded")


ScriptItem = Reply | RawReply | str | Mapping[str, Any]


def _as_reply(item: ScriptItem) -> Reply | RawReply:
    if isinstance(item, Reply | RawReply):
        return item
    if isinstance(item, str):
        return Reply(text=item)
    return RawReply(json.dumps(item).encode())


# --- token counting -----------------------------------------------------------------------------------


def fake_vector(item: Any, size: int) -> list[float]:
    """The fake's vector of one embedding input: the same input, the same vector."""
    digest = hashlib.sha256(json.dumps(item).encode()).digest()
    return [round(digest[position % len(digest)] / 255, 6) for position in range(size)]


def count_text_tokens(text: str) -> int:
    """Tokens of ``text`` in o200k_base; special-token strings count as plain text."""
    return len(get_encoding(ENCODING).encode(text, disallowed_special=()))


def _as_text(value: Any) -> str:
    """Text parts count as their text; other structures (tool calls, tool inputs) as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_as_text(item) for item in value)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def count_prompt_tokens(body: Mapping[str, Any]) -> int:
    """Prompt tokens by the OpenAI cookbook rule, for either wire format.

    3 per message + the tokens of every value in it (role, content, name, ...) + 1 per ``name`` + 3 for
    reply priming. Anthropic's top-level ``system`` counts as a leading system message. Tool specs and
    other parameters are not counted.
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if body.get("system"):
        messages.insert(0, {"role": "system", "content": body["system"]})
    total = REPLY_PRIMING
    for message in messages:
        total += TOKENS_PER_MESSAGE
        for key, value in message.items():
            total += count_text_tokens(_as_text(value)) + (TOKENS_PER_NAME if key == "name" else 0)
    return total


@dataclass(frozen=True)
class Usage:
    prompt: int
    completion: int
    cached: int
    cache_write: int = 0


def _usage(reply: Reply, body: Mapping[str, Any], cache: PrefixCache | None = None) -> Usage:
    completion = reply.completion_tokens
    if completion is None:
        completion = count_text_tokens(reply.text) + sum(
            count_text_tokens(call.arguments_json) for call in reply.tool_calls
        )
        completion += sum(count_text_tokens(text) for text, _ in reply.thinking)  # billed as output
    if cache is not None and reply.prompt_tokens is None:
        cached = cache.account(body)
        return Usage(cached.prompt, completion, cached.read, cached.written)
    prompt = reply.prompt_tokens if reply.prompt_tokens is not None else count_prompt_tokens(body)
    return Usage(prompt, completion, reply.cached_tokens)


# --- wire formats -------------------------------------------------------------------------------------

Event = tuple[str | None, Any]  # (SSE event name, JSON payload)
_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                          529: "overloaded_error"}  # fmt: skip


def _pieces(text: str) -> list[str]:
    return [text[i : i + STREAM_PIECE_CHARS] for i in range(0, len(text), STREAM_PIECE_CHARS)]


def error_body(wire: WireName, error: HttpError) -> dict[str, Any]:
    if wire == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(error.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": error.message}}
    kind = "server_error" if error.status >= 500 else "invalid_request_error"
    return {"error": {"message": error.message, "type": kind, "param": None, "code": error.code}}


def _openai_usage(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.completion,
        "total_tokens": usage.prompt + usage.completion,
        "prompt_tokens_details": {"cached_tokens": usage.cached},
    }


def _openai_tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json}}
        for c in reply.tool_calls
    ]


def _openai_finish(reply: Reply) -> str:
    return "length" if reply.max_tokens_reached else "tool_calls" if reply.tool_calls else "stop"


def openai_json(reply: Reply, usage: Usage | None, model: str, rid: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = _openai_tool_calls(reply)
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": _openai_finish(reply)}
    answer = {"id": rid, "object": "chat.completion", "created": int(time.time()), "model": model}
    answer["choices"] = [choice]
    if usage is not None:
        answer["usage"] = _openai_usage(usage)
    return answer


def openai_events(reply: Reply, usage: Usage | None, model: str, rid: str) -> list[Event]:
    head = {"id": rid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    if reply.minimal_chunks:
        head = {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        choice: dict[str, Any] = {"delta": delta} if reply.minimal_chunks else {"index": 0, "delta": delta}
        if finish is not None or not reply.minimal_chunks:
            choice["finish_reason"] = finish
        return None, {**head, "choices": [choice]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in _pieces(reply.text)]
    for index, call in enumerate(_openai_tool_calls(reply)):
        opening = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
        events.append(chunk({"tool_calls": [{"index": index, **opening}]}))
        for piece in _pieces(call["function"]["arguments"]):
            events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    if reply.finish_reason:
        events.append(chunk({}, _openai_finish(reply)))
    if usage is not None:  # the SDK asks for it with stream_options.include_usage
        events.append((None, {**head, "choices": [], "usage": _openai_usage(usage)}))
    return [*events, (None, "[DONE]")] if reply.done else events


def _anthropic_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.prompt - usage.cached - usage.cache_write,
        "output_tokens": usage.completion,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cached,
    }


def _anthropic_stop(reply: Reply) -> str:
    return "max_tokens" if reply.max_tokens_reached else "tool_use" if reply.tool_calls else "end_turn"


def _anthropic_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks = [
        {"type": "thinking", "thinking": text, "signature": signature} for text, signature in reply.thinking
    ]
    blocks += [{"type": "text", "text": reply.text}] if reply.text else []
    tools = [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in reply.tool_calls]
    return [*blocks, *tools]


def anthropic_json(reply: Reply, usage: Usage | None, model: str, rid: str) -> dict[str, Any]:
    answer = {"id": rid, "type": "message", "role": "assistant", "model": model}
    answer |= {"content": _anthropic_blocks(reply), "stop_reason": _anthropic_stop(reply)}
    answer["stop_sequence"] = None
    if usage is not None:
        answer["usage"] = _anthropic_usage(usage)
    return answer


def _anthropic_block_events(index: int, block: dict[str, Any]) -> list[Event]:
    if block["type"] == "thinking":
        opening = {**block, "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in _pieces(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif block["type"] == "text":
        opening = {**block, "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"])]
    else:
        opening = {**block, "input": {}}
        arguments = json.dumps(block["input"], separators=(",", ":"))
        deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in _pieces(arguments)]
    return [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}),
        *[
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ],
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def anthropic_events(reply: Reply, usage: Usage | None, model: str, rid: str) -> list[Event]:
    start = anthropic_json(Reply(), usage and replace(usage, completion=0), model, rid)
    start["stop_reason"] = None
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(_anthropic_blocks(reply)):
        events += _anthropic_block_events(index, block)
    delta: dict[str, Any] = {"type": "message_delta"}
    delta["delta"] = {"stop_reason": _anthropic_stop(reply), "stop_sequence": None}
    if usage is not None:
        delta["usage"] = {"output_tokens": usage.completion}
    return [*events, ("message_delta", delta), ("message_stop", {"type": "message_stop"})]


RENDERERS = {"openai": (openai_json, openai_events), "anthropic": (anthropic_json, anthropic_events)}


def _sse(event: Event) -> bytes:
    name, payload = event
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return ((f"event: {name}\n" if name else "") + f"data: {data}\n\n").encode()


def _carries_content(event: bytes) -> bool:
    """Whether an encoded event carries reply content (text or a tool call), in either format."""
    if b"event: content_block_delta" in event:
        return True
    payload = event.rpartition(b"data: ")[2].strip()
    try:
        choices = json.loads(payload).get("choices") or []
    except (ValueError, AttributeError):
        return False
    delta = choices[0].get("delta", {}) if choices else {}
    return bool(delta.get("content") or delta.get("tool_calls"))


# --- recording ----------------------------------------------------------------------------------------


class Headers(Mapping[str, str]):
    """Immutable request headers with case-insensitive lookup; repeated headers are joined by ", "."""

    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        data: dict[str, str] = {}
        for key, value in items:
            key = key.lower()
            data[key] = f"{data[key]}, {value}" if key in data else value
        self._data = data

    def __getitem__(self, key: str) -> str:
        return self._data[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Headers({self._data!r})"


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received. ``body`` is ``{}`` when ``raw`` is not a JSON object; ``raw`` is empty
    when the body was refused unread (too large). ``time`` is ``time.monotonic()`` at receipt."""

    method: str
    path: str
    headers: Headers
    body: dict[str, Any]
    raw: bytes
    time: float


def _string_leaves(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _string_leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _string_leaves(item)


# --- HTTP ---------------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    """Tracks open connections so closing the fake also ends idle keep-alive connections."""

    daemon_threads = True
    # socketserver's default backlog of 5 drops connection attempts of a burst of concurrent clients
    # (they come back only after TCP's 1 s retransmit): room for hundreds of steps calling at once.
    request_queue_size = 1024
    fake: FakeProvider

    def server_activate(self) -> None:
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self.accepted = 0
        super().server_activate()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
            self.accepted += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the peer
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # failures inside handlers are recorded by the handler itself; keep test output clean


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Write each piece at once (TCP_NODELAY), as providers' servers do: with Nagle's algorithm a small
    # write after the headers waits for the client's delayed ACK, about 40 ms on loopback.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self._guarded(self._post)

    def do_GET(self) -> None:
        self._guarded(self._not_post)

    do_PUT = do_PATCH = do_DELETE = do_GET

    def _guarded(self, handle: Any) -> None:
        self._started = False
        try:
            handle()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True  # the client went away (e.g. its timeout fired)
        except Exception as exc:
            self.server.fake._note_error(exc)
            self.close_connection = True
            if not self._started:
                self._send_json(500, {"error": {"message": f"fake provider failed: {exc!r}"}})

    def _not_post(self) -> None:
        path = urlsplit(self.path).path
        self.server.fake._record(self.command, path, self.headers.items(), b"")
        self._send_json(405 if path in PATHS else 404, {"error": {"message": f"no route for {path}"}})

    def _post(self) -> None:
        fake, path = self.server.fake, urlsplit(self.path).path
        raw = self._read_body(fake.max_body_bytes)
        if raw is None:
            return
        body = fake._record("POST", path, self.headers.items(), raw).body
        wire = PATHS.get(path)
        if wire is None:
            return self._send_json(404, {"error": {"message": f"unknown path {path}", "type": "not_found"}})
        if not fake._authorized(self.headers):
            return self._send_json(401, error_body(wire, UNAUTHORIZED))
        if not body:
            return self._send_json(400, error_body(wire, HttpError(400, "The body is not a JSON object.")))
        reply = fake._next_reply()
        if path == EMBEDDINGS_PATH:
            return self._embeddings(body, reply)
        if isinstance(reply, Reply) and reply.echo:
            reply = replace(reply, text="\n".join([reply.text, *_message_texts(body)]))
        latency = reply.latency if isinstance(reply, Reply) else 0.0
        if latency and fake._closing.wait(latency):
            self.close_connection = True  # shutting down: drop the connection instead of answering
            return None
        self._answer(wire, body, reply)

    def _embeddings(self, body: dict[str, Any], reply: Reply | RawReply) -> None:
        """OpenAI's embeddings: a scripted error as scripted, else one vector per input (drawn from
        the input's SHA-256, ``dimensions`` long), the prompt tokens counted as the fake counts text; a
        ``gate`` holds the answer until it is set."""
        if isinstance(reply, RawReply) or reply.error is not None:
            return self._answer("openai", body, reply)
        if reply.gate is not None:
            reply.gate.wait(timeout=30)
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
        size = int(body.get("dimensions") or EMBEDDING_DIMENSIONS)
        data = [
            {"object": "embedding", "index": index, "embedding": fake_vector(item, size)}
            for index, item in enumerate(inputs)
        ]
        tokens = sum(count_text_tokens(i) if isinstance(i, str) else len(i) for i in inputs)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model", ""), "usage": usage})

    def _read_body(self, limit: int) -> bytes | None:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self.close_connection = True
            return self._send_json(411, {"error": {"message": "Content-Length is required"}})
        if int(length) > limit:
            self.server.fake._record("POST", urlsplit(self.path).path, self.headers.items(), b"")
            self.close_connection = True  # the unread body makes the connection unusable
            return self._send_json(413, {"error": {"message": f"body over {limit} bytes"}})
        return self.rfile.read(int(length))

    def _answer(self, wire: WireName, body: dict[str, Any], reply: Reply | RawReply) -> None:
        if isinstance(reply, RawReply):
            return self._send(reply.status, reply.body, reply.content_type, reply.headers)
        if reply.error is not None:
            error = reply.error
            payload = error.body if error.body is not None else json.dumps(error_body(wire, error)).encode()
            return self._send(error.status, payload, "application/json", error.headers)
        cache = self.server.fake._prefix_cache if wire == "anthropic" else None
        usage = _usage(reply, body, cache) if reply.include_usage else None
        model, rid = str(body.get("model", "")), self.server.fake._next_id(wire)
        render_json, render_events = RENDERERS[wire]
        if not body.get("stream"):
            if reply.gate is not None:
                reply.gate.wait(timeout=30)
            payload = b'{"id": "' + rid.encode() + b'", "choices": [{' if reply.malformed else None
            return self._send(200, payload or json.dumps(render_json(reply, usage, model, rid)).encode())
        include = wire == "anthropic" or bool((body.get("stream_options") or {}).get("include_usage"))
        events = [_sse(e) for e in render_events(reply, usage if include else None, model, rid)]
        if reply.malformed:  # Anthropic's SDK skips unnamed events, so name the broken one
            name = b"event: content_block_delta\n" if wire == "anthropic" else b""
            events.insert(1, name + b'data: {"id": "' + rid.encode() + b'", "choices": [{\n\n')
        self._stream(
            events,
            truncate=reply.truncate_stream,
            interval=reply.chunk_interval,
            gate=reply.gate,
            gate_after=reply.gate_after,
            hold=reply.hold_after_done,
        )

    def _stream(
        self,
        events: list[bytes],
        *,
        truncate: bool,
        interval: float = 0.0,
        gate: threading.Event | None = None,
        gate_after: int = 1,
        hold: float = 0.0,
    ) -> None:
        self._started = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        content_sent = 0
        for position, data in enumerate(events[: max(1, len(events) // 2)] if truncate else events):
            if position and interval:
                self.server.fake._closing.wait(interval)
            if gate is not None and content_sent >= gate_after:
                gate.wait(timeout=30)
                gate = None
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            content_sent += _carries_content(data)
        if truncate:
            self.close_connection = True  # no terminating chunk: the body ends mid-stream
            return
        if hold:
            self.server.fake._closing.wait(hold)
        with contextlib.suppress(OSError):  # a client that gave up on a held body has closed its end
            self.wfile.write(b"0\r\n\r\n")

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode())

    def _send(
        self, status: int, data: bytes, content_type: str = "application/json", headers: Iterable = ()
    ) -> None:
        self._started = True
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)


# --- the fake -----------------------------------------------------------------------------------------


@dataclass(eq=False)
class FakeProvider:
    """The fake server. Use as a context manager (or ``start()``/``close()``); all methods are thread-safe.

    ``api_key``: when set, a request must carry ``Authorization: Bearer <key>`` or ``x-api-key: <key>``,
    else it gets 401 in the provider's error shape. ``default_reply`` answers when nothing is scripted.
    ``prompt_cache``: Anthropic requests are answered with prefix-cache usage (off by default), and
    ``cache_min_tokens`` is the shortest prefix it writes.
    """

    api_key: str | None = None
    default_reply: Reply | RawReply | str = "ok"
    max_body_bytes: int = 16 * 1024 * 1024
    prompt_cache: bool = False
    cache_min_tokens: int = 0
    errors: list[BaseException] = field(default_factory=list, init=False)
    _requests: list[RecordedRequest] = field(default_factory=list, init=False)
    _queue: deque[Reply | RawReply] = field(default_factory=deque, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _closing: threading.Event = field(default_factory=threading.Event, init=False)
    _server: _Server | None = field(default=None, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)
    _ids: int = field(default=0, init=False)
    _prefix_cache: PrefixCache | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.prompt_cache:
            self._prefix_cache = PrefixCache(self.cache_min_tokens)

    def start(self) -> FakeProvider:
        if self._server is None:
            self._closing.clear()
            get_encoding(ENCODING)  # build the tokenizer now (once per process), not inside a timed request
            self._server = _Server(("127.0.0.1", 0), _Handler)
            self._server.fake = self
            self._thread = threading.Thread(
                target=self._server.serve_forever, args=(0.05,), name="fake-provider", daemon=True
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake replies that are still waiting out their latency, join the server thread."""
        server, self._server = self._server, None
        if server is None:
            return
        self._closing.set()
        server.shutdown()
        server.server_close()
        server.drop_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def address(self) -> tuple[str, int]:
        if self._server is None:
            raise FakeProviderError("the fake provider is not started")
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def base_url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    @property
    def connections_accepted(self) -> int:
        """How many connections clients have opened to the fake so far."""
        if self._server is None:
            raise FakeProviderError("the fake provider is not started")
        return self._server.accepted

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    def script(self, *replies: ScriptItem) -> None:
        """Queue replies, answered in order by either path. A ``str`` is a text reply; a mapping is sent
        verbatim as a JSON body (a provider-specific answer)."""
        with self._lock:
            self._queue.extend(_as_reply(reply) for reply in replies)

    def pending(self) -> int:
        """How many scripted replies have not been consumed yet."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def bodies(self) -> list[dict[str, Any]]:
        return [request.body for request in self.requests]

    def wire_text(self) -> str:
        """Every request body as received, plus every string inside the decoded bodies, so a value is
        found whichever JSON escaping (``\\uXXXX``, ``\\n``, ``\\"``) the client used."""
        parts: list[str] = []
        for request in self.requests:
            parts.append(request.raw.decode("utf-8", errors="replace"))
            parts.extend(_string_leaves(request.body))
        return "\n".join(parts)

    def reset(self) -> None:
        """Forget recorded requests, scripted replies, handler errors and cached prefixes; keep serving."""
        with self._lock:
            self._requests.clear()
            self._queue.clear()
            self.errors.clear()
        if self._prefix_cache is not None:
            self._prefix_cache.clear()

    def _record(
        self, method: str, path: str, headers: Iterable[tuple[str, str]], raw: bytes
    ) -> RecordedRequest:
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        request = RecordedRequest(
            method, path, Headers(headers), body if isinstance(body, dict) else {}, raw, time.monotonic()
        )
        with self._lock:
            self._requests.append(request)
        return request

    def _next_reply(self) -> Reply | RawReply:
        with self._lock:
            return self._queue.popleft() if self._queue else _as_reply(self.default_reply)

    def _next_id(self, wire: WireName) -> str:
        with self._lock:
            self._ids += 1
            return f"chatcmpl-fake{self._ids}" if wire == "openai" else f"msg_fake{self._ids}"

    def _authorized(self, headers: Any) -> bool:
        if self.api_key is None:
            return True
        return (
            headers.get("Authorization") == f"Bearer {self.api_key}"
            or headers.get("x-api-key") == self.api_key
        )

    def _note_error(self, exc: BaseException) -> None:
        with self._lock:
            self.errors.append(exc)
