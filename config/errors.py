"""The base of every typed error, and the guard that keeps every ``/api/`` error in one shape.

Every error crossing the API is ``{"code", "message", "extra"}`` with a stable string ``code``.
Apps subclass :class:`ApplicationError` in their own ``errors.py``. Errors raised in API views are
rendered by ``config.exception_handler.api_exception_handler``; what Django answers itself under
``/api/`` (an unmatched URL, an unexpected exception, with ``DEBUG`` on or off) is rewritten by
:class:`ApiErrorShapeMiddleware`.

This module imports nothing of DRF's views: the apps' models import it for :class:`ApplicationError`,
and ``rest_framework.views`` loads the authentication classes, which import those models.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from rest_framework import status
from rest_framework.settings import api_settings

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

    def response_headers(self) -> dict[str, str]:
        """Headers the error's response carries (e.g. ``Retry-After``); none by default."""
        return {}


# Families that declare a status once (and, for not found, the code); an app's error names its code.


class NotFoundError(ApplicationError):
    """Unknown, or not visible to the caller: both answer the same, so existence is never revealed."""

    code = "not_found"
    http_status = status.HTTP_404_NOT_FOUND


class ForbiddenError(ApplicationError):
    http_status = status.HTTP_403_FORBIDDEN


class ConflictError(ApplicationError):
    """The request does not fit the current state of what it names."""

    http_status = status.HTTP_409_CONFLICT


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


class InvalidText(ApplicationError):
    """A string in a JSON body holds a NUL character or an unpaired surrogate: no provider, database
    or log can carry it faithfully, so the request is refused before any view sees it."""

    code = "invalid_text"


def invalid_text(field: str) -> InvalidText:
    message = f"{field}: text must not contain NUL (U+0000) or an unpaired surrogate (U+D800 to U+DFFF)."
    return InvalidText(message, extra={"field": field})


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


class ResponseShapeMiddleware(ABC):
    """A middleware that only reshapes the response the rest of the chain answered: a subclass says
    how in :meth:`reshape`. Works in both the WSGI and the ASGI stack (sync and async capable)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.async_mode = iscoroutinefunction(get_response)  # asked once, as Django's own middleware does
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.async_mode:
            return self._acall(request)
        return self.reshape(request, self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        return self.reshape(request, await self.get_response(request))

    @abstractmethod
    def reshape(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        """The response to answer instead of ``response`` (``response`` itself when it is fine)."""


class ApiErrorShapeMiddleware(ResponseShapeMiddleware):
    """Every ``/api/`` error answers ``{"code", "message", "extra"}``, whoever made it.

    API views already answer so (``config.exception_handler``). What Django renders itself does not:
    its 404 for an unmatched URL and, for an unexpected exception, its 500 page, which with ``DEBUG``
    on carries the traceback and the request body. Outermost in ``MIDDLEWARE``, this replaces any
    non-JSON error response under ``/api/`` with the JSON of its status and nothing of the original.
    Django has already logged the exception and sent ``got_request_exception`` by then. Other paths
    (the admin) are left as they are. Works in both the WSGI and the ASGI stack.
    """

    def reshape(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        return _in_api_shape(request, response)


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
