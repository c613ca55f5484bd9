"""The one DRF exception handler: every error an API view raises, in ``{"code", "message", "extra"}``.

A typed :class:`~config.errors.ApplicationError` renders as its own code and status; DRF's and Django's
exceptions get the stable codes of :data:`_DRF_CODES`. Every string of the body (dict keys included)
passes the service's one redactor before it leaves: a message may quote what the caller sent (an
unknown choice, an unknown configuration or response id), and a secret the caller put there is not
echoed back. Kept apart from ``config.errors``, which the
apps' models import: ``rest_framework.views`` (imported here) loads the authentication classes, which
import those models.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.fields import get_error_detail
from rest_framework.response import Response
from rest_framework.views import exception_handler

from config.errors import ApplicationError, request_too_large
from config.redaction import REDACTOR, Redactor
from config.throttling import refusal_wait

# An error body the redactor fails on keeps only these (vocabulary the code writes: the stable code,
# OpenAI's error type, a provider failure's class); its other strings are answered as WITHHELD.
_VOCABULARY = frozenset(("code", "type", "failure_class"))
WITHHELD = "[withheld: it could not be redacted]"
_redactor = Redactor(REDACTOR, withheld=WITHHELD)
logger = logging.getLogger(__name__)

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


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Render ``exc`` in the one format, redacted. A refusal (401, ``403 permission_denied``) counts
    against the client's address and becomes ``429 throttled`` past ``API_ANON_RATE_LIMIT``
    (config.throttling)."""
    response = _render(exc, context)
    if response is not None and _is_refusal(response):
        wait = refusal_wait(context["request"], context.get("view"))
        if wait is not None:
            response = _render(exceptions.Throttled(wait=wait), context)
    if response is not None:
        response.data = error_redacted(response.data)
    return response


def error_redacted(body: Any) -> Any:
    """An error ``body`` (JSON-like) with every string redacted, keys included: what every error
    answer and every streamed error event passes before it leaves. When the redactor fails, only the
    body's vocabulary is kept (its code, type, failure class); any other string is :data:`WITHHELD`,
    and nested values are emptied."""
    try:
        return _redactor.json(body)
    except Exception:  # fail closed: whatever went wrong, nothing unredacted is answered
        logger.warning("an error body could not be redacted: its text is withheld")
        if not isinstance(body, dict):
            return WITHHELD
        return {key: value if key in _VOCABULARY else _withheld(value) for key, value in body.items()}


def _withheld(value: Any) -> Any:
    if isinstance(value, str):
        return WITHHELD
    if isinstance(value, dict):
        return {}
    if isinstance(value, (list, tuple)):
        return []
    return value


def _is_refusal(response: Response) -> bool:
    code = response.data.get("code") if isinstance(response.data, dict) else None
    return response.status_code == 401 or (response.status_code == 403 and code == "permission_denied")


def _render(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, RequestDataTooBig):
        exc = request_too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    if isinstance(exc, ApplicationError):
        return Response(exc.as_dict(), status=exc.http_status, headers=exc.response_headers())
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
