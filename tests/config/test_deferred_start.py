"""The held status line (config/deferred_start.py): sent with the first body chunk, replaced when the
answer says so, passed through untouched when nothing deferred it."""

import asyncio
from types import SimpleNamespace

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.deferred_start import SCOPE_KEY, DeferredStart, deferred_start

START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"Content-Type", b"text/event-stream"), (b"X-Request-ID", b"abc")],
}


def _sent(start: DeferredStart, messages: list[dict]) -> list[dict]:
    out: list[dict] = []

    async def send(message: dict) -> None:
        out.append(message)

    async def main() -> None:
        sending = start.sending(send)
        for message in messages:
            await sending(message)

    asyncio.run(main())
    return out


def test_a_start_that_nothing_deferred_goes_out_at_once():
    start = DeferredStart()
    assert _sent(start, [START]) == [START]


def test_a_deferred_start_waits_for_the_first_body_chunk():
    start = DeferredStart()
    start.defer()
    body = {"type": "http.response.body", "body": b"data: x\n\n", "more_body": True}
    assert _sent(start, [START]) == []
    start = DeferredStart()
    start.defer()
    assert _sent(start, [START, body]) == [START, body]


def test_the_answer_replaces_the_status_and_its_own_headers_and_keeps_the_others():
    start = DeferredStart()
    start.defer()
    start.answer_with(502, [("content-type", "application/json"), ("Content-Length", "2")])
    body = {"type": "http.response.body", "body": b"{}", "more_body": True}
    sent = _sent(start, [START, body])
    assert sent[0]["status"] == 502
    assert sent[0]["headers"] == [
        (b"X-Request-ID", b"abc"),
        (b"content-type", b"application/json"),
        (b"Content-Length", b"2"),
    ]
    assert sent[1] == body


def test_a_request_not_served_through_request_threads_is_refused_by_name():
    with pytest.raises(ImproperlyConfigured, match=r"config\.asgi:application"):
        deferred_start(SimpleNamespace(scope={}))
    start = DeferredStart()
    assert deferred_start(SimpleNamespace(scope={SCOPE_KEY: start})) is start
