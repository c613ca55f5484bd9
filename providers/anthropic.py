"""Anthropic Messages through the official ``anthropic`` SDK.

``base_url`` is the host without the version prefix (``https://api.anthropic.com``): the SDK adds
``/v1/messages`` itself. Its own retries are off (``max_retries=0``); the dispatcher retries.

The request is translated by :mod:`providers.anthropic_messages`; ``temperature`` and ``top_p``
are sent only when set, through ``extra_body`` (SDK 1.0 dropped the keywords; models that no longer
accept them answer 400, a ``client_error``); ``stop`` becomes ``stop_sequences``, ``user``
``metadata.user_id``; ``tool_choice``, ``parallel_tool_calls`` and ``response_format`` are held as
:mod:`providers.anthropic_structured` says (a response tool carries a structured reply). ``seed`` has
no counterpart: a call with one is refused before it gets here (``agents/runtime/call_options.py``).

Prompt caching: the system block, the skill block (split off as the first block of the first user
message, by ``call.layout``) and the newest transcript turn carry ``cache_control`` breakpoints where
the prefix up to them is long enough to be cached; see :mod:`providers.anthropic_cache`.
Sampling parameters are sent only when ``call.capabilities.sampling`` allows them.

Usage: ``prompt_tokens`` = ``input_tokens`` + ``cache_read_input_tokens`` +
``cache_creation_input_tokens`` (Anthropic's ``input_tokens`` excludes cached tokens);
``cached_tokens`` = ``cache_read_input_tokens``; ``cache_write_tokens`` =
``cache_creation_input_tokens``. Streams are read as raw events (``stream=True``), so a
stream without usage yields :meth:`Usage.unavailable` instead of the SDK helper's ``AttributeError``.
They are handed on as the same typed deltas as OpenAI's (:class:`~providers.streams.StreamDelta`):
``text_delta`` pieces as text, each ``tool_use`` block as a tool call numbered in the order the calls
open (its id and name first, then its ``partial_json`` pieces), usage at ``message_delta`` (merged with
``message_start``'s, as the figures are cumulative), the finish after ``message_stop``.

Extended thinking (``options.thinking_budget``, for a model whose catalogue entry declares it) is sent
as ``thinking: {"type": "enabled", "budget_tokens": N}``, without sampling parameters (the API refuses
them beside it); the reply's ``thinking`` and ``redacted_thinking`` blocks are the reply's
``thinking``, streamed as :class:`~providers.streams.ThinkingDelta` pieces (text, then the
signature); an assistant turn's blocks go back first in its content, unchanged.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anthropic

from context_assembly.messages import ThinkingBlock, ToolCall
from providers.anthropic_cache import mark_cache_breakpoints
from providers.anthropic_messages import Untranslatable, translate_messages, translate_tool
from providers.anthropic_structured import is_response, response_text, tool_fields
from providers.base import SdkAdapter, host_headers_omitted
from providers.failures import FailureClass, SdkErrors
from providers.streams import StreamDelta, StreamFinish, TextDelta, ThinkingDelta, ToolCallDelta, UsageDelta
from providers.values import (
    NO_OPTIONS,
    CallOptions,
    FinishReason,
    ProviderCall,
    ProviderReply,
    Usage,
)

# The SDK's headers about the host, not sent (providers/base.py, HOST_HEADERS).
_NO_HOST_HEADERS = host_headers_omitted(anthropic.omit)

_STOP_REASONS: dict[str | None, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


RESPONSE = "response"  # a block kind of our own: the response tool's input, the reply's text


def finish_reason(stop_reason: str | None) -> FinishReason:
    return _STOP_REASONS.get(stop_reason, "other")


# --- reply translation ------------------------------------------------------------------------------------


def normalise_usage(*usages: Any) -> Usage:
    """Merge usage objects in order (later non-None figures win: ``message_delta`` is cumulative)."""
    figures: dict[str, int | None] = dict.fromkeys(
        ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
    )
    for usage in usages:
        if usage is None:
            continue
        for name in figures:
            value = getattr(usage, name, None)
            if value is not None:
                figures[name] = value
    uncached, read, created = (
        figures["input_tokens"],
        figures["cache_read_input_tokens"],
        figures["cache_creation_input_tokens"],
    )
    prompt = None if uncached is None else uncached + (read or 0) + (created or 0)
    if prompt is None:
        return Usage.reported(None, None, figures["output_tokens"])
    return Usage.reported(prompt, read, figures["output_tokens"], created)


@dataclass
class _Block:
    kind: str
    id: str | None = None
    name: str | None = None
    pieces: list[str] = field(default_factory=list)
    tool_index: int = -1  # the position among the reply's tool calls (tool_use blocks only)
    thinking_index: int = -1  # the position among the reply's thinking blocks (thinking blocks only)
    signature: str = ""


@dataclass
class _StreamState:
    """What the raw events of one stream have said so far; :meth:`add` returns what an event adds.

    The SDK builds each event without validation, so a field an Anthropic-compatible server leaves out
    is simply absent. What only describes the reply (the message's ``id``, ``model`` and ``usage``, a
    ``message_delta``'s ``usage`` and ``stop_reason``) is read as optional; what the reply cannot be put
    together without (a block's ``index``, a delta's ``type`` and text) is still required, its absence
    classified ``malformed``."""

    response_id: str = ""
    model_id: str = ""
    blocks: dict[int, _Block] = field(default_factory=dict)
    stop_reason: str | None = None
    start_usage: Any = None
    delta_usage: Any = None
    stopped: bool = False
    tool_calls: int = 0
    thinking_blocks: int = 0
    options: CallOptions = NO_OPTIONS

    def add(self, event: Any) -> list[StreamDelta]:
        kind = event.type
        if kind == "message_start":
            message = event.message
            self.response_id = _string(getattr(message, "id", None))
            self.model_id = _string(getattr(message, "model", None))
            self.start_usage = getattr(message, "usage", None)
        elif kind == "content_block_start":
            return self._open_block(event.index, event.content_block)
        elif kind == "content_block_delta":
            return self._add_delta(event.index, event.delta)
        elif kind == "message_delta":
            delta = getattr(event, "delta", None)
            self.stop_reason = _string(getattr(delta, "stop_reason", None)) or self.stop_reason
            self.delta_usage = getattr(event, "usage", None)
            return [UsageDelta(normalise_usage(self.start_usage, self.delta_usage))]
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _open_block(self, index: int, content_block: Any) -> list[StreamDelta]:
        block = _Block(
            content_block.type, getattr(content_block, "id", None), getattr(content_block, "name", None)
        )
        self.blocks[index] = block
        if block.kind in ("thinking", "redacted_thinking"):
            block.thinking_index, self.thinking_blocks = self.thinking_blocks, self.thinking_blocks + 1
            if block.kind == "redacted_thinking":
                block.pieces.append(_string(getattr(content_block, "data", None)))
                return [ThinkingDelta(block.thinking_index, data=block.pieces[0])]
            return []
        if block.kind == "tool_use" and is_response(self.options, block.name):
            block.kind = RESPONSE
        if block.kind != "tool_use":
            return []
        block.tool_index, self.tool_calls = self.tool_calls, self.tool_calls + 1
        return [ToolCallDelta(block.tool_index, block.id, block.name, "")]

    def _add_delta(self, index: int, delta: Any) -> list[StreamDelta]:
        block = self.blocks[index]
        if delta.type == "thinking_delta" and block.kind == "thinking":
            block.pieces.append(delta.thinking)
            return [ThinkingDelta(block.thinking_index, thinking=delta.thinking)] if delta.thinking else []
        if delta.type == "signature_delta" and block.kind == "thinking":
            block.signature += delta.signature
            return [ThinkingDelta(block.thinking_index, signature=delta.signature)]
        if delta.type == "text_delta":
            block.pieces.append(delta.text)
            return [TextDelta(delta.text)] if delta.text and block.kind == "text" else []
        if delta.type == "input_json_delta":
            block.pieces.append(delta.partial_json)
            if block.kind == RESPONSE and delta.partial_json:
                return [TextDelta(delta.partial_json)]  # the structured reply is the reply's text
            if block.kind == "tool_use" and delta.partial_json:
                return [ToolCallDelta(block.tool_index, None, None, delta.partial_json)]
        return []


def _string(value: object) -> str:
    """``value`` if it is a string; a value of another type reads as absent (an empty string)."""
    return value if isinstance(value, str) else ""


def _sampling(call: ProviderCall) -> dict[str, Any]:
    if not call.capabilities.sampling or call.options.thinking_budget is not None:
        return {}  # the API refuses sampling parameters beside thinking
    fields = {"temperature": call.temperature, "top_p": call.options.top_p}
    return {key: value for key, value in fields.items() if value is not None}


def _options(options: CallOptions) -> dict[str, Any]:
    """The Messages API fields of ``options`` besides the tools: ``stop`` as ``stop_sequences``,
    ``user`` as ``metadata.user_id``. ``seed`` is refused before a call gets here."""
    fields: dict[str, Any] = {}
    if options.stop:
        fields["stop_sequences"] = list(options.stop)
    if options.user is not None:
        fields["metadata"] = {"user_id": options.user}
    if options.thinking_budget is not None:
        fields["thinking"] = {"type": "enabled", "budget_tokens": options.thinking_budget}
    return fields


class AnthropicAdapter(SdkAdapter[anthropic.Anthropic, anthropic.AsyncAnthropic, _StreamState]):
    """Messages API over the ``anthropic`` SDK. Construction opens no connection."""

    sdk_errors = SdkErrors.of(anthropic)

    def _open(self, options: dict[str, Any]) -> anthropic.Anthropic:
        return anthropic.Anthropic(**options, default_headers=_NO_HOST_HEADERS)

    def _open_async(self, options: dict[str, Any]) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            **options, default_headers=_NO_HOST_HEADERS, http_client=anthropic.DefaultAioHttpClient()
        )

    def _request_body(self, call: ProviderCall) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for ``call`` (``extra_body`` is merged into the
        wire body by the SDK), with its cache breakpoints. Raises :class:`ProviderError`
        (``client_error``) when a message cannot be expressed in the Messages API."""
        try:
            wire = translate_messages(call.messages, call.layout)
        except Untranslatable as exc:
            raise self.error(FailureClass.CLIENT_ERROR, exc.problem) from None
        body: dict[str, Any] = {"model": call.model_id, "max_tokens": call.max_tokens}
        body["messages"] = wire.messages
        if wire.system:
            body["system"] = wire.system
        body.update(tool_fields(call.options, [translate_tool(spec) for spec in call.tool_specs]))
        mark_cache_breakpoints(body, wire, call)
        sampling = _sampling(call)
        if sampling:
            # anthropic 1.0 removed the keywords (the API deprecates sampling parameters and newer models
            # reject them with a 400); they are still sent when asked for, as the SDK's migration guide says.
            body["extra_body"] = sampling
        body.update(_options(call.options))
        if call.stream:
            body["stream"] = True
        return body

    def _send_whole(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        return self._reply(call, self._client.messages.create(**body))

    async def _send_whole_async(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        return self._reply(call, await self.async_client().messages.create(**body))

    def _reply(self, call: ProviderCall, reply: Any) -> ProviderReply:
        text: list[str] = []
        calls: list[ToolCall] = []
        thinking: list[ThinkingBlock] = []
        for block in reply.content:
            if block.type == "thinking":
                thinking.append(ThinkingBlock(thinking=block.thinking, signature=block.signature or ""))
            elif block.type == "redacted_thinking":
                thinking.append(ThinkingBlock(data=block.data))
            elif block.type == "text":
                text.append(block.text)
            elif block.type == "tool_use" and is_response(call.options, block.name):
                text.append(self._structured(call, block.input))
            elif block.type == "tool_use":
                calls.append(self.tool_call(block.id, block.name, _arguments(block.input), len(calls)))
        return ProviderReply(
            text="".join(text),
            tool_calls=tuple(calls),
            finish_reason=_finish_reason(reply.stop_reason, calls),
            usage=normalise_usage(reply.usage),
            model_id=reply.model or call.model_id,
            response_id=reply.id or "",
            thinking=tuple(thinking),
        )

    def _structured(self, call: ProviderCall, tool_input: Any) -> str:
        """The reply text of the response tool's input; ``malformed`` when it breaks the schema."""
        text = response_text(call.options, tool_input)
        if text is None:
            raise self.error(
                FailureClass.MALFORMED, "the structured reply does not conform to response_format"
            )
        return text

    def _open_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[Iterator[StreamDelta], Callable[[], None]]:
        # create() sends the request and raises for an error status before returning the stream.
        stream = self._client.messages.create(**body)
        self.require_event_stream(stream.response.headers.get("content-type", ""), stream.close)
        return self._deltas(call, stream), stream.close

    async def _open_async_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[AsyncIterator[StreamDelta], Callable[[], Awaitable[None]]]:
        stream = await self.async_client().messages.create(**body)
        await self.require_async_event_stream(stream.response.headers.get("content-type", ""), stream.close)
        return self._async_deltas(call, stream), stream.close

    def _stream_state(self, call: ProviderCall) -> _StreamState:
        return _StreamState(options=call.options)

    def _finish(self, call: ProviderCall, state: _StreamState) -> StreamFinish:
        if not state.stopped:
            # The body ended without message_stop: as incomplete as a dropped connection.
            raise self.error(FailureClass.CONNECTION, "the stream ended before message_stop")
        text: list[str] = []
        calls: list[ToolCall] = []
        thinking: list[ThinkingBlock] = []
        for _, block in sorted(state.blocks.items()):
            if block.kind == "thinking":
                thinking.append(ThinkingBlock(thinking="".join(block.pieces), signature=block.signature))
            elif block.kind == "redacted_thinking":
                thinking.append(ThinkingBlock(data="".join(block.pieces)))
            elif block.kind == "text":
                text.append("".join(block.pieces))
            elif block.kind == RESPONSE:
                streamed = "".join(block.pieces)
                self._structured(call, json.loads(streamed or "{}"))  # checked; its text went out as is
                text.append(streamed)
            elif block.kind == "tool_use":
                arguments = _arguments(json.loads("".join(block.pieces) or "{}"))
                calls.append(self.tool_call(block.id, block.name, arguments, len(calls)))
        return StreamFinish(
            ProviderReply(
                text="".join(text),
                tool_calls=tuple(calls),
                finish_reason=_finish_reason(state.stop_reason, calls),
                usage=normalise_usage(state.start_usage, state.delta_usage),
                model_id=state.model_id or call.model_id,
                response_id=state.response_id,
                thinking=tuple(thinking),
            )
        )


def _finish_reason(stop_reason: str | None, calls: list[ToolCall]) -> FinishReason:
    """The finish of a reply: a ``tool_use`` stop whose only call was the response tool is a stop."""
    return "stop" if stop_reason == "tool_use" and not calls else finish_reason(stop_reason)


def _arguments(tool_input: Any) -> str:
    """Tool input as compact JSON text, the same for JSON and streamed replies."""
    return json.dumps(tool_input, separators=(",", ":"), ensure_ascii=False)
