"""Anthropic's wire shapes for ``/api/anthropic/v1``: a message, and the server-sent events of a
streamed one (errors: :mod:`gateway.apis.anthropic_errors`). Built from the same
:class:`~gateway.services.Completion` a chat completion is.

What the official SDKs read is kept exactly (anthropic-python's ``Message`` and its raw stream events,
whose order its accumulator enforces: ``message_start`` first, each content block started before its
deltas and stopped before the next starts, ``message_delta`` with the stop reason and the cumulative
usage, ``message_stop``). What this service adds rides in extension fields the SDKs keep and ignore:
``context_usage``, ``governance`` and ``governance_receipt`` on the message, and on the stream's
``message_delta`` event.

``stop_reason`` is ``end_turn``, ``tool_use``, ``max_tokens`` or ``refusal``; a reply ended by one of
the caller's ``stop_sequences`` reads ``end_turn`` with ``stop_sequence: null``, as the provider
boundary does not keep which sequence matched. A streamed reply's text is handed on as it arrives;
each ``tool_use`` block is sent whole once the reply is complete (its input as one
``input_json_delta``), so blocks never interleave whatever order the provider streamed them in.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from config.exception_handler import error_redacted
from context_assembly.messages import ThinkingBlock, ToolCall
from gateway.apis.openai_shapes import context_usage_body, governance_body
from gateway.apis.sse import sse_event
from gateway.services import Completion
from governance.vocabulary import Provenance
from providers.failures import ProviderError
from providers.streams import StreamDelta, TextDelta, ThinkingDelta
from providers.values import ProviderReply

_STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def stop_reason(reply: ProviderReply) -> str:
    """The reply's finish in Anthropic's terms (ours adds ``other``, read as ``end_turn``)."""
    return _STOP_REASONS.get(reply.finish_reason, "end_turn")


def usage_body(completion: Completion) -> dict[str, Any]:
    """Anthropic's ``usage``: ``input_tokens`` excludes the tokens read from or written to the
    provider's cache (each its own figure), as Anthropic reports them; without provider figures, our
    estimate of the prompt and 0 for the reply. ``provenance`` says which."""
    usage = completion.reply.usage
    if usage.provenance != Provenance.PROVIDER_REPORTED:
        return {
            "input_tokens": completion.breakdown.estimated,
            "output_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "provenance": Provenance.ESTIMATED.value,
        }
    cached, written = usage.cached_tokens or 0, usage.cache_write_tokens or 0
    return {
        "input_tokens": max((usage.prompt_tokens or 0) - cached - written, 0),
        "output_tokens": usage.completion_tokens or 0,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": written,
        "provenance": Provenance.PROVIDER_REPORTED.value,
    }


def extensions(completion: Completion) -> dict[str, Any]:
    """The fields this service adds to an answer: how full the context was, the decision and the
    redaction counts, and the answer's content-free receipt."""
    return {
        "context_usage": context_usage_body(completion),
        "governance": governance_body(completion),
        "governance_receipt": completion.receipt,
    }


def tool_use_block(call: ToolCall) -> dict[str, Any]:
    """A tool call as a ``tool_use`` block: its arguments parsed (a model's malformed JSON is handed
    on as ``{}``, as Anthropic's own input is always an object)."""
    try:
        parsed = json.loads(call.arguments) if call.arguments else {}
    except ValueError:
        parsed = {}
    return {
        "type": "tool_use",
        "id": call.id,
        "name": call.name,
        "input": parsed if isinstance(parsed, dict) else {},
    }


def thinking_block(block: ThinkingBlock) -> dict[str, Any]:
    """A thinking block as Anthropic answers it (a redacted one carries its opaque data only)."""
    if block.data:
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def content_blocks(reply: ProviderReply) -> list[dict[str, Any]]:
    blocks = [thinking_block(block) for block in reply.thinking]
    blocks += [{"type": "text", "text": reply.text}] if reply.text else []
    return blocks + [tool_use_block(call) for call in reply.tool_calls]


def message_body(completion: Completion, *, message_id: str, model: str) -> dict[str, Any]:
    """The whole answer as an Anthropic ``message``; ``model`` is the configuration identifier."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content_blocks(completion.reply),
        "stop_reason": stop_reason(completion.reply),
        "stop_sequence": None,
        "usage": usage_body(completion),
        **extensions(completion),
    }


def error_body(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message, **extra}}


class MessageEvents:
    """The events of one streamed message (``gateway/apis/serving.py`` reads the stream): see the
    module docstring. A provider failure after the first event ends the stream with an ``error`` event
    in Anthropic's shape (the SDKs raise it) and no ``message_stop``."""

    def __init__(self, *, message_id: str, model: str) -> None:
        self.message_id, self.model = message_id, model
        self.blocks = 0
        self.text_open = False
        self.thinking_open = False

    def event(self, kind: str, **fields: Any) -> bytes:
        return sse_event({"type": kind, **fields}, event=kind)

    def opening(self) -> list[bytes]:
        message: dict[str, Any] = {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return [self.event("message_start", message=message), self.event("ping")]

    def piece(self, delta: StreamDelta) -> list[bytes]:
        if isinstance(delta, ThinkingDelta):
            return self._thinking(delta)
        if not isinstance(delta, TextDelta) or not delta.text:
            return []  # tool calls are sent whole at the finish; usage rides on message_delta
        events = self._close_thinking()
        if not self.text_open:
            self.text_open = True
            block = {"type": "text", "text": ""}
            events.append(self.event("content_block_start", index=self.blocks, content_block=block))
        text = {"type": "text_delta", "text": delta.text}
        return [*events, self.event("content_block_delta", index=self.blocks, delta=text)]

    def finish(self, completion: Completion) -> list[bytes]:
        """Close the text block, send each tool call whole, then the stop reason and the usage."""
        events = self._close_thinking() + self._close_text()
        for call in completion.reply.tool_calls:
            index, self.blocks = self.blocks, self.blocks + 1
            block = tool_use_block(call)
            arguments = json.dumps(block["input"], separators=(",", ":"), ensure_ascii=False)
            events += [
                self.event("content_block_start", index=index, content_block={**block, "input": {}}),
                self.event(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": arguments},
                ),
                self.event("content_block_stop", index=index),
            ]
        delta = {"stop_reason": stop_reason(completion.reply), "stop_sequence": None}
        events.append(
            self.event("message_delta", delta=delta, usage=usage_body(completion), **extensions(completion))
        )
        return events

    def failed(self, failure: ProviderError) -> list[bytes]:
        error = dict(error_redacted({"message": failure.message}))
        body = error_body("api_error", str(error["message"]), failure_class=str(failure.failure_class))
        return [sse_event(body, event="error")]

    def done(self) -> list[bytes]:
        return [self.event("message_stop")]

    def _thinking(self, delta: ThinkingDelta) -> list[bytes]:
        """A thinking block's events: opened by its first piece, its text as ``thinking_delta``s, closed
        by its signature (a ``signature_delta``); a redacted block whole."""
        events = self._close_text()
        if delta.data is not None:
            index, self.blocks = self.blocks, self.blocks + 1
            block = {"type": "redacted_thinking", "data": delta.data}
            return [
                *events,
                self.event("content_block_start", index=index, content_block=block),
                self.event("content_block_stop", index=index),
            ]
        if not self.thinking_open:
            self.thinking_open = True
            block = {"type": "thinking", "thinking": "", "signature": ""}
            events.append(self.event("content_block_start", index=self.blocks, content_block=block))
        if delta.thinking:
            piece = {"type": "thinking_delta", "thinking": delta.thinking}
            events.append(self.event("content_block_delta", index=self.blocks, delta=piece))
        if delta.signature is not None:
            if delta.signature:
                piece = {"type": "signature_delta", "signature": delta.signature}
                events.append(self.event("content_block_delta", index=self.blocks, delta=piece))
            events += self._close_thinking()
        return events

    def _close_thinking(self) -> list[bytes]:
        if not self.thinking_open:
            return []
        self.thinking_open = False
        index, self.blocks = self.blocks, self.blocks + 1
        return [self.event("content_block_stop", index=index)]

    def _close_text(self) -> list[bytes]:
        if not self.text_open:
            return []
        self.text_open = False
        index, self.blocks = self.blocks, self.blocks + 1
        return [self.event("content_block_stop", index=index)]
