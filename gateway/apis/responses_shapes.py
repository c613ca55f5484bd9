"""OpenAI's Responses API wire shapes for ``/api/openai/v1/responses``: a response object, and the
server-sent events of a streamed one. Built from the same :class:`~agents.services.Completion` a chat
completion is (its usage, context use, governance and receipt: :mod:`gateway.apis.openai_shapes`).

What the official SDKs read is kept exactly (openai-python's ``Response`` and its stream events, whose
rules the SDK's stream accumulator enforces: ``response.created`` first, each output item added before
its deltas and done before ``response.completed``, which carries the same id and the usage). What this
service adds rides in extension fields the SDKs keep and ignore: ``context_usage``, ``governance`` and
``governance_receipt``. A provider failure after the first event ends the stream with
``response.failed`` and an ``error`` event carrying ``error`` in OpenAI's shape (the SDKs raise it).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from gateway.apis.openai_shapes import context_usage_body, governance_body, stream_error, usage_body
from gateway.apis.sse import sse_event
from gateway.services import Completion
from providers.failures import ProviderError
from providers.streams import StreamDelta, TextDelta, ToolCallDelta
from providers.values import ProviderReply

# Our finish reasons that leave a response incomplete, with OpenAI's reason.
_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


@dataclass(frozen=True)
class ResponseFrame:
    """What a response echoes of its request, and its id."""

    id: str
    created_at: int
    model: str
    request: dict[str, Any]

    def body(self, *, status: str, output: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        data = self.request
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "instructions": data.get("instructions"),
            "max_output_tokens": data.get("max_output_tokens"),
            "model": self.model,
            "output": output,
            "parallel_tool_calls": data.get("parallel_tool_calls") is not False,
            "previous_response_id": data.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None},
            "store": data.get("store") is not False,
            "temperature": data.get("temperature"),
            "text": data.get("text") or {"format": {"type": "text"}},
            "tool_choice": data.get("tool_choice") or "auto",
            "tools": data.get("tools") or [],
            "top_p": data.get("top_p"),
            "truncation": data.get("truncation") or "disabled",
            "usage": None,
            "user": None,
            "metadata": data.get("metadata") or {},
            **({"tools_not_offered": data["tools_not_offered"]} if data.get("tools_not_offered") else {}),
            **extra,
        }

    def answered(self, completion: Completion, output: list[dict[str, Any]]) -> dict[str, Any]:
        """The finished response: its status from the reply's finish, its usage and extensions."""
        reason = _INCOMPLETE.get(completion.reply.finish_reason)
        return self.body(
            status="incomplete" if reason else "completed",
            output=output,
            incomplete_details={"reason": reason} if reason else None,
            usage=responses_usage(completion),
            context_usage=context_usage_body(completion),
            governance=governance_body(completion),
            governance_receipt=completion.receipt,
        )


def responses_usage(completion: Completion) -> dict[str, Any]:
    """The chat usage (provider-reported, else estimated, with its provenance) in Responses' names."""
    chat = usage_body(completion)
    return {
        "input_tokens": chat["prompt_tokens"],
        "input_tokens_details": {"cached_tokens": chat["prompt_tokens_details"]["cached_tokens"]},
        "output_tokens": chat["completion_tokens"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": chat["total_tokens"],
        "provenance": chat["provenance"],
    }


def message_item(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
    return {"type": "message", "id": item_id, "status": status, "role": "assistant", "content": content}


def call_item(
    item_id: str, call_id: str, name: str, arguments: str, status: str = "completed"
) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def reply_output(reply: ProviderReply) -> list[dict[str, Any]]:
    """A whole reply's output items: its text as one message, then each tool call."""
    items = [message_item(new_id("msg"), reply.text)] if reply.text else []
    for call in reply.tool_calls:
        items.append(call_item(new_id("fc"), call.id, call.name, call.arguments))
    return items


def reply_message(reply: ProviderReply) -> dict[str, Any]:
    """The reply as the chat assistant message a continuation sends back."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [call.to_openai() for call in reply.tool_calls]
    if message["content"] is None and not reply.tool_calls:
        message["content"] = ""
    return message


@dataclass
class _Item:
    index: int
    item: dict[str, Any]
    text: list[str] = field(default_factory=list)
    tool_index: int | None = None
    open: bool = True


class ResponseEvents:
    """The events of one streamed response, numbered in order (``sequence_number``)."""

    def __init__(self, frame: ResponseFrame) -> None:
        self.frame = frame
        self.sequence = 0
        self.items: list[_Item] = []
        self.calls: dict[int, _Item] = {}
        self.message: _Item | None = None

    def event(self, kind: str, **fields: Any) -> bytes:
        data = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return sse_event(data, event=kind)

    def opening(self) -> list[bytes]:
        response = self.frame.body(status="in_progress", output=[])
        return [
            self.event("response.created", response=response),
            self.event("response.in_progress", response=response),
        ]

    def piece(self, delta: StreamDelta) -> list[bytes]:
        if isinstance(delta, TextDelta):
            return self._text_piece(delta)
        if isinstance(delta, ToolCallDelta):
            return self._call_piece(delta)
        return []

    def _text_piece(self, delta: TextDelta) -> list[bytes]:
        events, item = self._text_item()
        item.text.append(delta.text)
        ids = {"item_id": item.item["id"], "output_index": item.index, "content_index": 0}
        return [*events, self.event("response.output_text.delta", **ids, delta=delta.text, logprobs=[])]

    def _call_piece(self, delta: ToolCallDelta) -> list[bytes]:
        events: list[bytes] = []
        item = self.calls.get(delta.index)
        if item is None:
            call = call_item(new_id("fc"), delta.id or "", delta.name or "", "", status="in_progress")
            item = _Item(len(self.items), call, tool_index=delta.index)
            self.items.append(item)
            self.calls[delta.index] = item
            events.append(self.event("response.output_item.added", output_index=item.index, item=call))
        if delta.arguments:
            item.text.append(delta.arguments)
            ids = {"item_id": item.item["id"], "output_index": item.index}
            events.append(self.event("response.function_call_arguments.delta", **ids, delta=delta.arguments))
        return events

    def finish(self, completion: Completion) -> list[bytes]:
        """The events closing every open item, then ``response.completed`` (or ``response.incomplete``)
        with the whole response."""
        reply = completion.reply
        events = self._close_text()
        for item in self.items:
            if item.tool_index is not None and item.open:
                events += self._close_call(item, reply)
        output = [item.item for item in self.items]
        completed = "response.completed" if reply.finish_reason not in _INCOMPLETE else "response.incomplete"
        events.append(self.event(completed, response=self.frame.answered(completion, output)))
        return events

    def done(self) -> list[bytes]:
        return []  # the Responses API ends with its lifecycle event, not ``[DONE]``

    def failed(self, failure: ProviderError) -> list[bytes]:
        error = stream_error(failure)
        code, message = error["code"], error["message"]
        output = [item.item for item in self.items]
        response = self.frame.body(status="failed", output=output, error={"code": code, "message": message})
        return [
            self.event("response.failed", response=response),
            self.event("error", code=code, message=message, param=None, error=error),
        ]

    def _text_item(self) -> tuple[list[bytes], _Item]:
        """The reply's one message item, added with its text part at the first text. It stays open
        until the finish: the redaction may hand on held-back text after a tool call has begun."""
        if self.message is not None:
            return [], self.message
        item = self.message = _Item(len(self.items), message_item(new_id("msg"), "", status="in_progress"))
        item.item["content"] = []
        self.items.append(item)
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        added = self.event("response.output_item.added", output_index=item.index, item=dict(item.item))
        return [added, self._part_event("response.content_part.added", item, part)], item

    def _part_event(self, kind: str, item: _Item, part: dict[str, Any]) -> bytes:
        return self.event(kind, item_id=item.item["id"], output_index=item.index, content_index=0, part=part)

    def _close_text(self) -> list[bytes]:
        last = self.message
        if last is None or not last.open:
            return []
        last.open = False
        text = "".join(last.text)
        last.item = message_item(last.item["id"], text)
        part = last.item["content"][0]
        ids = {"item_id": last.item["id"], "output_index": last.index, "content_index": 0}
        return [
            self.event("response.output_text.done", **ids, text=text, logprobs=[]),
            self._part_event("response.content_part.done", last, part),
            self.event("response.output_item.done", output_index=last.index, item=last.item),
        ]

    def _close_call(self, item: _Item, reply: ProviderReply) -> list[bytes]:
        item.open = False
        assert item.tool_index is not None
        call = reply.tool_calls[item.tool_index] if item.tool_index < len(reply.tool_calls) else None
        arguments = call.arguments if call is not None else "".join(item.text)
        fields = item.item
        item.item = call_item(
            fields["id"],
            call.id if call else fields["call_id"],
            call.name if call else fields["name"],
            arguments,
        )
        return [
            self.event(
                "response.function_call_arguments.done",
                item_id=fields["id"],
                output_index=item.index,
                name=item.item["name"],
                arguments=arguments,
            ),
            self.event("response.output_item.done", output_index=item.index, item=item.item),
        ]
