"""The base of every typed error, the one DRF exception handler that renders them, and the guard
that keeps every other ``/api/`` error in the same shape.

Every error crossing the API is ``{"code", "message", "extra"}`` with a stable string ``code``.
Apps subclass :class:`ApplicationError` in their own ``errors.py``. Errors raised in API views are
rendered by :func:`api_exception_handler`; what Django answers itself under ``/api/`` (an unmatched
URL, an unexpected exception, with ``DEBUG`` on or off) is rewritten by :class:`ApiErrorShapeMiddleware`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponseBase, JsonResponse
from rest_framework import exceptions, status
from rest_framework.fields import get_error_detail
from rest_framework.response import Response
from rest_framework.settings import api_settings

from config.throttling import refusal_wait

API_PREFIX = "/api/"


class ApplicationError(Exception):
    """A business-rule failure with a stable code. ``extra`` must never carry secret content."""

    code = "application_error"
    http_status = status.HTTP_400_BAD_REQUEST

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "extra": self.extra}


_DRF_CODES = {
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "throttled",
    exceptions.ParseError: "parse_error",
    exceptions.ValidationError: "invalid_input",
}


class RequestTooLarge(ApplicationError):
    """The request body exceeds ``DATA_UPLOAD_MAX_MEMORY_SIZE``; nothing of it was parsed."""

    code = "request_too_large"
    http_status = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


def request_too_large(limit: int) -> RequestTooLarge:
    return RequestTooLarge(f"The request body exceeds {limit:,} bytes.", extra={"limit_bytes": limit})


class InputTooDeep(ApplicationError):
    """A JSON body nests arrays and objects deeper than the parser allows; no view saw it."""

    code = "invalid_input"


def input_too_deep(limit: int) -> InputTooDeep:
    message = f"The JSON body nests arrays and objects deeper than {limit} levels."
    field = api_settings.NON_FIELD_ERRORS_KEY
    extra = {"fields": {field: [message]}, "codes": {field: ["max_depth"]}, "max_depth": limit}
    return InputTooDeep(message, extra=extra)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Render ``exc`` in the one format. A refusal (401, ``403 permission_denied``) counts against the
    client's address and becomes ``429 throttled`` past ``API_ANON_RATE_LIMIT`` (config.throttling)."""
    response = _render(exc, context)
    if response is not None and _is_refusal(response):
        wait = refusal_wait(context["request"], context.get("view"))
        if wait is not None:
            return _render(exceptions.Throttled(wait=wait), context)
    return response


def _is_refusal(response: Response) -> bool:
    code = response.data.get("code") if isinstance(response.data, dict) else None
    return response.status_code == 401 or (response.status_code == 403 and code == "permission_denied")


def _render(exc: Exception, context: dict[str, Any]) -> Response | None:
    # Imported here: rest_framework.views loads the authentication classes, which import the apps'
    # models, which import this module for ApplicationError.
    from rest_framework.views import exception_handler

    if isinstance(exc, RequestDataTooBig):
        exc = request_too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    if isinstance(exc, ApplicationError):
        return Response(exc.as_dict(), status=exc.http_status)
    if isinstance(exc, DjangoValidationError):
        # A model's full_clean() in a service: the same 400 as a serializer's, naming the fields.
        # get_error_detail keeps each message's code (a model's typed refusal stays typed).
        detail = get_error_detail(exc)
        exc = exceptions.ValidationError(
            detail=detail if isinstance(detail, dict) else {"non_field_errors": detail}
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "error")
    if isinstance(exc, exceptions.ValidationError):
        fields, codes = exc.detail, exc.get_codes()
        body = {
            "code": code,
            "message": "The request is invalid.",
            "extra": {"fields": fields, "codes": codes},
        }
    elif isinstance(exc, exceptions.Throttled):
        body = {"code": code, "message": str(exc.detail), "extra": {"retry_after": _seconds(exc.wait)}}
    else:
        body = {"code": code, "message": str(exc.detail), "extra": {}}
    response.data = body
    return response


def _seconds(wait: float | None) -> int | None:
    return None if wait is None else math.ceil(wait)


# What a non-JSON error under /api/ becomes (Django's own pages, or an API view rendering HTML such as
# the docs page); any other status gets the generic "error" or "server_error".
_STATUS_CODES = {
    400: "bad_request",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    429: "throttled",
    500: "server_error",
}
_KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate")


class ApiErrorShapeMiddleware:
    """Every ``/api/`` error answers ``{"code", "message", "extra"}``, whoever made it.

    API views already answer so (:func:`api_exception_handler`). What Django renders itself does not:
    its 404 for an unmatched URL and, for an unexpected exception, its 500 page, which with ``DEBUG``
    on carries the traceback and the request body. Outermost in ``MIDDLEWARE``, this replaces any
    non-JSON error response under ``/api/`` with the JSON of its status and nothing of the original.
    Django has already logged the exception and sent ``got_request_exception`` by then. Other paths
    (the admin) are left as they are. Works in both the WSGI and the ASGI stack.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if iscoroutinefunction(self):
            return self._acall(request)
        return _in_api_shape(request, self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        return _in_api_shape(request, await self.get_response(request))


def _in_api_shape(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    if not request.path.startswith(API_PREFIX) or response.status_code < 400 or _is_json(response):
        return response
    status_code = response.status_code
    try:
        message = HTTPStatus(status_code).phrase.capitalize() + "."
    except ValueError:
        message = "The request failed."
    code = _STATUS_CODES.get(status_code, "server_error" if status_code >= 500 else "error")
    retry_after = response.get("Retry-After")
    extra = {"retry_after": int(retry_after)} if retry_after and retry_after.isdigit() else {}
    shaped = JsonResponse({"code": code, "message": message, "extra": extra}, status=status_code)
    for header in _KEPT_HEADERS:
        if response.has_header(header):
            shaped[header] = response[header]
    return shaped


def _is_json(response: HttpResponseBase) -> bool:
    return str(response.get("Content-Type", "")).split(";")[0].strip() == "application/json"
