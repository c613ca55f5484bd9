"""Errors on ``/api/anthropic/v1`` in Anthropic's shape, ``{"type": "error", "error": {"type",
"message"}}``, whoever produced them.

Statuses are the rest of the API's, read in Anthropic's error types (400 ``invalid_request_error``, 401
``authentication_error``, 403 ``permission_error``, 404 ``not_found_error``, 413
``request_too_large``, 429 ``rate_limit_error``, 5xx ``api_error``), except where a client expects
another: a context that cannot fit is a 400 (Anthropic's own answer to a prompt too long), a
provider's rate limit a 429 with its ``Retry-After``, and an exhausted daily budget a 429 with
``x-should-retry: false``. What this service adds rides beside ``type`` and ``message``: ``code`` (the
API's stable code), ``governance`` and ``request_id`` on a refusal (which sources, never their text),
``breakdown`` on an overflow, ``budget``, ``failure_class`` and ``param`` where they apply. The
official SDKs raise their usual exception for each status (403 ``PermissionDeniedError``, ...).

A view of the Anthropic API renders its errors so itself (:func:`anthropic_exception_handler`); what
answers before or around a view (the body size limit, Django's 404 for an unmatched URL, its 500) is
reshaped by :class:`AnthropicErrorShapeMiddleware`, listed beside the OpenAI one.
"""

from __future__ import annotations

import json
import math
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from rest_framework.response import Response

from config.errors import ResponseShapeMiddleware
from config.exception_handler import api_exception_handler

ANTHROPIC_PREFIX = "/api/anthropic/"

_STATUS_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
}
# Fields a field error names (the first one) as ``param``, as on the OpenAI API.
_PARAM_CODES = {
    "unsupported_parameter": "param",
    "invalid_message": "field",
    "invalid_text": "field",
    "transcript_invalid": "field",
    "media_refused": "field",
}


def anthropic_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """The API's one handler (so refusals count and throttle alike), its answer in Anthropic's shape."""
    response = api_exception_handler(exc, context)
    return error_response(response) if response is not None else None


def error_response(response: Response) -> Response:
    """``response`` (the API's error shape, ``{"code", "message", "extra"}``) in Anthropic's shape."""
    body = response.data if isinstance(response.data, dict) else {}
    response.data, response.status_code, headers = anthropic_error(body, response.status_code)
    for name, value in headers.items():
        response[name] = value
    return response


def anthropic_error(body: dict[str, Any], status: int) -> tuple[dict[str, Any], int, dict[str, str]]:
    """The API's error ``body`` answered with ``status``, in Anthropic's shape: the body, its status
    and the headers to add."""
    code = str(body.get("code", "error"))
    extra = body.get("extra") or {}
    headers: dict[str, str] = {}
    error: dict[str, Any] = {"message": str(body.get("message", "The request failed.")), "code": code}
    if code == "context_refused":
        error["governance"], error["request_id"] = extra.get("decision"), extra.get("request_id")
    elif code == "context_overflow":
        status, error["breakdown"] = 400, extra.get("breakdown")
    elif code == "provider_error":
        error["failure_class"] = extra.get("failure_class")
        if extra.get("failure_class") == "rate_limit":
            status = 429
            if extra.get("retry_after") is not None:
                headers["Retry-After"] = str(math.ceil(float(extra["retry_after"])))
    elif code == "budget_exhausted":
        error["budget"] = {key: value for key, value in extra.items() if key != "retry_after"}
        headers["x-should-retry"] = "false"  # it resets at error.budget.reset_at, not within retries
    elif code == "invalid_input":
        error["message"], error["param"] = _first_field(extra, error["message"])
    if code in _PARAM_CODES and extra.get(_PARAM_CODES[code]):
        error["param"] = str(extra[_PARAM_CODES[code]])
    if status == 409:
        headers["x-should-retry"] = "false"  # switched off: retrying cannot help (the SDKs retry 409)
    kind = _STATUS_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, **error}}, status, headers


def _first_field(extra: dict[str, Any], message: str) -> tuple[str, str | None]:
    fields = extra.get("fields")
    if not isinstance(fields, dict) or not fields:
        return message, None
    name, problems = next(iter(fields.items()))
    first = problems[0] if isinstance(problems, list) and problems else problems
    if isinstance(first, dict):  # a nested serializer's errors
        first = json.dumps(first)
    return f"{name}: {first}", str(name)


class AnthropicErrorShapeMiddleware(ResponseShapeMiddleware):
    """Every error answered under :data:`ANTHROPIC_PREFIX` in Anthropic's shape (see the module
    docstring). A response already in it (or not JSON, or not an error) passes unchanged."""

    def reshape(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if (
            not request.path.startswith(ANTHROPIC_PREFIX)
            or response.status_code < 400
            or not isinstance(response, HttpResponse)
            or str(response.get("Content-Type", "")).split(";")[0].strip() != "application/json"
        ):
            return response
        try:
            body = json.loads(response.content)
        except ValueError:
            return response
        if not isinstance(body, dict) or body.get("type") == "error" or "code" not in body:
            return response
        shaped_body, status, headers = anthropic_error(body, response.status_code)
        shaped = JsonResponse(shaped_body, status=status)
        for name in ("Allow", "Retry-After", "WWW-Authenticate", "X-Request-ID"):
            if response.has_header(name):
                shaped[name] = response[name]
        for name, value in headers.items():
            shaped[name] = value
        return shaped
