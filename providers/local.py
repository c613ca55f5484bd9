"""The ``local`` provider: deterministic, offline, no network at all. The embedded default and the demo.

Behaviour, so a run is reproducible and resumable:

* ``options["script"]`` (optional) is a list of reply specs, each ``{"text": "..."}`` and/or
  ``{"tool_calls": [{"name": "...", "arguments": {...}}]}`` (arguments an object or JSON text), and
  optionally ``"when": "..."``: text one of the call's user messages must contain (case-insensitive)
  for the spec to apply to it. The reply to a call is the ``i``-th spec that applies to it, where ``i`` is
  the number of assistant messages already in the call, so re-sending a step after a crash gives the
  same answer. (A script can so call a tool only when asked about it, and answer anything else, a
  completion or an evaluation case, with text.) A scripted call names a tool the call must
  offer: calls to tools the call does not offer are not made (a model calls only what it is offered),
  and a spec left with neither text nor calls answers as past the end of the script.
* Past the end of the script, or without one, it answers with a text describing what it received:
  message count, prompt tokens, tools offered and the start of the last user message.
* Tool call ids are ``call_<i>_<j>`` (``i`` as above, ``j`` the call's position among those made).
* Usage is ``provider_reported``: the prompt is counted with the project's one estimator
  (``o200k_base``), exactly as :meth:`Estimator.count_request` counts the messages and tool specs; the
  completion is the text's tokens plus each call's argument tokens. ``cached_tokens`` is 0.
* A prompt larger than ``options["context_window"]`` (default 128,000) fails as ``context_overflow``,
  as a real server would. ``options["latency"]`` seconds (default 0) pass before answering, for
  benchmarks (streamed: before the first piece). Any other option key is refused as a configuration
  error.
* Streamed, the text arrives a word at a time (each piece a word with the white space around it), then
  each tool call whole, the usage and the finish.
* What a request asks of the reply is held (``providers/structured.py``): ``tool_choice`` ``none``
  makes no call and a forced function calls only it; ``parallel_tool_calls`` false makes at most one;
  with a ``json_object`` or ``json_schema`` response format, an unscripted reply is the smallest JSON
  value the schema admits, and a scripted one that does not conform fails as ``malformed``.
* Embeddings: each input's vector is drawn from the SHA-256 of the input (its text, or its tokens),
  ``dimensions`` long (default 256) and of unit length, so the same input always has the same vector;
  the prompt tokens are the texts' tokens (``o200k_base``) plus the token arrays' lengths.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from context_assembly.errors import EstimatorUnavailable
from context_assembly.estimator import Estimator
from context_assembly.messages import Message, TextPart, ToolCall, thaw_json
from context_assembly.profiles import ModelProfile
from providers.base import ProviderAdapter
from providers.chat_body import chat_completions_body
from providers.failures import FailureClass, ProviderError
from providers.streams import StreamDelta, StreamFinish, TextDelta, ToolCallDelta, UsageDelta
from providers.structured import response_schema, structured_text, tool_calls_allowed
from providers.values import (
    EmbeddingCall,
    EmbeddingInput,
    EmbeddingReply,
    ProviderCall,
    ProviderConfig,
    ProviderReply,
    Usage,
)

DEFAULT_CONTEXT_WINDOW = 128_000
PREVIEW_CHARS = 200
OPTION_KEYS = frozenset({"script", "context_window", "latency"})
SPEC_KEYS = frozenset({"text", "tool_calls", "when"})
CALL_KEYS = frozenset({"name", "arguments"})
DEFAULT_EMBEDDING_DIMENSIONS = 256
STREAM_PIECE = re.compile(r"\s*\S+\s*|\s+")  # a streamed reply arrives a word at a time


class LocalAdapter(ProviderAdapter):
    """Answers from its script or from a description of the request. Never opens a socket."""

    def __init__(self, config: ProviderConfig, *, sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(config)
        self._sleep = sleep
        unknown = sorted(set(config.options) - OPTION_KEYS)
        if unknown:
            raise self.error(FailureClass.CONFIGURATION, f"unknown local option {unknown[0]!r}")
        window = _positive_int(config.options.get("context_window", DEFAULT_CONTEXT_WINDOW))
        if window is None:
            raise self.error(FailureClass.CONFIGURATION, "context_window must be a positive integer")
        self.context_window: int = window
        self.latency = config.options.get("latency", 0)
        if isinstance(self.latency, bool) or not isinstance(self.latency, int | float) or self.latency < 0:
            raise self.error(FailureClass.CONFIGURATION, "latency must be a non-negative number")
        script = config.options.get("script", ())
        if not isinstance(script, tuple):
            raise self.error(FailureClass.CONFIGURATION, "script must be a list of reply specs")
        self.script = tuple(self._check_spec(spec, index) for index, spec in enumerate(script))
        profile = ModelProfile("local", self.context_window, None, "o200k_base")
        try:
            self.estimator = Estimator(profile)
        except EstimatorUnavailable:
            raise self.error(FailureClass.CONFIGURATION, "the o200k_base tokenizer is unavailable") from None

    def _check_spec(self, spec: Any, index: int) -> Mapping[str, Any]:
        where = f"script[{index}]"
        if not isinstance(spec, Mapping) or not spec or set(spec) - SPEC_KEYS:
            raise self.error(FailureClass.CONFIGURATION, f"{where} must have only 'text' and/or 'tool_calls'")
        if not isinstance(spec.get("text", ""), str):
            raise self.error(FailureClass.CONFIGURATION, f"{where}.text must be a string")
        if not isinstance(spec.get("when", ""), str):
            raise self.error(FailureClass.CONFIGURATION, f"{where}.when must be a string")
        if set(spec) == {"when"}:
            raise self.error(FailureClass.CONFIGURATION, f"{where} must have 'text' and/or 'tool_calls'")
        calls = spec.get("tool_calls", ())
        if not isinstance(calls, tuple):
            raise self.error(FailureClass.CONFIGURATION, f"{where}.tool_calls must be a list")
        for position, call in enumerate(calls):
            valid = (
                isinstance(call, Mapping) and not set(call) - CALL_KEYS and isinstance(call.get("name"), str)
            )
            if not valid or not isinstance(call.get("arguments", {}), Mapping | str):
                raise self.error(
                    FailureClass.CONFIGURATION, f"{where}.tool_calls[{position}] needs a name and arguments"
                )
        return spec

    def _request_body(self, call: ProviderCall) -> dict[str, Any]:
        return chat_completions_body(call)

    def _send(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        # Nothing is serialised in process: the call is read, which the guard hands over redacted
        # together with the body whenever it redacts one.
        reply = self._reply(call)
        if self.latency:
            self._sleep(self.latency)
        return reply

    def _embed(self, call: EmbeddingCall) -> EmbeddingReply:
        dimensions = call.dimensions or DEFAULT_EMBEDDING_DIMENSIONS
        tokens = sum(
            len(item) if isinstance(item, tuple) else self.estimator.count_text(item) for item in call.inputs
        )
        if self.latency:
            self._sleep(self.latency)
        return EmbeddingReply(
            vectors=tuple(embedding_vector(item, dimensions) for item in call.inputs),
            usage=Usage.reported(tokens, None, 0),
            model_id=call.model_id,
        )

    def _open_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[Iterator[StreamDelta], Callable[[], None]]:
        reply = self._reply(call)  # an overflow fails here, before the stream opens, as a server's would
        return self._deltas(reply), _nothing

    def _deltas(self, reply: ProviderReply) -> Iterator[StreamDelta]:
        if self.latency:
            self._sleep(self.latency)
        for piece in STREAM_PIECE.findall(reply.text):
            yield TextDelta(piece)
        for index, tool_call in enumerate(reply.tool_calls):
            yield ToolCallDelta(index, tool_call.id, tool_call.name, tool_call.arguments)
        yield UsageDelta(reply.usage)
        yield StreamFinish(reply)

    def _reply(self, call: ProviderCall) -> ProviderReply:
        prompt_tokens = self.estimator.count_request(call.messages, call.tool_specs)
        if prompt_tokens > self.context_window:
            raise ProviderError(
                f"provider {self.config.identifier!r}: the prompt exceeds the context window",
                failure_class=FailureClass.CONTEXT_OVERFLOW,
                provider=self.config.identifier,
                status=400,
                extra={"prompt_tokens": prompt_tokens, "context_window": self.context_window},
            )
        turn = sum(1 for message in call.messages if message.role == "assistant")
        script = self._applying(call)
        text, calls = self._scripted(script[turn], turn, call) if turn < len(script) else ("", ())
        calls = tool_calls_allowed(call.options, calls)
        scripted = bool(text)
        if not text and not calls:
            text = describe(call, prompt_tokens)
        schema = response_schema(call.options)
        if schema is not None and not calls:
            structured = structured_text(schema, text, scripted=scripted)
            if structured is None:
                raise self.error(
                    FailureClass.MALFORMED, "the scripted reply does not hold the response format"
                )
            text = structured
        completion = self.estimator.count_text(text) + sum(
            self.estimator.count_text(c.arguments) for c in calls
        )
        return ProviderReply(
            text=text,
            tool_calls=calls,
            finish_reason="tool_calls" if calls else "stop",
            usage=Usage.reported(prompt_tokens, 0, completion),
            model_id=call.model_id,
            response_id=response_id(call),
        )

    def _applying(self, call: ProviderCall) -> tuple[Mapping[str, Any], ...]:
        """The specs that apply to ``call``: those without ``when``, and those whose ``when`` one of its
        user messages contains (the task is not always the last one: a tail note may follow it)."""
        if not any(spec.get("when") for spec in self.script):
            return self.script
        asked = "\n".join(_text_of(m) for m in call.messages if m.role == "user").casefold()
        return tuple(spec for spec in self.script if str(spec.get("when", "")).casefold() in asked)

    def _scripted(
        self, spec: Mapping[str, Any], turn: int, call: ProviderCall
    ) -> tuple[str, tuple[ToolCall, ...]]:
        offered = {tool.name for tool in call.tool_specs}
        calls: list[ToolCall] = []
        for raw in spec.get("tool_calls", ()):
            if raw["name"] not in offered:
                continue
            position = len(calls)
            arguments = raw.get("arguments", {})
            if not isinstance(arguments, str):
                arguments = json.dumps(thaw_json(arguments), separators=(",", ":"), ensure_ascii=False)
            calls.append(ToolCall(id=f"call_{turn}_{position}", name=raw["name"], arguments=arguments))
        return spec.get("text", ""), tuple(calls)


def _nothing() -> None:
    return None


def embedding_vector(item: EmbeddingInput, dimensions: int) -> tuple[float, ...]:
    """A unit vector of ``dimensions`` floats drawn from the SHA-256 of ``item``: the same input, the
    same vector (a text and the token array that encodes it differ)."""
    seed = item.encode() if isinstance(item, str) else json.dumps(list(item)).encode()
    raw: list[float] = []
    block = 0
    while len(raw) < dimensions:
        digest = hashlib.sha256(seed + block.to_bytes(4, "big")).digest()
        raw.extend(value / 2**31 - 1.0 for value in struct.unpack(">8I", digest))
        block += 1
    values = raw[:dimensions]
    norm = math.sqrt(sum(value * value for value in values)) or 1.0
    return tuple(value / norm for value in values)


def describe(call: ProviderCall, prompt_tokens: int) -> str:
    """The unscripted answer: stable for the same call, and useful to read in a demo."""
    user = next((m for m in reversed(call.messages) if m.role == "user"), None)
    tools = len(call.tool_specs)
    head = (
        f"Local model (offline): received {len(call.messages)} messages ({prompt_tokens} prompt tokens, "
        f"{tools} tool{'s' if tools != 1 else ''} offered)."
    )
    if user is None:
        return f"{head} There is no user message."
    preview = " ".join(_text_of(user).split())
    if len(preview) > PREVIEW_CHARS:
        preview = preview[:PREVIEW_CHARS] + "…"
    return f"{head} Last user message: «{preview}»"


def response_id(call: ProviderCall) -> str:
    """A deterministic id: the same call always gets the same id."""
    digest = hashlib.sha256(call.model_id.encode())
    for message in call.messages:
        digest.update(message.digest)
    for spec in call.tool_specs:
        digest.update(spec.digest)
    return f"local-{digest.hexdigest()[:24]}"


def _text_of(message: Message) -> str:
    if isinstance(message.content, str):
        return message.content
    return " ".join(part.text for part in message.content if isinstance(part, TextPart))


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
