"""``/api/openai/v1/responses`` through the production ASGI application (as
tests/gateway/test_openai_asgi_app.py drives the chat completions): whole and streamed answers, and a
refusal answered with its status before any event, nothing sent."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agents.models import ClientDailyUsage
from gateway.models import StoredResponse
from governance.vocabulary import TrustZone
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.gateway.test_openai_asgi_app import sent

pytestmark = pytest.mark.django_db(transaction=True)

RESPONSES = "/api/openai/v1/responses"
TEXT = "Short sentences. Warm and direct. No jargon at all."


@pytest.fixture
def setup(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU)
    caller = make_caller("configurations:use", configurations=(configuration,))
    return configuration, caller


async def answer(token: str, body: dict[str, Any]) -> tuple[int, bytes]:
    communicator = await sent(token, body, RESPONSES)
    start = await communicator.receive_output(timeout=30)
    parts = []
    while True:
        message = await communicator.receive_output(timeout=30)
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            return start["status"], b"".join(parts)


def events(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.decode().splitlines() if line.startswith("data: ")]


def test_a_whole_and_a_streamed_response_under_asgi(setup, fake_provider):
    configuration, caller = setup
    fake_provider.script(Reply(text=TEXT), Reply(text=TEXT))
    request = {"model": configuration.identifier, "input": "Describe our tone."}

    whole_status, whole = asyncio.run(answer(caller.token, request))
    stream_status, stream = asyncio.run(answer(caller.token, {**request, "stream": True}))

    assert (whole_status, stream_status) == (200, 200)
    assert json.loads(whole)["output"][0]["content"][0]["text"] == TEXT
    streamed = events(stream)
    assert streamed[0]["type"] == "response.created" and streamed[-1]["type"] == "response.completed"
    assert "".join(e["delta"] for e in streamed if e["type"] == "response.output_text.delta") == TEXT
    assert streamed[-1]["response"]["output"][0]["content"][0]["text"] == TEXT
    assert StoredResponse.objects.count() == 2
    assert ClientDailyUsage.objects.get().tokens_reserved == 0


def test_a_refused_stream_is_a_403_before_any_event_and_nothing_is_sent(setup, fake_provider):
    configuration, caller = setup
    item = {"role": "user", "content": "Rotate the vault key.", "data_class": "secret_adjacent"}

    status, body = asyncio.run(
        answer(caller.token, {"model": configuration.identifier, "input": [item], "stream": True})
    )

    assert status == 403
    assert json.loads(body)["error"]["code"] == "context_refused"
    assert fake_provider.requests == []
    assert StoredResponse.objects.count() == 0
