"""Anthropic Messages through the official ``anthropic`` SDK.

``base_url`` is the host without the version prefix (``https://api.anthropic.com``): the SDK adds
``/v1/messages`` itself. Its own retries are off (``max_retries=0``); the dispatcher retries.

Translation from the wire-neutral messages (OpenAI shape) to Messages API requests:

* every ``system`` message, wherever it stands, goes to the top-level ``system`` parameter, joined in
  order with blank lines (Anthropic has no system role inside ``messages``);
* message content is always sent as a list of blocks; empty text blocks are left out (the API rejects
  them), and a message left with no block at all is dropped;
* assistant tool calls become ``tool_use`` blocks whose ``input`` is the parsed arguments. Arguments
  that are not a JSON object are refused *before sending* as ``client_error``: the API would reject
  them, and guessing a repair would put something on the wire the model never said;
* ``tool`` messages become ``tool_result`` blocks inside a user message;
* consecutive messages of the same role are merged into one (the API requires alternation), keeping
  block order, so tool results precede a following user text;
* ``temperature`` and ``top_p`` are sent only when set, through ``extra_body`` (SDK 1.0 dropped the
  keywords; models that no longer accept them answer 400, a ``client_error``); ``stop`` becomes
  ``stop_sequences``, ``user`` ``metadata.user_id``, and ``tool_choice`` Anthropic's shape (``required``
  is ``any``); ``seed`` and ``response_format`` have no counterpart and are not sent;
* ``name`` is not sent (the Messages API has no such field); image parts become ``image`` blocks
  (``base64`` for data URLs, ``url`` otherwise) and their ``detail`` is dropped.

Prompt caching: the system block, the skill block (split off as the first block of the first user
message, by ``call.layout``) and the newest transcript turn carry ``cache_control`` breakpoints where
the prefix up to them is long enough to be cached; see :mod:`agents.providers.anthropic_cache`.
Sampling parameters are sent only when ``call.capabilities.sampling`` allows them.

Usage: ``prompt_tokens`` = ``input_tokens`` + ``cache_read_input_tokens`` +
``cache_creation_input_tokens`` (Anthropic's ``input_tokens`` excludes cached tokens);
``cached_tokens`` = ``cache_read_input_tokens``; ``cache_write_tokens`` =
``cache_creation_input_tokens``. Streams are read as raw events (``stream=True``), so a
stream without usage yields :meth:`Usage.unavailable` instead of the SDK helper's ``AttributeError``.
They are handed on as the same typed deltas as OpenAI's (:class:`~agents.providers.streams.StreamDelta`):
``text_delta`` pieces as text, each ``tool_use`` block as a tool call numbered in the order the calls
open (its id and name first, then its ``partial_json`` pieces), usage at ``message_delta`` (merged with
``message_start``'s, as the figures are cumulative), the finish after ``message_stop``. Thinking blocks
are not handed on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anthropic

from agents.providers.anthropic_cache import BlockRef, WireMessages, mark_cache_breakpoints
from agents.providers.base import SdkAdapter
from agents.providers.failures import FailureClass, SdkErrors
from agents.providers.streams import StreamDelta, StreamFinish, TextDelta, ToolCallDelta, UsageDelta
from agents.providers.values import (
    NO_LAYOUT,
    CallOptions,
    FinishReason,
    PromptLayout,
    ProviderCall,
    ProviderReply,
    Usage,
)
from context_assembly.messages import ImagePart, Message, ToolCall, ToolSpec, thaw_json

EMPTY_SCHEMA = {"type": "object", "properties": {}}

_STOP_REASONS: dict[str | None, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


def finish_reason(stop_reason: str | None) -> FinishReason:
    return _STOP_REASONS.get(stop_reason, "other")


class _Untranslatable(Exception):
    """A message cannot be expressed in the Messages API; ``problem`` names where, never the content."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


# --- request translation ----------------------------------------------------------------------------------


def _text_of(message: Message) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(part.text for part in message.content if not isinstance(part, ImagePart))


def _image_block(part: ImagePart, where: str) -> dict[str, Any]:
    if not part.url.startswith("data:"):
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    header, separator, data = part.url.partition(",")
    if not separator or not header.endswith(";base64"):
        raise _Untranslatable(f"{where}: an image data URL must be base64-encoded")
    media_type = header[len("data:") : -len(";base64")]
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _content_blocks(message: Message, where: str) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"type": "text", "text": message.content}] if message.content else []
    blocks = []
    for part in message.content:
        if isinstance(part, ImagePart):
            blocks.append(_image_block(part, where))
        elif part.text:
            blocks.append({"type": "text", "text": part.text})
    return blocks


def _tool_use_block(call: ToolCall, where: str) -> dict[str, Any]:
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        raise _Untranslatable(f"{where}: tool call {call.id!r} has arguments that are not JSON") from None
    if not isinstance(arguments, dict):
        raise _Untranslatable(f"{where}: tool call {call.id!r} has arguments that are not a JSON object")
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}


def _wire_message(message: Message, index: int) -> tuple[str, list[dict[str, Any]]]:
    where = f"messages[{index}]"
    if message.role == "tool":
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        content = _content_blocks(message, where)  # text only: images are refused outside user messages
        if content:
            result["content"] = content
        return "user", [result]
    blocks = _content_blocks(message, where)
    blocks += [_tool_use_block(call, where) for call in message.tool_calls]
    return message.role, blocks


def _split_skill_block(blocks: list[dict[str, Any]], chars: int) -> list[dict[str, Any]] | None:
    """The first user message's blocks with its first ``chars`` characters as a block of their own, so
    a cache breakpoint can close right after the skill block; None when there is nothing to split.
    Together the two blocks carry exactly the text of the one they replace."""
    if chars <= 0 or not blocks or blocks[0]["type"] != "text":
        return None
    text = blocks[0]["text"]
    head, rest = text[:chars], text[chars:]
    if not head.strip() or not rest.strip():
        return None  # the API refuses whitespace-only text blocks
    return [{"type": "text", "text": head}, {"type": "text", "text": rest}, *blocks[1:]]


def _last_block(wire: list[dict[str, Any]]) -> BlockRef | None:
    return (len(wire) - 1, len(wire[-1]["content"]) - 1) if wire else None


def translate_messages(messages: tuple[Message, ...], layout: PromptLayout = NO_LAYOUT) -> WireMessages:
    """The system text and messages for the Messages API; see the module docstring for the rules."""
    system = "\n\n".join(_text_of(m) for m in messages if m.role == "system" and _text_of(m))
    wire: list[dict[str, Any]] = []
    skill_block: BlockRef | None = None
    transcript_end: BlockRef | None = None
    stable = layout.transcript_end(len(messages))
    first_user = True
    for index, message in enumerate(messages):
        if index == stable:
            transcript_end = _last_block(wire)
        if message.role == "system":
            continue
        role, blocks = _wire_message(message, index)
        split = None
        if first_user and role == "user":
            split, first_user = _split_skill_block(blocks, layout.skill_block_chars), False
        blocks = split or blocks
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            offset = len(wire[-1]["content"])
            wire[-1]["content"].extend(blocks)
        else:
            offset = 0
            wire.append({"role": role, "content": blocks})
        if split:
            skill_block = (len(wire) - 1, offset)
    if stable == len(messages):
        transcript_end = _last_block(wire)  # no tail: the transcript ends the messages
    return WireMessages(system, wire, skill_block, transcript_end)


def translate_tool(spec: ToolSpec) -> dict[str, Any]:
    schema = thaw_json(spec.parameters) or dict(EMPTY_SCHEMA)
    schema.setdefault("type", "object")
    tool: dict[str, Any] = {"name": spec.name, "input_schema": schema}
    if spec.description:
        tool["description"] = spec.description
    return tool


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


@dataclass
class _StreamState:
    """What the raw events of one stream have said so far; :meth:`add` returns what an event adds."""

    response_id: str = ""
    model_id: str = ""
    blocks: dict[int, _Block] = field(default_factory=dict)
    stop_reason: str | None = None
    start_usage: Any = None
    delta_usage: Any = None
    stopped: bool = False
    tool_calls: int = 0

    def add(self, event: Any) -> list[StreamDelta]:
        kind = event.type
        if kind == "message_start":
            self.response_id, self.model_id = event.message.id, event.message.model
            self.start_usage = event.message.usage
        elif kind == "content_block_start":
            return self._open_block(event.index, event.content_block)
        elif kind == "content_block_delta":
            return self._add_delta(event.index, event.delta)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self.delta_usage = event.usage
            return [UsageDelta(normalise_usage(self.start_usage, self.delta_usage))]
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _open_block(self, index: int, content_block: Any) -> list[StreamDelta]:
        block = _Block(
            content_block.type, getattr(content_block, "id", None), getattr(content_block, "name", None)
        )
        self.blocks[index] = block
        if block.kind != "tool_use":
            return []
        block.tool_index, self.tool_calls = self.tool_calls, self.tool_calls + 1
        return [ToolCallDelta(block.tool_index, block.id, block.name, "")]

    def _add_delta(self, index: int, delta: Any) -> list[StreamDelta]:
        block = self.blocks[index]
        if delta.type == "text_delta":
            block.pieces.append(delta.text)
            return [TextDelta(delta.text)] if delta.text and block.kind == "text" else []
        if delta.type == "input_json_delta":
            block.pieces.append(delta.partial_json)
            if block.kind == "tool_use" and delta.partial_json:
                return [ToolCallDelta(block.tool_index, None, None, delta.partial_json)]
        return []


def _sampling(call: ProviderCall) -> dict[str, Any]:
    if not call.capabilities.sampling:
        return {}
    fields = {"temperature": call.temperature, "top_p": call.options.top_p}
    return {key: value for key, value in fields.items() if value is not None}


def _options(options: CallOptions) -> dict[str, Any]:
    """The Messages API fields of ``options``: ``stop`` as ``stop_sequences``, ``user`` as
    ``metadata.user_id``, ``tool_choice`` in Anthropic's shape. ``seed`` and ``response_format`` have
    no counterpart and are not sent."""
    fields: dict[str, Any] = {}
    if options.stop:
        fields["stop_sequences"] = list(options.stop)
    if options.user is not None:
        fields["metadata"] = {"user_id": options.user}
    if options.tool_choice is not None:
        forced = options.forced_function
        if forced is not None:
            fields["tool_choice"] = {"type": "tool", "name": forced}
        else:
            fields["tool_choice"] = {"type": _TOOL_CHOICE_MODES[str(options.tool_choice)]}
    return fields


_TOOL_CHOICE_MODES = {"auto": "auto", "none": "none", "required": "any"}


class AnthropicAdapter(SdkAdapter[anthropic.Anthropic]):
    """Messages API over the ``anthropic`` SDK. Construction opens no connection."""

    sdk_errors = SdkErrors.of(anthropic)

    def _open(self, options: dict[str, Any]) -> anthropic.Anthropic:
        return anthropic.Anthropic(**options)

    def _request_body(self, call: ProviderCall) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for ``call`` (``extra_body`` is merged into the
        wire body by the SDK), with its cache breakpoints. Raises :class:`ProviderError`
        (``client_error``) when a message cannot be expressed in the Messages API."""
        try:
            wire = translate_messages(call.messages, call.layout)
        except _Untranslatable as exc:
            raise self.error(FailureClass.CLIENT_ERROR, exc.problem) from None
        body: dict[str, Any] = {"model": call.model_id, "max_tokens": call.max_tokens}
        body["messages"] = wire.messages
        if wire.system:
            body["system"] = wire.system
        if call.tool_specs:
            body["tools"] = [translate_tool(spec) for spec in call.tool_specs]
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
        reply = self._client.messages.create(**body)
        text: list[str] = []
        calls: list[ToolCall] = []
        for block in reply.content:
            if block.type == "text":
                text.append(block.text)
            elif block.type == "tool_use":
                calls.append(self.tool_call(block.id, block.name, _arguments(block.input), len(calls)))
        return ProviderReply(
            text="".join(text),
            tool_calls=tuple(calls),
            finish_reason=finish_reason(reply.stop_reason),
            usage=normalise_usage(reply.usage),
            model_id=reply.model or call.model_id,
            response_id=reply.id or "",
        )

    def _open_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[Iterator[StreamDelta], Callable[[], None]]:
        # create() sends the request and raises for an error status before returning the stream.
        stream = self._client.messages.create(**body)
        self.require_event_stream(stream.response.headers.get("content-type", ""), stream.close)
        return self._deltas(call, stream), stream.close

    def _deltas(self, call: ProviderCall, stream: Any) -> Iterator[StreamDelta]:
        state = _StreamState()
        for event in stream:
            yield from state.add(event)
        if not state.stopped:
            # The body ended without message_stop: as incomplete as a dropped connection.
            raise self.error(FailureClass.CONNECTION, "the stream ended before message_stop")
        text: list[str] = []
        calls: list[ToolCall] = []
        for _, block in sorted(state.blocks.items()):
            if block.kind == "text":
                text.append("".join(block.pieces))
            elif block.kind == "tool_use":
                arguments = _arguments(json.loads("".join(block.pieces) or "{}"))
                calls.append(self.tool_call(block.id, block.name, arguments, len(calls)))
        yield StreamFinish(
            ProviderReply(
                text="".join(text),
                tool_calls=tuple(calls),
                finish_reason=finish_reason(state.stop_reason),
                usage=normalise_usage(state.start_usage, state.delta_usage),
                model_id=state.model_id or call.model_id,
                response_id=state.response_id,
            )
        )


def _arguments(tool_input: Any) -> str:
    """Tool input as compact JSON text, the same for JSON and streamed replies."""
    return json.dumps(tool_input, separators=(",", ":"), ensure_ascii=False)
