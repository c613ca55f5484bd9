"""Errors on ``/api/openai/v1`` in OpenAI's shape, ``{"error": {"message", "type", "param", "code"}}``,
whoever produced them.

Errors keep the status the rest of the API answers, except where an SDK expects another: a context
that cannot fit is ``400 context_length_exceeded`` (the SDKs' and LangChain's overflow handling
looks for that), a provider's rate limit is ``429`` with its ``Retry-After``, and so is a client's
exhausted daily budget (``budget_exhausted``, with ``error.budget`` and ``x-should-retry: false``:
it resets at the next UTC midnight, not within an SDK's retries). The SDKs raise
their usual exception for each status (403 ``PermissionDeniedError``, 400 ``BadRequestError``, ...).

A view of the OpenAI API renders its errors so itself (``openai_compat.openai_exception_handler``).
What answers before or around a view does not: the body size limit (``config.limits``), Django's
404 for an unmatched URL and its 500 (rewritten to the API's shape by ``config.errors``).
:class:`OpenAIErrorShapeMiddleware`, listed before ``config.errors.ApiErrorShapeMiddleware``, turns
every such error under :data:`OPENAI_PREFIX` into OpenAI's shape too.
"""

from __future__ import annotations

import json
import math
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from rest_framework.response import Response

from config.errors import ResponseShapeMiddleware

OPENAI_PREFIX = "/api/openai/"

# Our error codes in OpenAI's terms: (error.type, error.code or None to keep ours).
_ERROR_TYPES: dict[str, tuple[str, str | None]] = {
    "invalid_input": ("invalid_request_error", "invalid_value"),
    "invalid_message": ("invalid_request_error", "invalid_value"),
    "transcript_invalid": ("invalid_request_error", "invalid_value"),
    "parse_error": ("invalid_request_error", "invalid_json"),
    "unsupported_parameter": ("invalid_request_error", None),
    "invalid_value": ("invalid_request_error", None),
    "modality_unsupported": ("invalid_request_error", None),
    "max_tokens_too_large": ("invalid_request_error", "invalid_value"),
    "media_refused": ("invalid_request_error", None),
    "modality_not_supported": ("invalid_request_error", None),
    "not_authenticated": ("authentication_error", "invalid_api_key"),
    "authentication_failed": ("authentication_error", "invalid_api_key"),
    "permission_denied": ("permission_error", None),
    "not_found": ("invalid_request_error", "model_not_found"),
    "previous_response_not_found": ("invalid_request_error", None),
    "context_refused": ("permission_error", None),
    "context_overflow": ("invalid_request_error", "context_length_exceeded"),
    "throttled": ("rate_limit_error", "rate_limit_exceeded"),
    "budget_exhausted": ("rate_limit_error", None),
    "provider_error": ("api_error", None),
    "configuration_inactive": ("invalid_request_error", None),
    "model_inactive": ("invalid_request_error", None),
    "request_too_large": ("invalid_request_error", None),
    "invalid_text": ("invalid_request_error", "invalid_value"),
    "bad_request": ("invalid_request_error", None),
    "method_not_allowed": ("invalid_request_error", None),
    "unsupported_media_type": ("invalid_request_error", None),
    "not_acceptable": ("invalid_request_error", None),
    "server_error": ("api_error", None),
}


def error_response(response: Response) -> Response:
    """``response`` (the API's one error shape, ``{"code", "message", "extra"}``) in OpenAI's shape,
    with the status and headers an OpenAI client expects."""
    body = response.data if isinstance(response.data, dict) else {}
    response.data, response.status_code, headers = openai_error(body, response.status_code)
    for name, value in headers.items():
        response[name] = value
    return response


def openai_error(body: dict[str, Any], status: int) -> tuple[dict[str, Any], int, dict[str, str]]:
    """The API's error ``body`` answered with ``status``, in OpenAI's shape: the body, its status and
    the headers to add."""
    code = str(body.get("code", "error"))
    extra = body.get("extra") or {}
    kind, openai_code = _ERROR_TYPES.get(code, ("api_error", None))
    error: dict[str, Any] = {
        "message": str(body.get("message", "The request failed.")),
        "type": kind,
        "param": _param(code, extra),
        "code": openai_code or code,
    }
    headers: dict[str, str] = {}
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
                headers["Retry-After"] = str(math.ceil(float(retry_after)))
    elif code == "budget_exhausted":
        error["budget"] = {key: value for key, value in extra.items() if key != "retry_after"}
        headers["x-should-retry"] = "false"  # the budget resets at error.budget.reset_at, not sooner
    elif code == "invalid_input":
        error["message"] = _first_field_message(extra) or error["message"]
    if status == 409:
        headers["x-should-retry"] = "false"  # switched off: retrying cannot help (the SDKs retry 409)
    return {"error": error}, status, headers


def _param(code: str, extra: dict[str, Any]) -> str | None:
    if code == "media_refused":
        return str(extra.get("field") or "messages")
    if code in ("invalid_message", "transcript_invalid", "invalid_text"):
        return str(extra["field"]) if extra.get("field") else "messages"
    if code == "invalid_input":
        fields = extra.get("fields")
        return next(iter(fields), None) if isinstance(fields, dict) and fields else None
    if code in ("unsupported_parameter", "invalid_value"):
        return extra.get("param")
    if code == "max_tokens_too_large":
        return "max_tokens"
    if code in ("not_found", "configuration_inactive", "model_inactive", "modality_unsupported"):
        return "model"
    if code == "context_overflow":
        return "messages"
    if code == "previous_response_not_found":
        return "previous_response_id"
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


class OpenAIErrorShapeMiddleware(ResponseShapeMiddleware):
    """Every error answered under :data:`OPENAI_PREFIX` in OpenAI's shape (see the module docstring).
    A response already in it (or not JSON, or not an error) passes unchanged. WSGI and ASGI alike."""

    def reshape(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        return _in_openai_shape(request, response)


def _in_openai_shape(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    if (
        not request.path.startswith(OPENAI_PREFIX)
        or response.status_code < 400
        or not isinstance(response, HttpResponse)
        or str(response.get("Content-Type", "")).split(";")[0].strip() != "application/json"
    ):
        return response
    try:
        body = json.loads(response.content)
    except ValueError:
        return response
    if not isinstance(body, dict) or "error" in body or "code" not in body:
        return response
    shaped_body, status, headers = openai_error(body, response.status_code)
    shaped = JsonResponse(shaped_body, status=status)
    for name in ("Allow", "Retry-After", "WWW-Authenticate", "X-Request-ID"):
        if response.has_header(name):
            shaped[name] = response[name]
    for name, value in headers.items():
        shaped[name] = value
    return shaped
