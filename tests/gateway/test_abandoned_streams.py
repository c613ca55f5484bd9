"""A client that drops a streamed completion before its finish is charged what was spent (issue: ten
streams closed after 19 of 20 chunks were served free). The send is settled with what the provider
reported if it had, else its prompt estimate plus what had streamed, else (a whole reply cancelled in
flight) its reservation; the ledger row, ``cost_report`` and ``govctx_tokens_total`` count it, and
the reservations of streams in flight keep the day within its limit.

Prices: 2.50 per million prompt tokens, 10 per million completion tokens. The reply is twenty
provider chunks of eight characters (``chunk01 `` ...), each one content event. The stream's redaction
holds the last word back until the next one arrives, so by the time a client has read nineteen
events the provider has sent all twenty chunks: 41 tokens for the model's tokenizer (``o200k_base``).
The request's prompt estimate is 18 tokens.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from decimal import Decimal

import pytest
from prometheus_client import REGISTRY

from agents.models import ClientDailyUsage
from agents.runtime.budget import budget_day
from catalog.models import ApiClient
from editors.cost_report import cost_report
from gateway.models import CompletionRecord
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.gateway.test_openai_asgi_app import post, read_until, sent

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"
TEXT = "".join(f"chunk{n:02d} " for n in range(1, 21))
MAX_TOKENS = 1900
READ = 19  # content events read before the client goes away
STREAMED_TOKENS = 41  # the twenty chunks the provider had sent (see the module docstring)
PROMPT_TOKENS = 18  # the request's prompt estimate
RESERVATION = PROMPT_TOKENS + MAX_TOKENS
PROMPT, COMPLETION = Decimal("2.50") / 10**6, Decimal(10) / 10**6


@pytest.fixture
def configuration(fake_provider):
    return fake_configuration(
        fake_provider,
        model_input_price_per_million=Decimal("2.50"),
        model_output_price_per_million=Decimal("10"),
    )


@pytest.fixture
def caller(make_caller, configuration):
    return make_caller("configurations:use", configurations=(configuration,))


def chat(configuration) -> dict:
    messages = [{"role": "user", "content": "Describe our tone."}]
    return {"model": configuration.identifier, "messages": messages, "stream": True, "max_tokens": MAX_TOKENS}


def usage_row(caller) -> tuple[int, int, Decimal, Decimal]:
    row = ClientDailyUsage.objects.get(client=caller.client, day=budget_day())
    return row.tokens_used, row.tokens_reserved, row.cost_used, row.cost_reserved


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def content_events(response, count: int) -> list[str]:
    """The first ``count`` content pieces of a streamed answer (the role event skipped)."""
    events, pieces = iter(response.streaming_content), []
    while len(pieces) < count:
        line = next(events).decode()
        delta = json.loads(line.removeprefix("data: "))["choices"][0]["delta"]
        if delta.get("content"):
            pieces.append(delta["content"])
    return pieces


def test_ten_streams_dropped_before_their_usage_are_charged_what_was_spent(
    caller, configuration, fake_provider
):
    ApiClient.objects.filter(pk=caller.client.pk).update(daily_token_limit=20_000)
    fake_provider.script(*[Reply(text=TEXT, prompt_tokens=900, completion_tokens=40)] * 10)
    tokens = {
        kind: sample("govctx_tokens_total", model="gpt-4o", type=kind) for kind in ("prompt", "completion")
    }
    abandoned = sample("govctx_abandoned_sends_total", model="gpt-4o", charged="estimated")

    for _ in range(10):
        response = caller.post(CHAT, chat(configuration))
        assert response.status_code == 200
        assert usage_row(caller)[1] == RESERVATION  # held while the stream is open
        assert content_events(response, READ) == [f"chunk{n:02d} " for n in range(1, READ + 1)]
        response.close()  # the client goes away before the last chunk and the usage

    charge = PROMPT_TOKENS + STREAMED_TOKENS
    cost = PROMPT_TOKENS * PROMPT + STREAMED_TOKENS * COMPLETION  # 0.000455 each
    assert usage_row(caller) == (10 * charge, 0, 10 * cost, Decimal(0))
    records = CompletionRecord.objects.filter(api_client=caller.client)
    assert (
        sorted(records.values_list("prompt_tokens", "completion_tokens", "cost"))
        == [(PROMPT_TOKENS, STREAMED_TOKENS, cost)] * 10
    )
    today = budget_day()
    [row] = cost_report(start=today, end=today).rows
    assert (row.client, row.calls, row.prompt_tokens, row.completion_tokens, row.cost) == (
        caller.client.name, 10, 10 * PROMPT_TOKENS, 10 * STREAMED_TOKENS, 10 * cost
    )  # fmt: skip
    assert (
        sample("govctx_tokens_total", model="gpt-4o", type="prompt") - tokens["prompt"] == 10 * PROMPT_TOKENS
    )
    assert sample("govctx_tokens_total", model="gpt-4o", type="completion") - tokens["completion"] == (
        10 * STREAMED_TOKENS
    )
    assert sample("govctx_abandoned_sends_total", model="gpt-4o", charged="estimated") - abandoned == 10
    assert len(fake_provider.requests) == 10


def test_a_stream_dropped_before_its_first_byte_is_charged_its_prompt(caller, configuration, fake_provider):
    fake_provider.script(Reply(text=TEXT))

    response = caller.post(CHAT, chat(configuration))
    assert usage_row(caller) == (0, RESERVATION, Decimal(0), usage_row(caller)[3])
    response.close()  # the server closes the response: the client left before any event

    assert usage_row(caller) == (PROMPT_TOKENS, 0, PROMPT_TOKENS * PROMPT, Decimal(0))
    record = CompletionRecord.objects.get()
    assert (record.prompt_tokens, record.completion_tokens, record.cost) == (
        PROMPT_TOKENS,
        0,
        PROMPT_TOKENS * PROMPT,
    )


def test_concurrent_abandoned_streams_stay_within_the_daily_limit(caller, configuration, fake_provider):
    # The test client serves these overlapping requests in this thread, where a request's log context
    # lives until its response closes: in a copy of the context, none outlives the test.
    contextvars.copy_context().run(_two_open_streams_and_a_third, caller, configuration, fake_provider)


def _two_open_streams_and_a_third(caller, configuration, fake_provider) -> None:
    limit = 3 * RESERVATION - 1  # two reservations fit, a third does not
    ApiClient.objects.filter(pk=caller.client.pk).update(daily_token_limit=limit)
    fake_provider.script(*[Reply(text=TEXT)] * 3)

    first, second = caller.post(CHAT, chat(configuration)), caller.post(CHAT, chat(configuration))
    content_events(first, READ)
    third = caller.post(CHAT, chat(configuration))
    assert third.status_code == 429
    assert json.loads(third.content)["error"]["code"] == "budget_exhausted"
    assert len(fake_provider.requests) == 2  # nothing sent for the third
    first.close()
    second.close()

    used = usage_row(caller)[0]
    assert used == 2 * PROMPT_TOKENS + STREAMED_TOKENS
    assert used <= limit
    assert CompletionRecord.objects.count() == 2


# The provider sends two chunks, then waits: the stream redaction hands the first on once the second
# has arrived, and the send had streamed both.
FIRST_CHUNK_TOKENS = 5  # "chunk01 chunk02 "


@pytest.mark.django_db(transaction=True)
def test_ten_streams_a_client_leaves_under_asgi_are_charged_what_was_spent(
    caller, configuration, fake_provider
):
    ApiClient.objects.filter(pk=caller.client.pk).update(daily_token_limit=20_000)
    gates = [threading.Event() for _ in range(10)]
    fake_provider.script(*[Reply(text=TEXT, gate=gate, gate_after=2) for gate in gates])

    async def leave_after_the_first_chunk() -> None:
        for _ in gates:
            communicator, start = await post(caller.token, chat(configuration))
            assert start["status"] == 200
            await read_until(communicator, b'"content":"chunk01 "', [])
            await communicator.send_input({"type": "http.disconnect"})
            await communicator.wait(timeout=30)  # the application returns: the stream was closed

    try:
        asyncio.run(leave_after_the_first_chunk())
    finally:
        for gate in gates:
            gate.set()

    charge = PROMPT_TOKENS + FIRST_CHUNK_TOKENS
    cost = PROMPT_TOKENS * PROMPT + FIRST_CHUNK_TOKENS * COMPLETION
    assert usage_row(caller) == (10 * charge, 0, 10 * cost, Decimal(0))
    assert (
        sorted(CompletionRecord.objects.values_list("prompt_tokens", "completion_tokens", "cost"))
        == [(PROMPT_TOKENS, FIRST_CHUNK_TOKENS, cost)] * 10
    )


@pytest.mark.django_db(transaction=True)
def test_a_stream_left_before_its_first_byte_under_asgi_is_charged_its_prompt(
    caller, configuration, fake_provider
):
    fake_provider.script(Reply(text=TEXT, latency=30))  # the provider has the prompt, and answers late

    async def leave_while_waiting() -> None:
        communicator = await sent(caller.token, chat(configuration))
        while not fake_provider.requests:
            await asyncio.sleep(0.01)
        await communicator.send_input({"type": "http.disconnect"})
        await communicator.wait(timeout=30)

    asyncio.run(leave_while_waiting())

    assert usage_row(caller) == (PROMPT_TOKENS, 0, PROMPT_TOKENS * PROMPT, Decimal(0))
    record = CompletionRecord.objects.get()
    assert (record.prompt_tokens, record.completion_tokens) == (PROMPT_TOKENS, 0)


# A stream the provider breaks mid-way: the fake sends the first half of its 24 events (the role,
# eleven of the twenty chunks) and drops the connection. The provider had the prompt and sent
# "chunk01 " ... "chunk11 ": 23 tokens for the model's tokenizer.
BROKEN_STREAMED_TOKENS = 23


def assert_charged_for_a_broken_stream(caller, before: dict[str, float]) -> None:
    charge = PROMPT_TOKENS + BROKEN_STREAMED_TOKENS
    cost = PROMPT_TOKENS * PROMPT + BROKEN_STREAMED_TOKENS * COMPLETION
    assert usage_row(caller) == (charge, 0, cost, Decimal(0))
    record = CompletionRecord.objects.get(api_client=caller.client)
    assert (record.prompt_tokens, record.completion_tokens, record.cost) == (
        PROMPT_TOKENS,
        BROKEN_STREAMED_TOKENS,
        cost,
    )
    today = budget_day()
    [row] = cost_report(start=today, end=today).rows
    assert (row.calls, row.prompt_tokens, row.completion_tokens, row.cost) == (
        1, PROMPT_TOKENS, BROKEN_STREAMED_TOKENS, cost
    )  # fmt: skip
    after = broken_stream_samples()
    assert after["prompt"] - before["prompt"] == PROMPT_TOKENS
    assert after["completion"] - before["completion"] == BROKEN_STREAMED_TOKENS
    assert after["broken"] - before["broken"] == 1
    assert after["abandoned"] == before["abandoned"]  # the client did not leave


def broken_stream_samples() -> dict[str, float]:
    return {
        "prompt": sample("govctx_tokens_total", model="gpt-4o", type="prompt"),
        "completion": sample("govctx_tokens_total", model="gpt-4o", type="completion"),
        "broken": sample("govctx_broken_streams_total", model="gpt-4o", charged="estimated"),
        "abandoned": sample("govctx_abandoned_sends_total", model="gpt-4o", charged="estimated"),
    }


def test_a_stream_the_provider_breaks_midway_is_charged_its_prompt_and_what_was_delivered(
    caller, configuration, fake_provider
):
    fake_provider.script(Reply(text=TEXT, truncate_stream=True))
    before = broken_stream_samples()

    response = caller.post(CHAT, chat(configuration))

    assert response.status_code == 200
    events = b"".join(response.streaming_content).decode().split("\n\n")
    assert json.loads(events[-2].removeprefix("data: "))["error"]["failure_class"] == "connection"
    assert_charged_for_a_broken_stream(caller, before)
    assert len(fake_provider.requests) == 1  # nothing is retried once a delta went out


@pytest.mark.django_db(transaction=True)
def test_a_stream_the_provider_breaks_midway_under_asgi_is_charged_alike(
    caller, configuration, fake_provider
):
    fake_provider.script(Reply(text=TEXT, truncate_stream=True))
    before = broken_stream_samples()

    async def read_to_the_end() -> bytes:
        communicator, start = await post(caller.token, chat(configuration))
        assert start["status"] == 200
        body, more = [], True
        while more:
            message = await communicator.receive_output(timeout=30)
            body.append(message.get("body", b""))
            more = message.get("more_body", False)
        await communicator.wait(timeout=30)
        return b"".join(body)

    events = asyncio.run(read_to_the_end()).decode().split("\n\n")

    assert json.loads(events[-2].removeprefix("data: "))["error"]["failure_class"] == "connection"

    assert_charged_for_a_broken_stream(caller, before)
