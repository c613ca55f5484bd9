"""OpenTelemetry traces: off by default, on when ``OTEL_TRACES_EXPORTER`` names an exporter.

``OTEL_TRACES_EXPORTER`` is a comma-separated list of ``otlp`` (OTLP over HTTP/protobuf, configured by
the standard ``OTEL_EXPORTER_OTLP_*`` variables), ``console`` (one JSON span per line on standard
output) and ``none``; any other value stops start-up naming the variable. ``OTEL_SERVICE_NAME`` and
the other standard resource variables apply. The SDK does not read the exporter variable by itself
(only the ``opentelemetry-instrument`` launcher does), so :func:`tracing_configure` does, once per
process, at import of ``config.celery`` (every process imports it; a prefork worker child inherits
it, and the SDK's batch processor restarts its thread after the fork).

What is traced, and where: an API request is a ``SERVER`` span (:class:`TraceContextMiddleware`,
which continues an incoming W3C ``traceparent``); Celery's instrumentation carries the context in the
task message's headers into the worker; the runtime's spans (run, step, governance decision, fit,
provider call) are described in ``agents/telemetry.py``. Span names and attributes are identifiers,
vocabulary values and counts, never content.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.http.request import HttpHeaders
from opentelemetry import trace
from opentelemetry.instrumentation.celery import CeleryInstrumentor
from opentelemetry.propagate import extract
from opentelemetry.propagators.textmap import Getter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

if TYPE_CHECKING:  # the settings module imports this one: nothing here may need Django set up
    from django.http import HttpRequest, HttpResponse

EXPORTER_ENV = "OTEL_TRACES_EXPORTER"
# Our names for the exporters, and the entry points (group ``opentelemetry_traces_exporter``) they load.
EXPORTERS = {"otlp": "otlp_proto_http", "console": "console"}
TRACER = trace.get_tracer("govctx")

P = ParamSpec("P")
R = TypeVar("R")


def exporter_names() -> tuple[str, ...]:
    """The exporters ``OTEL_TRACES_EXPORTER`` names (empty: tracing is off). Raises for an unknown one."""
    value = os.environ.get(EXPORTER_ENV, "")
    names = tuple(name.strip().lower() for name in value.split(",") if name.strip())
    unknown = [name for name in names if name not in (*EXPORTERS, "none")]
    if unknown:
        raise ImproperlyConfigured(
            f"{EXPORTER_ENV} must list exporters among {[*EXPORTERS, 'none']}, got {value!r}"
        )
    return tuple(name for name in names if name != "none")


def _exporter(name: str) -> SpanExporter:
    (entry_point,) = entry_points(group="opentelemetry_traces_exporter", name=EXPORTERS[name])
    exporter: SpanExporter = entry_point.load()()
    return exporter


def tracing_configure() -> TracerProvider | None:
    """Install a tracer provider exporting to the exporters ``OTEL_TRACES_EXPORTER`` names; None (and
    nothing installed) when it names none."""
    names = exporter_names()
    if not names:
        return None
    return tracing_install([BatchSpanProcessor(_exporter(name)) for name in names])


def tracing_install(processors: list[SpanProcessor]) -> TracerProvider:
    """The global tracer provider, sending spans to ``processors``, with Celery instrumented to it.
    Once per process: OpenTelemetry's API ignores a second provider."""
    provider = TracerProvider(resource=Resource.create())
    for processor in processors:
        provider.add_span_processor(processor)
    trace.set_tracer_provider(provider)
    CeleryInstrumentor().instrument(tracer_provider=provider)
    return provider


def tracing_on() -> bool:
    """Whether a tracer provider is installed (by :func:`tracing_install` or a launcher); until then
    OpenTelemetry's API hands out non-recording spans only."""
    return not isinstance(trace.get_tracer_provider(), (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


def span_annotate(attributes: Mapping[str, AttributeValue | None]) -> None:
    """Set ``attributes`` (leaving out None values) on the current span, if one is recording."""
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes({key: value for key, value in attributes.items() if value is not None})


def _error_type(error: BaseException) -> str:
    return str(getattr(error, "code", "") or type(error).__name__)


@contextmanager
def traced_span(
    name: str,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: Mapping[str, AttributeValue] | None = None,
    error_type: Callable[[BaseException], str] = _error_type,
) -> Iterator[trace.Span]:
    """A span around the block; an exception leaving it marks the span failed with ``error.type`` =
    ``error_type(exception)`` (by default its ``code`` when it has one, else its class name; never
    its message). While tracing is off, the block runs under the invalid span at once: the API's
    no-op tracer would only wrap it in three more context managers to the same effect."""
    if not tracing_on():
        yield trace.INVALID_SPAN
        return
    with TRACER.start_as_current_span(
        name, kind=kind, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield span
        except BaseException as error:
            span.set_status(Status(StatusCode.ERROR))
            span.set_attribute("error.type", error_type(error))
            raise


def traced(
    name: str, *, result_attributes: Callable[[Any], Mapping[str, AttributeValue | None]] | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator: each call of the function is a span ``name``; ``result_attributes(result)`` adds
    attributes from what it returned."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with traced_span(name):
                result = function(*args, **kwargs)
                if result_attributes is not None:
                    span_annotate(result_attributes(result))
                return result

        return wrapper

    return decorate


class MetaHeaders(Getter[Mapping[str, Any]]):
    """A request's headers read from its ``META`` for the propagators, which ask for two or three by
    name (``config/request_headers.py``: ``request.headers`` would copy every header for them)."""

    def get(self, carrier: Mapping[str, Any], key: str) -> list[str] | None:
        value = carrier.get(HttpHeaders.to_wsgi_name(key))
        return None if value is None else [value]

    def keys(self, carrier: Mapping[str, Any]) -> list[str]:  # as request.headers names them
        return [name for key in carrier if (name := HttpHeaders.parse_header_name(key)) is not None]


META_HEADERS = MetaHeaders()


class TraceContextMiddleware:
    """Each request is a ``SERVER`` span named by its method and route, continuing the caller's trace
    when it sends a ``traceparent`` header. Costs nothing measurable while tracing is off (the API's
    no-op tracer)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        parent = extract(request.META, getter=META_HEADERS)
        with TRACER.start_as_current_span(
            f"{request.method}", context=parent, kind=SpanKind.SERVER, record_exception=False
        ) as span:
            response = self.get_response(request)
            if span.is_recording():
                route = getattr(request.resolver_match, "route", "") or ""
                if route:  # an unmatched path has no route, and its span keeps the method alone
                    span.update_name(f"{request.method} /{route}")
                    span.set_attribute("http.route", f"/{route}")
                span.set_attribute("http.request.method", request.method or "")
                span.set_attribute("http.response.status_code", response.status_code)
                if response.status_code >= 500:
                    span.set_status(Status(StatusCode.ERROR))
            return response
