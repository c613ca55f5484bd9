"""The base of every typed error and the one DRF exception handler that renders them.

Every error crossing the API is ``{"code", "message", "extra"}`` with a stable string ``code``.
Apps subclass :class:`ApplicationError` in their own ``errors.py``.
"""

from __future__ import annotations

import math
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.fields import get_error_detail
from rest_framework.response import Response


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


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
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
