"""``/api/openai/v1`` under the production server: uvicorn serving ``config.asgi`` on PostgreSQL.

The official SDK's stream receives the provider's first delta while the provider has not sent the
rest (the fake holds it back until the test says so), and while the stream waits on the provider the
server holds no more database connections than it does idle (counted in ``pg_stat_activity``).
"""

from __future__ import annotations

import asyncio
import threading

import openai
import pytest
from django.db import connection

from agents.services import api_client_create
from governance.vocabulary import TrustZone
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import FakeProvider, Reply
from tests.services.test_asgi_streams import backend_pid, empty_broker, server, server_backends

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
__all__ = ["empty_broker", "server"]  # fixtures used here, defined beside the run event streams


def count_backends(exclude: int) -> int:
    """:func:`server_backends` from a thread of its own, whose connection is closed after."""
    try:
        return server_backends(exclude)
    finally:
        connection.close()


def in_thread(function, *args):
    result = []
    worker = threading.Thread(target=lambda: result.append(function(*args)))
    worker.start()
    worker.join()
    return result[0]


def test_the_sdk_streams_through_uvicorn_and_a_waiting_stream_holds_no_database_connection(server):
    gate = threading.Event()
    with FakeProvider() as fake:
        configuration = fake_configuration(fake, zone=TrustZone.EXTERNAL_EU)
        issued = api_client_create(
            name="asgi-openai", scopes=["configurations:use"], configurations=[configuration]
        )
        fake.script(Reply(text="Short sentences. Warm and direct. No jargon at all.", gate=gate))
        test_backend = backend_pid()
        held_while_waiting: list[int] = []
        # What the server holds with no request in flight (its own background work, if any).
        idle = in_thread(count_backends, test_backend)

        async def main() -> tuple[str, object]:
            client = openai.AsyncOpenAI(
                base_url=f"{server}/api/openai/v1", api_key=issued.token, max_retries=0, timeout=30
            )
            text, usage = [], None
            async with client:
                stream = await client.chat.completions.create(
                    model=configuration.identifier,
                    messages=[{"role": "user", "content": "Describe our tone."}],
                    stream=True,
                    stream_options={"include_usage": True},
                )
                async for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content:
                        if not gate.is_set():  # the first delta: the provider still holds the rest
                            held_while_waiting.append(await asyncio.to_thread(count_backends, test_backend))
                            gate.set()
                        text.append(chunk.choices[0].delta.content)
                    if chunk.usage is not None:
                        usage = chunk.usage
            return "".join(text), usage

        try:
            text, usage = asyncio.run(main())
        finally:
            gate.set()

    assert text == "Short sentences. Warm and direct. No jargon at all."
    assert usage is not None and usage.completion_tokens > 0
    assert held_while_waiting == [idle]


def test_a_whole_completion_through_uvicorn_holds_no_database_connection_while_it_waits(server):
    gate = threading.Event()
    with FakeProvider() as fake:
        configuration = fake_configuration(fake, zone=TrustZone.EXTERNAL_EU)
        issued = api_client_create(
            name="asgi-whole", scopes=["configurations:use"], configurations=[configuration]
        )
        fake.script(Reply(text="Short sentences. Warm and direct. No jargon at all.", gate=gate))
        test_backend = backend_pid()
        idle = in_thread(count_backends, test_backend)

        async def main() -> tuple[str, int]:
            client = openai.AsyncOpenAI(
                base_url=f"{server}/api/openai/v1", api_key=issued.token, max_retries=0, timeout=30
            )
            async with client:
                call = asyncio.create_task(
                    client.chat.completions.create(
                        model=configuration.identifier,
                        messages=[{"role": "user", "content": "Describe our tone."}],
                    )
                )
                while not fake.requests:  # the call waits on the provider
                    await asyncio.sleep(0.01)
                held = await asyncio.to_thread(count_backends, test_backend)
                gate.set()
                completion = await call
            return completion.choices[0].message.content or "", held

        try:
            text, held_while_waiting = asyncio.run(main())
        finally:
            gate.set()

    assert text == "Short sentences. Warm and direct. No jargon at all."
    assert held_while_waiting == idle
