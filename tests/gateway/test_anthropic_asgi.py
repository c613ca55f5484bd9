"""``/api/anthropic/v1/messages`` streamed through the production ASGI application (as under
``make serve``): Anthropic's events arrive in order on the event loop, a refusal before the first
event is answered with its status in Anthropic's shape, and nothing refused is sent."""

from __future__ import annotations

import asyncio
import json

import pytest

from gateway.models import CompletionRecord
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.gateway.test_openai_asgi_app import read_until, sent

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGES = "/api/anthropic/v1/messages"


@pytest.fixture
def caller(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, identifier="notes")
    return make_caller("configurations:use", configurations=(configuration,))


def body(content: str, **extra) -> dict:
    return {
        "model": "notes",
        "max_tokens": 100,
        "stream": True,
        "messages": [{"role": "user", "content": content, **extra}],
    }


def test_the_stream_is_served_on_the_event_loop_in_anthropics_order(caller, fake_provider):
    text = "Short sentences. Warm and direct. No jargon at all."
    fake_provider.script(Reply(text=text))

    async def main() -> list[bytes]:
        communicator = await sent(caller.token, body("Describe our tone."), path=MESSAGES)
        start = await communicator.receive_output(timeout=30)
        assert start["status"] == 200
        received: list[bytes] = []
        await read_until(communicator, b"event: message_stop", received)
        return received

    raw = b"".join(asyncio.run(main())).decode()
    events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: ")]
    kinds = [event["type"] for event in events]
    assert kinds[:3] == ["message_start", "ping", "content_block_start"]
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta") == text
    assert CompletionRecord.objects.get().completion_tokens > 0  # the finish was recorded


def test_a_refusal_is_answered_403_in_anthropics_shape_before_any_event(caller, fake_provider):
    async def main() -> tuple[dict, dict]:
        communicator = await sent(
            caller.token, body("The vault key.", data_class=DataClass.SECRET_ADJACENT), path=MESSAGES
        )
        return await communicator.receive_output(timeout=30), await communicator.receive_output(timeout=30)

    start, answer = asyncio.run(main())

    assert start["status"] == 403
    error = json.loads(answer["body"])
    assert (error["type"], error["error"]["type"], error["error"]["code"]) == (
        "error",
        "permission_error",
        "context_refused",
    )
    assert fake_provider.requests == []
