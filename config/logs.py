"""Log lines: plain text (the default) or one JSON object per record (``LOG_FORMAT=json``).

Every record carries the identifiers of what it happened in, when known: ``run_id``, ``step_index``,
``client`` (the API client's name), ``correlation_id`` (the id governance events of the same work
carry: a run's id, a completion's request id) and ``request_id`` (one per API request, also sent back
as the ``X-Request-ID`` header). They live in a context variable, set for a request by
:class:`RequestLogContextMiddleware` and for a step by ``agents/telemetry.py``, so the code that
logs does not pass them along, and concurrent requests, threads and tasks never see each other's.

A JSON line holds those fields, ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message`` and an
exception's traceback, and nothing else: values passed to a log call as ``extra`` are dropped, since
any of them could carry content. Messages themselves name things by identifier, never by content
(the code redacts before it logs).

Whatever logger wrote a line, it is redacted as it is formatted, in both formats: Django's own
(``django.request`` names the path, ``django.security.DisallowedHost`` the ``Host`` header), the
ASGI server's (uvicorn's access log names the path and query string) and any library's. The
formatters call the service's one redactor (``config.redaction``); a line the redactor fails on
is replaced by :data:`WITHHELD`, never written raw.

The root's console handler is the only one that writes: every logger that Django, a server or a
library sets up with a handler of its own (:data:`SELF_CONFIGURED`) is given none and propagates to
it. Django's defaults would otherwise print ``make run``'s records a second time, raw (its debug
console handler on ``django`` and runserver's access log on ``django.server``), and mail a 500's
request to ``ADMINS``; uvicorn's access log likewise (detect-secrets, which adds a console handler
when imported, after this configuration applies, is handled where it is imported). So every
line follows ``LOG_FORMAT``, and no error is mailed: errors are read in the log.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar, Token
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from django.core.signals import request_finished
from pythonjsonlogger.json import JsonFormatter

from config.redaction import REDACTOR, Redactor

if TYPE_CHECKING:  # the settings module imports this one: nothing here may need Django set up
    from django.http import HttpRequest, HttpResponse

CONTEXT_FIELDS = ("run_id", "step_index", "client", "correlation_id", "request_id")
JSON_FIELDS = ("time", "level", "logger", "message", *CONTEXT_FIELDS, "exc_info", "stack_info")
# JSON fields the code writes itself from identifiers: no text to redact.
_OURS = frozenset(("time", "level", "logger", "run_id", "step_index", "correlation_id", "request_id"))
LOG_FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
WITHHELD = "[log line withheld: it could not be redacted]"
# Loggers set up with handlers and formats of their own, by Django's DEFAULT_LOGGING (the debug
# console, ADMINS mail, runserver's access log) and by uvicorn; each is given none and propagates to
# the root's redacting handler.
SELF_CONFIGURED = ("django", "django.server", "uvicorn", "uvicorn.error", "uvicorn.access")
# The HTTP clients under the provider SDKs (httpx2 under openai and anthropic, httpx under others) log
# every request at INFO ("HTTP Request: POST <provider URL> ..."): a line per provider call, which each
# call paid formatting and redaction for, naming the provider's address and saying less than the call's
# receipt and metrics. They write from WARNING up, and everything at LOG_LEVEL=DEBUG.
HTTP_CLIENTS = ("httpx", "httpx2")

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_context: ContextVar[Mapping[str, Any]] = ContextVar("log_context", default=_EMPTY)


def _with(fields: Mapping[str, str | int | None]) -> Mapping[str, Any]:
    """The current fields and ``fields``; an empty value (a run without a client) is left out."""
    known = {name: value for name, value in fields.items() if value is not None and value != ""}
    return MappingProxyType({**_context.get(), **known})


@contextmanager
def log_context(**fields: str | int | None) -> Iterator[None]:
    """Add ``fields`` (names from :data:`CONTEXT_FIELDS`) to every record logged inside the block."""
    token = _context.set(_with(fields))
    try:
        yield
    finally:
        _context.reset(token)


def log_context_update(**fields: str | int | None) -> None:
    """Add ``fields`` to the current scope (a request, a step): they end with it."""
    _context.set(_with(fields))


class LogContextFilter(logging.Filter):
    """Puts the context fields on each record a handler emits (not overriding a record's own)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in _context.get().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


class TextLogFormatter(logging.Formatter):
    """:data:`TEXT_FORMAT`, the whole line (traceback included) redacted."""

    def __init__(self, *, redactor: str = "") -> None:
        super().__init__(TEXT_FORMAT)
        self.redact = Redactor(redactor or REDACTOR, withheld=WITHHELD)

    def format(self, record: logging.LogRecord) -> str:
        return self.redact(super().format(record))


class JsonLogFormatter(JsonFormatter):
    """One JSON object per record, holding only :data:`JSON_FIELDS` (python-json-logger), every
    string in it redacted."""

    def __init__(self, *args: Any, redactor: str = "", **kwargs: Any) -> None:
        super().__init__(
            "{levelname}{name}{message}",
            style="{",
            rename_fields={"levelname": "level", "name": "logger"},
            timestamp="time",
        )
        self.redact = Redactor(redactor or REDACTOR, withheld=WITHHELD)

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        kept = {name: log_data[name] for name in JSON_FIELDS if name in log_data}
        return {
            name: self.redact(value) if isinstance(value, str) and name not in _OURS else value
            for name, value in kept.items()
        }


def logging_config(*, log_format: str, level: str) -> dict[str, Any]:
    """Django's ``LOGGING``: one console handler in ``log_format``, with the context filter, the
    only one: the loggers in :data:`SELF_CONFIGURED` write through it. The :data:`HTTP_CLIENTS` write
    from WARNING up unless ``level`` is DEBUG."""
    loggers: dict[str, dict[str, Any]] = {
        name: {"handlers": [], "propagate": True} for name in SELF_CONFIGURED
    }
    if logging.getLevelName(level.upper()) != logging.DEBUG:
        loggers |= {name: {"level": "WARNING"} for name in HTTP_CLIENTS}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": LogContextFilter}},
        "formatters": {"text": {"()": TextLogFormatter}, "json": {"()": JsonLogFormatter}},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": log_format,
                "filters": ["context"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": loggers,
    }


class RequestLogContextMiddleware:
    """Gives each request a ``request_id`` for its log records, and answers it in ``X-Request-ID``
    so a caller can quote it.

    The id stays bound until the response is closed (Django's ``request_finished``), not only while
    the middleware runs: Django logs a 4xx/5xx answer (``django.request``) after the middleware chain
    returns, and a streamed body is produced after that.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        request_finished.connect(_request_context_end, dispatch_uid="config.logs.request_context_end")

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = uuid.uuid4().hex
        _request_scope.set(_context.set(_with({"request_id": request_id})))
        response = self.get_response(request)
        response["X-Request-ID"] = request_id
        return response


_request_scope: ContextVar[Token[Mapping[str, Any]] | None] = ContextVar("log_request_scope", default=None)


def _request_context_end(**kwargs: Any) -> None:
    token = _request_scope.get()
    if token is None:
        return
    _request_scope.set(None)
    # Under ASGI the response is closed in a copy of the request's context, where the reset does not
    # apply; that context ends with the request, so nothing outlives it either way.
    with suppress(ValueError):
        _context.reset(token)
