"""OpenAI's wire shapes for ``/api/openai/v1``: a chat completion, its stream of chunks, and errors.

What the official SDKs read is kept exactly (openai-python's ``ChatCompletion``,
``ChatCompletionChunk`` and ``{"error": {"message", "type", "param", "code"}}``); what this service
adds rides in extension fields the SDKs keep and ignore: ``context_usage`` (the prompt size of this
call with its provenance, beside the window of the model that served it) and ``governance`` (the
decision and the redaction counts; identifiers and classes, never content).

Errors keep the status the rest of the API answers, except where an SDK expects another: a context
that cannot fit is ``400 context_length_exceeded`` (the SDKs' and LangChain's overflow handling
looks for that), a provider's rate limit is ``429`` with its ``Retry-After``, and so is a client's
exhausted daily budget (``budget_exhausted``, with ``error.budget`` and ``x-should-retry: false``:
it resets at the next UTC midnight, not within an SDK's retries). The SDKs raise
their usual exception for each status (403 ``PermissionDeniedError``, 400 ``BadRequestError``, ...).
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.db import connection
from rest_framework.response import Response

from agents.apis.sse import release_db_connection, sse_event
from agents.providers.failures import ProviderError
from agents.providers.streams import StreamDelta, StreamFinish, TextDelta, ToolCallDelta
from agents.providers.values import ProviderReply
from agents.services import Completion, CompletionStream
from governance.services import decision_as_dict
from governance.vocabulary import Provenance

COMPLETION_OBJECT = "chat.completion"
CHUNK_OBJECT = "chat.completion.chunk"

# Our error codes in OpenAI's terms: (error.type, error.code or None to keep ours).
_ERROR_TYPES: dict[str, tuple[str, str | None]] = {
    "invalid_input": ("invalid_request_error", "invalid_value"),
    "invalid_message": ("invalid_request_error", "invalid_value"),
    "transcript_invalid": ("invalid_request_error", "invalid_value"),
    "parse_error": ("invalid_request_error", "invalid_json"),
    "unsupported_parameter": ("invalid_request_error", None),
    "max_tokens_too_large": ("invalid_request_error", "invalid_value"),
    "not_authenticated": ("authentication_error", "invalid_api_key"),
    "authentication_failed": ("authentication_error", "invalid_api_key"),
    "permission_denied": ("permission_error", None),
    "not_found": ("invalid_request_error", "model_not_found"),
    "context_refused": ("permission_error", None),
    "context_overflow": ("invalid_request_error", "context_length_exceeded"),
    "throttled": ("rate_limit_error", "rate_limit_exceeded"),
    "budget_exhausted": ("rate_limit_error", None),
    "provider_error": ("api_error", None),
    "configuration_inactive": ("invalid_request_error", None),
    "model_inactive": ("invalid_request_error", None),
    "request_too_large": ("invalid_request_error", None),
}


def error_response(response: Response) -> Response:
    """``response`` (the API's one error shape, ``{"code", "message", "extra"}``) in OpenAI's shape,
    with the status and headers an OpenAI client expects."""
    body = response.data if isinstance(response.data, dict) else {}
    code = str(body.get("code", "error"))
    extra = body.get("extra") or {}
    kind, openai_code = _ERROR_TYPES.get(code, ("api_error", None))
    error: dict[str, Any] = {
        "message": str(body.get("message", "The request failed.")),
        "type": kind,
        "param": _param(code, extra),
        "code": openai_code or code,
    }
    status = response.status_code
    if code == "context_refused":
        error["governance"] = extra.get("decision")
        error["request_id"] = extra.get("request_id")
    elif code == "context_overflow":
        status, error["breakdown"] = 400, extra.get("breakdown")
    elif code == "provider_error":
        error["failure_class"] = extra.get("failure_class")
        if extra.get("failure_class") == "rate_limit":
            status, error["type"], error["code"] = 429, "rate_limit_error", "rate_limit_exceeded"
            retry_after = extra.get("retry_after")
            if retry_after is not None:
                response["Retry-After"] = str(math.ceil(float(retry_after)))
    elif code == "budget_exhausted":
        error["budget"] = {key: value for key, value in extra.items() if key != "retry_after"}
        response["x-should-retry"] = "false"  # the budget resets at error.budget.reset_at, not sooner
    elif code == "invalid_input":
        error["message"] = _first_field_message(extra) or error["message"]
    response.data = {"error": error}
    response.status_code = status
    if status == 409:
        response["x-should-retry"] = "false"  # switched off: retrying cannot help (the SDKs retry 409)
    return response


def _param(code: str, extra: dict[str, Any]) -> str | None:
    if code in ("invalid_message", "transcript_invalid"):
        return str(extra["field"]) if extra.get("field") else "messages"
    if code == "invalid_input":
        fields = extra.get("fields")
        return next(iter(fields), None) if isinstance(fields, dict) and fields else None
    if code == "unsupported_parameter":
        return extra.get("param")
    if code == "max_tokens_too_large":
        return "max_tokens"
    if code in ("not_found", "configuration_inactive", "model_inactive"):
        return "model"
    if code == "context_overflow":
        return "messages"
    return None


def _first_field_message(extra: dict[str, Any]) -> str | None:
    fields = extra.get("fields")
    if not isinstance(fields, dict) or not fields:
        return None
    name, problems = next(iter(fields.items()))
    first = problems[0] if isinstance(problems, list) and problems else problems
    if isinstance(first, dict):  # a nested serializer's errors
        first = json.dumps(first)
    return f"{name}: {first}"


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


def stream_events(
    opened: CompletionStream, *, model: str, created: int, include_usage: bool
) -> Iterator[bytes]:
    """The server-sent events of a streaming completion, as the provider's deltas arrive (each
    already redacted: a secret split across deltas never comes out): the role, text pieces, each
    tool call (its id and name with its first arguments), the finish reason, then with
    ``include_usage`` one chunk with no choices carrying ``usage``, ``context_usage`` and
    ``governance``, then ``[DONE]``. A provider failure after the first delta ends the stream with an
    ``error`` event in OpenAI's shape (the SDKs raise it) and no ``[DONE]``. Closes the stream."""
    chunks = _Chunks(opened, model=model, created=created, include_usage=include_usage)
    with opened.stream as deltas:
        if not connection.allow_thread_sharing:  # shared only by a test's live server, which owns it
            release_db_connection()  # what the stream needs was read; nothing is held while it waits
        yield chunks.opening()
        try:
            for delta in deltas:
                if isinstance(delta, StreamFinish):
                    yield from chunks.finish(delta.reply, opened.finished(delta.reply))
                else:
                    yield from chunks.piece(delta)
        except ProviderError as failure:
            yield sse_event({"error": _stream_error(failure)})
            return
    yield sse_event("[DONE]")


async def stream_events_async(
    opened: CompletionStream, *, model: str, created: int, include_usage: bool
) -> AsyncIterator[bytes]:
    """:func:`stream_events` of a stream read on the event loop (``CompletionStreamStart.open``): the
    same events; the call's record at the finish is written in the request's thread."""
    chunks = _Chunks(opened, model=model, created=created, include_usage=include_usage)
    try:
        yield chunks.opening()
        try:
            async for delta in opened.stream:
                if isinstance(delta, StreamFinish):
                    finished = sync_to_async(opened.finished, thread_sensitive=True)
                    for event in chunks.finish(delta.reply, await finished(delta.reply)):
                        yield event
                else:
                    for event in chunks.piece(delta):
                        yield event
        except ProviderError as failure:
            yield sse_event({"error": _stream_error(failure)})
            return
        yield sse_event("[DONE]")
    finally:
        await opened.stream.aclose()


class _Chunks:
    """The ``chat.completion.chunk`` events of one stream."""

    def __init__(self, opened: CompletionStream, *, model: str, created: int, include_usage: bool) -> None:
        base: dict[str, Any] = {"id": f"chatcmpl-{opened.request_id}", "object": CHUNK_OBJECT}
        base |= {"created": created, "model": model, "system_fingerprint": None}
        if include_usage:
            base["usage"] = None
        self.base = base
        self.include_usage = include_usage

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return sse_event({**self.base, "choices": [choice]})

    def opening(self) -> bytes:
        return self.chunk({"role": "assistant", "content": ""})

    def piece(self, delta: StreamDelta) -> list[bytes]:
        if isinstance(delta, TextDelta):
            return [self.chunk({"content": delta.text})]
        if isinstance(delta, ToolCallDelta):
            return [self.chunk({"tool_calls": [_tool_call_piece(delta)]})]
        return []

    def finish(self, reply: ProviderReply, completion: Completion) -> list[bytes]:
        """The finish chunk, carrying the answer's ``governance_receipt`` (an extension field), then
        the usage chunk when asked for."""
        choice = {"index": 0, "delta": {}, "finish_reason": finish_reason(reply), "logprobs": None}
        events = [sse_event({**self.base, "choices": [choice], "governance_receipt": completion.receipt})]
        if self.include_usage:
            events.append(sse_event({**self.base, "choices": [], **_usage_fields(completion)}))
        return events


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


def _stream_error(failure: ProviderError) -> dict[str, Any]:
    return {
        "message": failure.message,
        "type": "api_error",
        "param": None,
        "code": failure.code,
        "failure_class": str(failure.failure_class),
    }
