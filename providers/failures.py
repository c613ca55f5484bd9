"""Failure classes, the provider error, and the one classifier every adapter shares.

Classification decisions:

* ``timeout`` is its own class and retryable (a slow answer is usually transient).
* A stream that ends mid-body (the connection dropped) is ``connection``: retryable.
* ``malformed`` (a 200 whose body does not parse, or parses to an unexpected shape) is **not**
  retryable: it is almost always deterministic (a base URL pointing at something that is not the API,
  an incompatible server) and the request may already have been billed.
* A context overflow (400/413/422 naming the context length) is ``context_overflow``, not retryable
  and never a reason to walk fallbacks: the assembly must change, not the provider.

Secrets and content: a :class:`ProviderError` carries the provider's identifier, the class, the HTTP
status, ``retry_after``, the provider's short error code and the *type name* of the underlying
exception. It never carries the provider's error text (real providers echo masked keys and prompt
fragments in it) nor the request. Adapters raise it ``from None`` so a logged traceback cannot carry
the SDK exception either.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import httpx2
from django.db import models
from rest_framework import status as http

from config.errors import ApplicationError
from context_assembly.errors import InvalidMessage

logger = logging.getLogger("providers")


class FailureClass(models.TextChoices):
    """Why a provider call failed. Stored string values are API."""

    CONNECTION = "connection", "Connection failed or dropped"
    TIMEOUT = "timeout", "Timed out"
    RATE_LIMIT = "rate_limit", "Rate limited"
    AUTH = "auth", "Authentication or permission"
    CONFIGURATION = "configuration", "Provider configuration"
    CLIENT_ERROR = "client_error", "Request rejected"
    CONTEXT_OVERFLOW = "context_overflow", "Context too long for the model"
    SERVER_ERROR = "server_error", "Provider server error"
    MALFORMED = "malformed", "Malformed reply"
    UNKNOWN = "unknown", "Unknown"

    @property
    def retryable(self) -> bool:
        return self in _RETRYABLE


_RETRYABLE = frozenset(
    {FailureClass.CONNECTION, FailureClass.TIMEOUT, FailureClass.RATE_LIMIT, FailureClass.SERVER_ERROR}
)


class ProviderError(ApplicationError):
    """A provider call failed. ``retryable`` follows from ``failure_class``; see the module docstring."""

    code = "provider_error"
    http_status = http.HTTP_502_BAD_GATEWAY

    def __init__(
        self,
        message: str,
        *,
        failure_class: FailureClass,
        provider: str,
        status: int | None = None,
        retry_after: float | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.failure_class = FailureClass(failure_class)
        self.retryable = self.failure_class.retryable
        self.provider = provider
        self.status = status
        self.retry_after = retry_after
        # Set by the dispatcher on the error it finally raises: every attempt, in order.
        self.attempts: tuple[Any, ...] = ()
        details = {
            "provider": provider,
            "failure_class": self.failure_class.value,
            "retryable": self.retryable,
            "status": status,
            "retry_after": retry_after,
        }
        super().__init__(message, extra={**details, **(extra or {})})


# --- classification -------------------------------------------------------------------------------------

# Phrases by which OpenAI, Anthropic, vLLM, llama.cpp and Ollama say the prompt does not fit.
_CONTEXT_PHRASES = (
    "context_length_exceeded",
    "maximum context length",
    "prompt is too long",
    "context window",
    "exceeds the context",
    "exceed_context_size",
)
# Anthropic's error types, for errors that arrive inside a 200 stream (no useful HTTP status).
_ERROR_TYPES = {
    "rate_limit_error": FailureClass.RATE_LIMIT,
    "overloaded_error": FailureClass.SERVER_ERROR,
    "api_error": FailureClass.SERVER_ERROR,
    "authentication_error": FailureClass.AUTH,
    "permission_error": FailureClass.AUTH,
    "not_found_error": FailureClass.CONFIGURATION,
    "invalid_request_error": FailureClass.CLIENT_ERROR,
    "request_too_large": FailureClass.CLIENT_ERROR,
}
_SAFE_CODE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def classify_status(status: int, body: object) -> FailureClass:
    """The failure class of an HTTP error answer. ``body`` is the decoded error body (or its text)."""
    if status in (400, 413, 422) and _mentions_context_overflow(body):
        return FailureClass.CONTEXT_OVERFLOW
    if status in (401, 403):
        return FailureClass.AUTH
    if status == 404:
        return FailureClass.CONFIGURATION  # an unknown model id or a wrong base URL
    if status == 408:
        return FailureClass.TIMEOUT
    if status == 429:
        return FailureClass.RATE_LIMIT
    if status >= 500:
        return FailureClass.SERVER_ERROR
    if 400 <= status < 500:
        return FailureClass.CLIENT_ERROR
    return _ERROR_TYPES.get(_error_type(body) or "", FailureClass.UNKNOWN)


def _mentions_context_overflow(body: object) -> bool:
    text = (body if isinstance(body, str) else json.dumps(body, default=str)).lower()
    return any(phrase in text for phrase in _CONTEXT_PHRASES)


def _error_type(body: object) -> str | None:
    """The provider's short error code or type (``rate_limit_exceeded``, ``overloaded_error``), if any."""
    if not isinstance(body, Mapping):
        return None
    inner = body.get("error")
    source = inner if isinstance(inner, Mapping) else body
    for key in ("code", "type"):
        value = source.get(key)
        if isinstance(value, str) and _SAFE_CODE.match(value) and value != "error":
            return value
    return None


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, ``retry-after`` (seconds or an HTTP date), else None."""
    if not headers:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        seconds: float | None
        try:
            seconds = float(raw) / divisor
        except ValueError:
            seconds = _seconds_until_http_date(raw, now)
        if seconds is not None and math.isfinite(seconds):
            return max(0.0, seconds)
    return None


def _seconds_until_http_date(raw: str, now: float | None) -> float | None:
    try:
        moment = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return moment.timestamp() - (time.time() if now is None else now)


@dataclass(frozen=True)
class SdkErrors:
    """The exception classes of one SDK, so one classifier serves both (their shapes are identical)."""

    status: type[Exception]
    timeout: type[Exception]
    connection: type[Exception]
    validation: type[Exception]

    @classmethod
    def of(cls, sdk: ModuleType) -> SdkErrors:
        """The classes of an SDK module that names them as ``openai`` and ``anthropic`` both do."""
        return cls(
            status=sdk.APIStatusError,
            timeout=sdk.APITimeoutError,
            connection=sdk.APIConnectionError,
            validation=sdk.APIResponseValidationError,
        )


def classify_exception(exc: BaseException, sdk: SdkErrors | None) -> tuple[FailureClass, int | None, Any]:
    """``(failure class, HTTP status, response headers)`` for any exception raised during a call."""
    if sdk is not None:
        if isinstance(exc, sdk.timeout):
            return FailureClass.TIMEOUT, None, None
        if isinstance(exc, sdk.connection):
            return FailureClass.CONNECTION, None, None
        if isinstance(exc, sdk.status):
            response = getattr(exc, "response", None)
            status = getattr(exc, "status_code", None)
            headers = getattr(response, "headers", None)
            return classify_status(int(status or 0), getattr(exc, "body", None)), status, headers
        if isinstance(exc, sdk.validation):
            return FailureClass.MALFORMED, None, None
    return _classify_plain(exc), None, None


def _classify_plain(exc: BaseException) -> FailureClass:
    if isinstance(exc, httpx2.TimeoutException | TimeoutError):
        return FailureClass.TIMEOUT
    if isinstance(exc, httpx2.TransportError | httpx2.StreamError | ConnectionError):
        return FailureClass.CONNECTION  # e.g. a stream whose body ended mid-chunk
    # Undecodable JSON, or a reply without the fields we read (pydantic constructs unvalidated models,
    # so a missing field surfaces as AttributeError/KeyError at access time). A TypeError is left to
    # ``unknown``: it is more often a call the SDK does not accept than a reply we cannot read.
    if isinstance(exc, ValueError | AttributeError | KeyError | IndexError | InvalidMessage):
        return FailureClass.MALFORMED
    return FailureClass.UNKNOWN


def provider_error_from(exc: BaseException, *, provider: str, sdk: SdkErrors | None) -> ProviderError:
    """Classify ``exc`` into a :class:`ProviderError` carrying no provider text and no content."""
    failure_class, status, headers = classify_exception(exc, sdk)
    retry_after = parse_retry_after(headers) if headers is not None else None
    provider_code = _error_type(getattr(exc, "body", None)) if status is not None else None
    if status is not None and status < 400:
        status = None  # an error event inside a 200 stream: the HTTP status says nothing about it
    status_text = f" (HTTP {status})" if status else ""
    error = ProviderError(
        f"provider {provider!r} call failed: {failure_class.label.lower()}{status_text}",
        failure_class=failure_class,
        provider=provider,
        status=status,
        retry_after=retry_after,
        extra={"cause": type(exc).__name__, "provider_code": provider_code},
    )
    logger.warning(
        "provider call failed: provider=%s failure_class=%s status=%s cause=%s",
        provider,
        failure_class.value,
        status,
        type(exc).__name__,
    )
    return error
