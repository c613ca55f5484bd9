"""OpenAI's wire shapes for ``/api/openai/v1``: a chat completion and its stream of chunks (errors:
:mod:`gateway.apis.openai_errors`).

What the official SDKs read is kept exactly (openai-python's ``ChatCompletion``,
``ChatCompletionChunk`` and ``{"error": {"message", "type", "param", "code"}}``); what this service
adds rides in extension fields the SDKs keep and ignore: ``context_usage`` (the prompt size of this
call with its provenance, beside the window of the model that served it) and ``governance`` (the
decision and the redaction counts; identifiers and classes, never content).
"""

from __future__ import annotations

from typing import Any

from config.exception_handler import error_redacted
from gateway.apis.sse import sse_event
from gateway.services import Completion
from governance.services import decision_as_dict
from governance.vocabulary import Provenance
from providers.failures import ProviderError
from providers.streams import StreamDelta, TextDelta, ToolCallDelta
from providers.values import ProviderReply

COMPLETION_OBJECT = "chat.completion"
CHUNK_OBJECT = "chat.completion.chunk"

# --- a completion ---------------------------------------------------------------------------------------


def finish_reason(reply: ProviderReply) -> str:
    """The reply's finish reason in OpenAI's vocabulary (ours adds ``other``, read as ``stop``)."""
    return "stop" if reply.finish_reason == "other" else reply.finish_reason


def usage_body(completion: Completion) -> dict[str, Any]:
    """OpenAI's ``usage``: the provider's figures, else our estimate of the prompt (the reply's
    figure is then 0, as an unknown), with ``provenance`` saying which."""
    usage = completion.reply.usage
    if usage.provenance == Provenance.PROVIDER_REPORTED:
        prompt, completion_tokens = usage.prompt_tokens or 0, usage.completion_tokens or 0
        cached, provenance = usage.cached_tokens or 0, Provenance.PROVIDER_REPORTED
    else:
        prompt, completion_tokens, cached = completion.breakdown.estimated, 0, 0
        provenance = Provenance.ESTIMATED
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached},
        "provenance": provenance.value,
    }


def context_usage_body(completion: Completion) -> dict[str, Any]:
    """How full this call's context was: the prompt as reported (cached tokens included), else our
    estimate of what was sent, beside the serving model's window; and the fit's breakdown."""
    usage = completion.reply.usage
    if usage.provenance == Provenance.PROVIDER_REPORTED and usage.prompt_tokens is not None:
        used = {"value": usage.prompt_tokens, "provenance": Provenance.PROVIDER_REPORTED.value}
    else:
        used = {"value": completion.breakdown.estimated, "provenance": Provenance.ESTIMATED.value}
    return {
        "used_tokens": used,
        "context_window": completion.served.context_window,
        "breakdown": completion.breakdown.as_dict(),
    }


def governance_body(completion: Completion) -> dict[str, Any]:
    decision = decision_as_dict(completion.decision) if completion.decision is not None else None
    return {
        "request_id": completion.request_id,
        "served_model": completion.served.model_id,
        "decision": decision,
        "redactions": {"sent": completion.sent_redactions, "reply": completion.reply_redactions},
    }


def completion_body(completion: Completion, *, model: str, created: int) -> dict[str, Any]:
    reply = completion.reply
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = [call.to_openai() for call in reply.tool_calls]
    return {
        "id": completion_id(completion),
        "object": COMPLETION_OBJECT,
        "created": created,
        "model": model,
        "system_fingerprint": None,
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason(reply), "logprobs": None}
        ],
        "usage": usage_body(completion),
        "context_usage": context_usage_body(completion),
        "governance": governance_body(completion),
        "governance_receipt": completion.receipt,
    }


def completion_id(completion: Completion) -> str:
    return f"chatcmpl-{completion.request_id}"


# --- a stream -------------------------------------------------------------------------------------------


class ChatChunks:
    """The ``chat.completion.chunk`` events of one stream (``gateway/apis/serving.py`` reads the stream):
    the role, text pieces, each tool call (its id and name with its first arguments), the finish
    reason with the answer's ``governance_receipt``, then with ``include_usage`` one chunk with no
    choices carrying ``usage``, ``context_usage`` and ``governance``, then ``[DONE]``. A provider
    failure after the first delta ends the stream with an ``error`` event in OpenAI's shape (the SDKs
    raise it) and no ``[DONE]``."""

    __slots__ = ("base", "include_usage")

    def __init__(self, request_id: str, *, model: str, created: int, include_usage: bool) -> None:
        base: dict[str, Any] = {"id": f"chatcmpl-{request_id}", "object": CHUNK_OBJECT}
        base |= {"created": created, "model": model, "system_fingerprint": None}
        if include_usage:
            base["usage"] = None
        self.base = base
        self.include_usage = include_usage

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return sse_event({**self.base, "choices": [choice]})

    def opening(self) -> list[bytes]:
        return [self.chunk({"role": "assistant", "content": ""})]

    def piece(self, delta: StreamDelta) -> list[bytes]:
        if isinstance(delta, TextDelta):
            return [self.chunk({"content": delta.text})]
        if isinstance(delta, ToolCallDelta):
            return [self.chunk({"tool_calls": [_tool_call_piece(delta)]})]
        return []

    def finish(self, completion: Completion) -> list[bytes]:
        choice = {"index": 0, "delta": {}, "finish_reason": finish_reason(completion.reply), "logprobs": None}
        events = [sse_event({**self.base, "choices": [choice], "governance_receipt": completion.receipt})]
        if self.include_usage:
            events.append(sse_event({**self.base, "choices": [], **_usage_fields(completion)}))
        return events

    def failed(self, failure: ProviderError) -> list[bytes]:
        return [sse_event({"error": stream_error(failure)})]

    def done(self) -> list[bytes]:
        return [sse_event("[DONE]")]


def _tool_call_piece(delta: ToolCallDelta) -> dict[str, Any]:
    if delta.id is None:
        return {"index": delta.index, "function": {"arguments": delta.arguments}}
    function = {"name": delta.name or "", "arguments": delta.arguments}
    return {"index": delta.index, "id": delta.id, "type": "function", "function": function}


def _usage_fields(completion: Completion) -> dict[str, Any]:
    return {
        "usage": usage_body(completion),
        "context_usage": context_usage_body(completion),
        "governance": governance_body(completion),
        "governance_receipt": completion.receipt,
    }


def stream_error(failure: ProviderError) -> dict[str, Any]:
    """The ``error`` of a stream that failed after its first event (both OpenAI APIs), redacted as
    every error answer is."""
    error = {
        "message": failure.message,
        "type": "api_error",
        "param": None,
        "code": failure.code,
        "failure_class": str(failure.failure_class),
    }
    return dict(error_redacted(error))
