"""``/api/openai/v1/embeddings`` through the production ASGI application (built as
``tests/gateway/test_openai_asgi_app.py`` builds it): the call is prepared in a request thread and its
provider awaited on the event loop after the view returned, as a completion's is, so no thread waits
while the provider answers; a failure is answered with its status and its reservation released."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from decimal import Decimal
from typing import Any

import pytest
from asgiref.testing import ApplicationCommunicator

from agents.models import ClientDailyUsage
from config.request_thread import WORKERS
from gateway.models import CompletionRecord
from governance.vocabulary import TrustZone
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply, fake_vector, server_error
from tests.gateway.test_openai_asgi_app import sent

pytestmark = pytest.mark.django_db(transaction=True)

EMBEDDINGS = "/api/openai/v1/embeddings"
CALLS = 12  # more than the request threads kept (config/request_thread.py)


@pytest.fixture
def setup(fake_provider, make_caller):
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_EU,
        identifier="search-index",
        model_embeds=True,
        model_input_price_per_million=Decimal("0.02"),
    )
    return configuration, make_caller("configurations:use", configurations=(configuration,))


def body(text: str) -> dict[str, Any]:
    return {"model": "search-index", "input": text, "encoding_format": "float"}


async def answer_of(communicator: ApplicationCommunicator) -> tuple[int, dict[str, Any]]:
    start = await communicator.receive_output(timeout=30)
    parts = [await communicator.receive_output(timeout=30)]
    while parts[-1].get("more_body"):
        parts.append(await communicator.receive_output(timeout=30))
    return start["status"], json.loads(b"".join(part.get("body", b"") for part in parts))


def _in_a_blocking_embed(thread: threading.Thread) -> bool:
    """Whether ``thread`` is inside an adapter's blocking embedding call right now."""
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if frame.f_code.co_name in {"_embed", "embed"} and "providers" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def test_embeddings_wait_on_the_provider_on_the_loop_not_in_a_thread(setup, fake_provider):
    _, caller = setup
    gates = [threading.Event() for _ in range(CALLS)]
    fake_provider.script(*[Reply(gate=gate) for gate in gates])
    texts = [f"Document {n} about our tone of voice." for n in range(CALLS)]

    async def main() -> tuple[list[tuple[int, dict[str, Any]]], list[str], int]:
        pending: list[ApplicationCommunicator] = []
        try:
            for count, text in enumerate(texts, start=1):
                pending.append(await sent(caller.token, body(text), path=EMBEDDINGS))
                while len(fake_provider.requests) < count:
                    await asyncio.sleep(0.01)
            # Every call is waiting on the provider: none of them in a thread's blocking send.
            blocking = [t.name for t in threading.enumerate() if _in_a_blocking_embed(t)]
            held = WORKERS.threads
            answers = []
            # Answered one after the other: the in-memory test database takes one writer at a time.
            for communicator, gate in zip(pending, gates, strict=True):
                gate.set()
                answers.append(await answer_of(communicator))
            return answers, blocking, held
        finally:
            for gate in gates:
                gate.set()

    answers, blocking, held = asyncio.run(main())

    assert blocking == []
    # Nor does a request thread wait for them: the view returned, its status line held until the
    # answer (config/deferred_start.py), and the shared threads never grew past their kept number.
    assert held <= WORKERS.size < CALLS
    assert [status for status, _ in answers] == [200] * CALLS
    assert [answer["data"][0]["embedding"] for _, answer in answers] == [
        pytest.approx(fake_vector(text, len(answers[0][1]["data"][0]["embedding"]))) for text in texts
    ]
    assert CompletionRecord.objects.count() == CALLS
    assert ClientDailyUsage.objects.get().tokens_reserved == 0  # every reservation settled


def test_a_failed_embedding_is_answered_with_its_status_and_releases_its_reservation(setup, fake_provider):
    _, caller = setup
    fake_provider.script(server_error())

    async def main() -> tuple[int, dict[str, Any]]:
        return await answer_of(await sent(caller.token, body("A document."), path=EMBEDDINGS))

    status, answer = asyncio.run(main())

    assert status == 502
    assert answer["error"]["code"] == "provider_error"
    assert ClientDailyUsage.objects.get().tokens_reserved == 0
    assert not CompletionRecord.objects.exists()
