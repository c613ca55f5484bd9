"""``/api/openai/v1`` streamed through the production ASGI application, driven in process by asgiref's
communicator against the loopback fake provider. The application is built as ``config/asgi.py`` builds
it (``config.request_thread.asgi_application``); importing that module would also
start the serving process's background work (the embedded reaper), which a test process must not run.

Under ASGI a completion view reads what it needs in a request thread, then waits on the provider on
the event loop: neither a whole answer nor a stream holds a thread while it waits (the view returns at
once, its status line held until the answer's first byte: ``config/deferred_start.py``), an error before
the first delta is still answered with its status, and a client that goes away ends the stream (its budget
charged what was spent, and recorded: ``tests/gateway/test_abandoned_streams.py``).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from typing import Any

import pytest
from asgiref.testing import ApplicationCommunicator

from agents.models import ClientDailyUsage
from catalog.models import ProviderKind
from config.request_thread import WORKERS, asgi_application
from gateway.models import CompletionRecord
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
    communicator = await sent(token, body)
    return communicator, await communicator.receive_output(timeout=30)


async def sent(token: str, body: dict[str, Any], path: str = CHAT) -> ApplicationCommunicator:
    """A POST (by default to the chat completions) through the ASGI application, its answer still to be
    read."""
    raw = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(raw)).encode()),
        (b"authorization", f"Bearer {token}".encode()),
    ]
    communicator = ApplicationCommunicator(application, http_scope("POST", path, headers))
    await communicator.send_input({"type": "http.request", "body": raw, "more_body": False})
    return communicator


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


def test_streams_waiting_for_their_first_delta_hold_no_request_thread(setup, fake_provider):
    configuration, caller = setup
    gates = [threading.Event() for _ in range(STREAMS)]
    # Each stream's provider holds back even its first content until its gate opens.
    fake_provider.script(*[Reply(text=TEXT, gate=gate, gate_after=0) for gate in gates])

    async def main() -> tuple[list[tuple[int, str]], int]:
        pending: list[ApplicationCommunicator] = []
        try:
            for count in range(1, STREAMS + 1):
                pending.append(await sent(caller.token, stream_body(configuration)))
                while len(fake_provider.requests) < count:
                    await asyncio.sleep(0.01)
            held = WORKERS.threads
            answers = []
            for communicator, gate in zip(pending, gates, strict=True):
                gate.set()
                start = await communicator.receive_output(timeout=30)
                body: list[bytes] = []
                await read_until(communicator, b"data: [DONE]", body)
                answers.append((start["status"], text_of(body)))
        finally:
            for gate in gates:
                gate.set()
        return answers, held

    answers, held = asyncio.run(main())

    assert answers == [(200, TEXT)] * STREAMS
    # Every stream waited for its first delta on the event loop, its status line held until then
    # (config/deferred_start.py): the shared request threads never grew past the pool's size.
    assert held <= WORKERS.size < STREAMS


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

    async def main() -> tuple[dict[str, Any], bytes]:
        communicator, start = await post(caller.token, stream_body(configuration))
        parts = [await communicator.receive_output(timeout=30)]
        while parts[-1].get("more_body"):
            parts.append(await communicator.receive_output(timeout=30))
        return start, b"".join(part.get("body", b"") for part in parts)

    start, body = asyncio.run(main())

    assert start["status"] == 502
    headers = dict(start["headers"])
    assert headers[b"Content-Type"] == b"application/json"
    assert headers[b"Content-Length"] == str(len(body)).encode()
    assert b"X-Request-ID" in headers
    error = json.loads(body)["error"]
    assert error["code"] == "provider_error" and error["type"] == "api_error"
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
    # Charged its prompt estimate (18) and the one chunk the provider had sent ("Short se": 2 tokens).
    assert ClientDailyUsage.objects.get().tokens_used == 18 + 2
    record = CompletionRecord.objects.get()
    assert (record.prompt_tokens, record.completion_tokens) == (18, 2)


def _reserved() -> int:
    from django.db import connection

    try:
        return ClientDailyUsage.objects.get().tokens_reserved
    finally:
        connection.close()


def whole_body(configuration) -> dict[str, Any]:
    return {
        "model": configuration.identifier,
        "messages": [{"role": "user", "content": "Describe our tone."}],
    }


async def answer_of(communicator: ApplicationCommunicator) -> tuple[int, dict[str, Any]]:
    start = await communicator.receive_output(timeout=30)
    body = await communicator.receive_output(timeout=30)
    return start["status"], json.loads(body["body"])


def test_whole_completions_waiting_on_the_provider_hold_no_request_thread(setup, fake_provider):
    configuration, caller = setup
    gates = [threading.Event() for _ in range(STREAMS)]
    fake_provider.script(*[Reply(text=TEXT, gate=gate) for gate in gates])
    before = set(threading.enumerate())

    async def main() -> tuple[list[tuple[int, dict[str, Any]]], list[threading.Thread], int]:
        # Sent one after the other (the in-memory test database takes one writer at a time), each left
        # waiting on the provider, which holds its answer until its gate opens.
        pending: list[ApplicationCommunicator] = []
        try:
            for count in range(1, STREAMS + 1):
                pending.append(await sent(caller.token, whole_body(configuration)))
                while len(fake_provider.requests) < count:
                    await asyncio.sleep(0.01)
            waiting = [t for t in threading.enumerate() if t not in before and not _fake_connection(t)]
            held = WORKERS.threads
            answers = []
            for communicator, gate in zip(pending, gates, strict=True):
                gate.set()
                answers.append(await answer_of(communicator))
        finally:
            for gate in gates:
                gate.set()
        return answers, waiting, held

    answers, waiting, held = asyncio.run(main())

    assert [status for status, _ in answers] == [200] * STREAMS
    assert [body["choices"][0]["message"]["content"] for _, body in answers] == [TEXT] * STREAMS
    assert all("stream" not in request.body for request in fake_provider.requests)  # whole calls
    assert CompletionRecord.objects.count() == STREAMS
    # The view returns before the provider answers and the answer is awaited on the event loop, its
    # status line held until then (config/deferred_start.py): the shared pool never grows past its
    # size while every request waits, and nothing else is started.
    request_threads = [t for t in waiting if t.name.startswith("request")]
    assert [t.name for t in waiting if t not in request_threads and not t.name.startswith("asyncio_")] == []
    assert held <= WORKERS.size < STREAMS


def test_a_whole_completion_that_fails_is_answered_with_its_status(setup, fake_provider):
    configuration, caller = setup
    fake_provider.script(server_error())

    async def main() -> tuple[int, dict[str, Any]]:
        return await answer_of(await sent(caller.token, whole_body(configuration)))

    status, body = asyncio.run(main())

    assert status == 502
    assert body["error"]["code"] == "provider_error" and body["error"]["type"] == "api_error"
    assert ClientDailyUsage.objects.get().tokens_reserved == 0  # released: nothing was served
    assert not CompletionRecord.objects.exists()


def test_a_client_that_goes_away_ends_the_whole_call_and_its_reservation(setup, fake_provider):
    configuration, caller = setup
    gate = threading.Event()
    fake_provider.script(Reply(text=TEXT, gate=gate))

    async def main() -> int:
        communicator = await sent(caller.token, whole_body(configuration))
        while not fake_provider.requests:
            await asyncio.sleep(0.01)
        reserved = await asyncio.to_thread(_reserved)
        await communicator.send_input({"type": "http.disconnect"})
        await communicator.wait(timeout=30)  # the application returns: the call was cancelled
        return reserved

    try:
        reserved_while_waiting = asyncio.run(main())
    finally:
        gate.set()

    assert reserved_while_waiting > 0
    assert _reserved() == 0
    # Cancelled in flight: the provider may finish the reply, so the reservation is charged whole.
    assert ClientDailyUsage.objects.get().tokens_used == reserved_while_waiting
    record = CompletionRecord.objects.get()
    assert (record.prompt_tokens, record.completion_tokens) == (18, reserved_while_waiting - 18)


def test_the_native_completion_waits_on_the_provider_on_the_loop_too(setup, fake_provider):
    configuration, caller = setup
    gate = threading.Event()
    fake_provider.script(Reply(text=TEXT, gate=gate))
    body = {"configuration": configuration.identifier, "input": "Describe our tone."}

    async def main() -> tuple[int, dict[str, Any], list[str]]:
        communicator = await sent(caller.token, body, path="/api/v1/completions")
        while not fake_provider.requests:
            await asyncio.sleep(0.01)
        # Waiting on the provider: no request thread runs the call (each is idle or gone).
        busy = [t.name for t in threading.enumerate() if t.name.startswith("request") and _running_a_call(t)]
        gate.set()
        status, answer = await answer_of(communicator)
        return status, answer, busy

    try:
        status, answer, busy = asyncio.run(main())
    finally:
        gate.set()

    assert (status, answer["text"], busy) == (200, TEXT, [])
    assert CompletionRecord.objects.get().request_id == answer["request_id"]


def _running_a_call(thread: threading.Thread) -> bool:
    """Whether ``thread`` is inside an SDK's blocking send right now."""
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if frame.f_code.co_name in {"_send_whole", "send"} and "providers" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False
