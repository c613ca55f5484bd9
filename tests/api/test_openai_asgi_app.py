"""``/api/openai/v1`` streamed through the production ASGI application, driven in process by asgiref's
communicator against the loopback fake provider. The application is built as ``config/asgi.py`` builds
it (``asgi_application``); importing that module would also start the serving
process's background work (the embedded reaper), which a test process must not run.

Under ASGI a streamed completion reads what it needs in a request thread, then waits on the provider
on the event loop: streams waiting on the provider hold no thread each, an error before the first
delta is still answered with its status, and a client that goes away ends the stream (its budget
reservation released, nothing recorded as served).
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from asgiref.testing import ApplicationCommunicator

from agents.models import ClientDailyUsage, CompletionRecord, ProviderKind
from config.request_thread import WORKERS, asgi_application
from governance.vocabulary import TrustZone
from tests.agents.runs import fake_configuration
from tests.asgi import http_scope
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.provider_server import Reply, server_error

pytestmark = pytest.mark.django_db(transaction=True)

application = asgi_application()
CHAT = "/api/openai/v1/chat/completions"
STREAMS = 12
TEXT = "Short sentences. Warm and direct. No jargon at all."


@pytest.fixture
def setup(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU)
    caller = make_caller("configurations:use", configurations=(configuration,))
    return configuration, caller


async def post(token: str, body: dict[str, Any]) -> tuple[ApplicationCommunicator, dict[str, Any]]:
    """A POST to the chat completions through the ASGI application: its communicator and its
    ``http.response.start`` message."""
    raw = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(raw)).encode()),
        (b"authorization", f"Bearer {token}".encode()),
    ]
    scope = http_scope("POST", CHAT, headers)
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "http.request", "body": raw, "more_body": False})
    return communicator, await communicator.receive_output(timeout=30)


async def read_until(communicator: ApplicationCommunicator, marker: bytes, body: list[bytes]) -> None:
    while not any(marker in part for part in body):
        message = await communicator.receive_output(timeout=30)
        assert message["type"] == "http.response.body"
        body.append(message.get("body", b""))
        assert message.get("more_body"), b"".join(body)


def stream_body(configuration) -> dict[str, Any]:
    messages = [{"role": "user", "content": "Describe our tone."}]
    return {"model": configuration.identifier, "messages": messages, "stream": True}


def text_of(body: list[bytes]) -> str:
    pieces = []
    for line in b"".join(body).decode().splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                pieces.append(choice["delta"].get("content") or "")
    return "".join(pieces)


def test_streams_waiting_on_the_provider_hold_no_thread_each(setup, fake_provider):
    configuration, caller = setup
    gates = [threading.Event() for _ in range(STREAMS)]
    fake_provider.script(*[Reply(text=TEXT, gate=gate) for gate in gates])
    before = set(threading.enumerate())

    async def main() -> tuple[list[str], list[threading.Thread]]:
        # Opened one after the other (the in-memory test database takes one writer at a time), each
        # left waiting on the provider, which holds the rest of its reply until its gate opens.
        opened: list[ApplicationCommunicator] = []
        bodies: list[list[bytes]] = [[] for _ in gates]
        try:
            for body in bodies:
                communicator, start = await post(caller.token, stream_body(configuration))
                assert start["status"] == 200
                await read_until(communicator, b'"content":"Shor', body)
                opened.append(communicator)
            waiting = [t for t in threading.enumerate() if t not in before and not _fake_connection(t)]
            for communicator, gate, body in zip(opened, gates, bodies, strict=True):
                gate.set()
                await read_until(communicator, b"data: [DONE]", body)
        finally:
            for gate in gates:
                gate.set()
        return [text_of(body) for body in bodies], waiting

    texts, waiting = asyncio.run(main())

    assert texts == [TEXT] * STREAMS
    # Django's handler alone keeps a thread per open request: twelve while twelve streams wait. Here the
    # threads started meanwhile are the request threads the streams share (at most the pool's size)
    # and the event loop's own executor (its name lookups), whatever the number of streams.
    request_threads = [t for t in waiting if t.name.startswith("request")]
    assert [t.name for t in waiting if t not in request_threads and not t.name.startswith("asyncio_")] == []
    assert len(request_threads) <= WORKERS.size
    assert len(waiting) < STREAMS


def _fake_connection(thread: threading.Thread) -> bool:
    return "process_request_thread" in thread.name  # the fake server's thread per connection


def test_an_anthropic_served_stream_goes_through_the_async_client_alike(fake_provider, make_caller):
    provider = provider_make(
        kind=ProviderKind.ANTHROPIC,
        base_url=fake_provider.anthropic_base_url,
        trust_zone=TrustZone.EXTERNAL_EU,
        max_retries=0,
    )
    configuration = configuration_make(model=model_make(provider=provider, model_id="claude-sonnet-4-5"))
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(Reply(text=TEXT))

    async def main() -> list[bytes]:
        communicator, start = await post(caller.token, stream_body(configuration))
        assert start["status"] == 200
        body: list[bytes] = []
        await read_until(communicator, b"data: [DONE]", body)
        return body

    body = asyncio.run(main())

    assert fake_provider.requests[0].path == "/v1/messages"
    assert text_of(body) == TEXT
    assert CompletionRecord.objects.get().completion_tokens > 0  # the finish was recorded


def test_a_failure_before_the_first_delta_is_answered_with_its_status(setup, fake_provider):
    configuration, caller = setup
    fake_provider.script(server_error())

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        communicator, start = await post(caller.token, stream_body(configuration))
        return start, await communicator.receive_output(timeout=30)

    start, body = asyncio.run(main())

    assert start["status"] == 502
    headers = dict(start["headers"])
    assert headers[b"Content-Type"] == b"application/json"
    assert b"X-Request-ID" in headers
    error = json.loads(body["body"])["error"]
    assert error["code"] == "provider_error" and error["type"] == "api_error"
    assert not body.get("more_body")
    assert ClientDailyUsage.objects.get().tokens_reserved == 0  # released: nothing was served


def test_a_client_that_goes_away_ends_the_stream_and_its_reservation(setup, fake_provider):
    configuration, caller = setup
    gate = threading.Event()
    fake_provider.script(Reply(text=TEXT, gate=gate))

    async def main() -> int:
        communicator, start = await post(caller.token, stream_body(configuration))
        assert start["status"] == 200
        await read_until(communicator, b'"content":"Shor', [])
        reserved = await asyncio.to_thread(_reserved)
        await communicator.send_input({"type": "http.disconnect"})
        await communicator.wait(timeout=30)  # the application returns: the stream was closed
        return reserved

    try:
        reserved_while_open = asyncio.run(main())
    finally:
        gate.set()

    assert reserved_while_open > 0
    assert _reserved() == 0
    assert not CompletionRecord.objects.exists()


def _reserved() -> int:
    from django.db import connection

    try:
        return ClientDailyUsage.objects.get().tokens_reserved
    finally:
        connection.close()
