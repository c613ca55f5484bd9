"""Headers read one by one from a request's META (config/request_headers.py), and the caller's trace
context read that way (config.tracing.MetaHeaders) as the propagators read it from the headers."""

from __future__ import annotations

import contextvars

import pytest
from django.http import HttpResponse
from django.test import RequestFactory
from opentelemetry import baggage, trace
from opentelemetry.propagate import extract
from rest_framework.request import Request

from config.request_headers import header
from config.tracing import META_HEADERS, TraceContextMiddleware
from gateway.apis.openai_compat import declared_class
from gateway.authentication import BearerTokenAuthentication

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
HEADERS = {
    "traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01",
    "tracestate": "vendor=opaque",
    "baggage": "tenant=acme",
}


def test_the_context_read_from_meta_is_the_one_read_from_the_headers():
    request = RequestFactory().get("/", headers={**HEADERS, "X-Other": "1"})
    from_meta = extract(request.META, getter=META_HEADERS)
    from_headers = extract(request.headers)
    span = trace.get_current_span(from_meta).get_span_context()
    assert (format(span.trace_id, "032x"), format(span.span_id, "016x")) == (TRACE_ID, CALLER_SPAN)
    assert span.trace_state.to_header() == "vendor=opaque"
    assert baggage.get_all(from_meta) == {"tenant": "acme"}
    assert trace.get_current_span(from_headers).get_span_context() == span
    assert baggage.get_all(from_headers) == baggage.get_all(from_meta)
    assert META_HEADERS.keys(request.META) == list(request.headers)  # names as request.headers gives them
    assert sorted(META_HEADERS.keys(request.META)) == [
        "Baggage",
        "Cookie",
        "Traceparent",
        "Tracestate",
        "X-Other",
    ]


def test_without_trace_headers_nothing_is_continued():
    request = RequestFactory().get("/")
    assert META_HEADERS.get(request.META, "traceparent") is None
    assert not trace.get_current_span(extract(request.META, getter=META_HEADERS)).get_span_context().is_valid


def test_the_middleware_leaves_request_headers_unbuilt():
    seen = []

    def view(request):
        seen.append("headers" in vars(request))  # a cached property, stored once read
        return HttpResponse("ok")

    request = RequestFactory().get("/", headers=HEADERS)
    assert TraceContextMiddleware(view)(request).status_code == 200
    assert seen == [False]


def test_a_header_is_read_by_its_name_in_any_case_from_meta():
    request = RequestFactory().post(
        "/",
        data=b"{}",
        content_type="application/json",
        headers={"X-Data-Class": "internal", "Authorization": "Bearer t"},
    )
    assert header(request, "x-data-class") == "internal" == request.headers["X-Data-Class"]
    assert header(request, "AUTHORIZATION") == "Bearer t"
    assert header(request, "Content-Type") == "application/json"
    assert header(request, "Content-Length") == "2"
    assert header(request, "X-Absent") is None


@pytest.mark.django_db
def test_authentication_and_the_declared_class_leave_request_headers_unbuilt():
    """The gateway's own reads of a completion's headers (the token, X-Data-Class) go to META."""
    from catalog.services import api_client_create

    issued = api_client_create(name="headers", scopes=["configurations:use"], configurations=[])
    django_request = RequestFactory().post(
        "/api/openai/v1/chat/completions",
        headers={"Authorization": f"Bearer {issued.token}", "X-Data-Class": "editor_content"},
    )
    request = Request(django_request)
    # In a context of its own: authentication binds the client's name to the log context, which the
    # request's middleware would reset and a bare call leaves behind.
    client, token = contextvars.copy_context().run(BearerTokenAuthentication().authenticate, request)
    assert (client.pk, token) == (issued.client.pk, issued.token)
    assert declared_class(request, client) == "editor_content"
    assert "headers" not in vars(django_request)
