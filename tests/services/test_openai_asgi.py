"""``/api/openai/v1`` under the production server: uvicorn serving ``config.asgi`` on PostgreSQL.

The official SDK's stream receives the provider's first delta while the provider has not sent the
rest (the fake holds it back until the test says so), and while the stream waits on the provider the
server holds no more database connections than it does idle (counted in ``pg_stat_activity``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import openai
import pytest
from django.db import connection

from catalog.services import api_client_create
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


TEXT = "Short sentences. Warm and direct. No jargon at all."
MESSAGES = [{"role": "user", "content": "Describe our tone."}]


@dataclass
class Gated:
    """A configuration served by a fake whose one answer waits for ``gate``, a client token for it,
    the test's own backend and the backends the server holds with no request in flight."""

    fake: FakeProvider
    model: str
    token: str
    gate: threading.Event
    test_backend: int
    idle: int

    def client(self, server: str) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=f"{server}/api/openai/v1", api_key=self.token, max_retries=0, timeout=30
        )

    def held(self) -> int:
        return count_backends(self.test_backend)


@pytest.fixture
def gated(server) -> Iterator[Gated]:
    gate = threading.Event()
    with FakeProvider() as fake:
        configuration = fake_configuration(fake, zone=TrustZone.EXTERNAL_EU)
        issued = api_client_create(
            name="asgi-openai", scopes=["configurations:use"], configurations=[configuration]
        )
        fake.script(Reply(text=TEXT, gate=gate))
        test_backend = backend_pid()
        idle = in_thread(count_backends, test_backend)
        try:
            yield Gated(fake, configuration.identifier, issued.token, gate, test_backend, idle)
        finally:
            gate.set()


def test_the_sdk_streams_through_uvicorn_and_a_waiting_stream_holds_no_database_connection(server, gated):
    held_while_waiting: list[int] = []

    async def main() -> tuple[str, object]:
        text, usage = [], None
        async with gated.client(server) as client:
            stream = await client.chat.completions.create(
                model=gated.model, messages=MESSAGES, stream=True, stream_options={"include_usage": True}
            )
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    if not gated.gate.is_set():  # the first delta: the provider still holds the rest
                        held_while_waiting.append(await asyncio.to_thread(gated.held))
                        gated.gate.set()
                    text.append(chunk.choices[0].delta.content)
                if chunk.usage is not None:
                    usage = chunk.usage
        return "".join(text), usage

    text, usage = asyncio.run(main())

    assert text == TEXT
    assert usage is not None and usage.completion_tokens > 0
    assert held_while_waiting == [gated.idle]


def test_a_whole_completion_through_uvicorn_holds_no_database_connection_while_it_waits(server, gated):
    async def main() -> tuple[str, int]:
        async with gated.client(server) as client:
            call = asyncio.create_task(client.chat.completions.create(model=gated.model, messages=MESSAGES))
            while not gated.fake.requests:  # the call waits on the provider
                await asyncio.sleep(0.01)
            held = await asyncio.to_thread(gated.held)
            gated.gate.set()
            completion = await call
        return completion.choices[0].message.content or "", held

    text, held_while_waiting = asyncio.run(main())

    assert text == TEXT
    assert held_while_waiting == gated.idle
