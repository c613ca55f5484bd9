"""Budgets under concurrency on PostgreSQL (agents/runtime/budget.py): concurrent sends, each on its own
thread and database connection, released together at the limit. The conditional ``UPDATE`` lets
exactly as many through as the limit holds; the rest are refused with nothing sent, and the day's
totals are the reported usage exactly (or, for streams their clients abandon, what was spent)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection, connections
from django.test import Client

from agents.errors import BudgetExhausted
from agents.models import ClientDailyUsage
from agents.runtime.budget import SendEstimate, budget_day, budget_reserve
from catalog.models import ApiClient
from gateway.models import CompletionRecord
from governance.models import GovernanceEvent
from governance.services import EventContext
from tests.agents.runs import fake_configuration
from tests.agents.test_budget_statements import moves_a_day_exactly
from tests.fakes.provider_server import Reply

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

THREADS = 8
ESTIMATE = SendEstimate(tokens=1_000, cost=Decimal("0.0100000000"))


def together(count: int, work: Callable[[int], Any]) -> list[Any]:
    """``work(i)`` on ``count`` threads released at once, each on its own connection; the results."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def target(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = work(index)
        except Exception as error:  # handed back to the test, which asserts on it
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=target, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_the_services_database_is_postgresql():
    assert connection.vendor == "postgresql"


def test_the_budget_statements_move_a_day_exactly_on_postgresql():
    moves_a_day_exactly()


@pytest.mark.parametrize("fits", [1, 3])
def test_concurrent_reservations_never_hold_more_than_the_limit(make_client, fits):
    client = make_client(tokens=ESTIMATE.tokens * fits + ESTIMATE.tokens - 1)
    connection.close()

    def reserve(index: int) -> Any:
        events = EventContext(correlation_id=f"race-{index}", api_client=client.name)
        return budget_reserve(client_id=client.pk, estimate=ESTIMATE, events=events, zone=None)

    results = together(THREADS, reserve)

    refused = [r for r in results if isinstance(r, BudgetExhausted)]
    held = [r for r in results if not isinstance(r, Exception)]
    assert (len(held), len(refused)) == (fits, THREADS - fits), results
    row = ClientDailyUsage.objects.get(client=client, day=budget_day())
    assert (row.tokens_reserved, row.cost_reserved) == (ESTIMATE.tokens * fits, ESTIMATE.cost * fits)
    assert GovernanceEvent.objects.filter(decision="budget_exhausted").count() == THREADS - fits
    for reservation in held:
        reservation.release()
        reservation.release()  # settled once: a second end changes nothing
    row.refresh_from_db()
    assert (row.tokens_used, row.tokens_reserved, row.cost_used, row.cost_reserved) == (0, 0, 0, 0)


def test_concurrent_completions_at_the_limit_send_one_and_total_exactly(make_client, fake_provider):
    configuration = fake_configuration(
        fake_provider,
        model_input_price_per_million=Decimal("2.50"),
        model_output_price_per_million=Decimal("10"),
    )
    client, token = make_client(tokens=None, configuration=configuration, with_token=True)
    body = {"configuration": configuration.identifier, "input": "Summarise the release.", "max_tokens": 200}
    http = Client()
    headers = {"Authorization": f"Bearer {token}"}
    preview = http.post("/api/v1/context/preview", body, content_type="application/json", headers=headers)
    breakdown = preview.json()["breakdown"]
    estimate = breakdown["estimated"] + breakdown["reserve"]
    # Room for exactly one send's estimate. Each reply reports 40 more prompt tokens than we estimated
    # and a whole reply limit, so the one send that goes out ends 40 tokens past the limit: the
    # over-spend is that one send's estimation error, never a second send.
    ApiClient.objects.filter(pk=client.pk).update(daily_token_limit=estimate)
    reported_prompt = breakdown["estimated"] + 40
    fake_provider.script(
        *[Reply(text="Shipped.", prompt_tokens=reported_prompt, completion_tokens=200, latency=0.3)] * THREADS
    )
    connection.close()

    def send(index: int) -> int:
        response = Client().post(
            "/api/v1/completions", body, content_type="application/json", headers=headers
        )
        return response.status_code

    statuses = together(4, send)

    assert sorted(statuses) == [200, 429, 429, 429], statuses
    assert len(fake_provider.requests) == 1
    row = ClientDailyUsage.objects.get(client=client, day=budget_day())
    cost = (reported_prompt * Decimal("2.50") + 200 * Decimal(10)) / 1_000_000
    assert (row.tokens_used, row.tokens_reserved, row.cost_used, row.cost_reserved) == (
        estimate + 40,
        0,
        cost,
        0,
    )
    assert GovernanceEvent.objects.filter(decision="budget_exhausted").count() == 3


def test_concurrent_abandoned_streams_at_the_limit_stay_within_it(make_client, fake_provider):
    configuration = fake_configuration(fake_provider)
    client, token = make_client(tokens=None, configuration=configuration, with_token=True)
    # As tests/gateway/test_abandoned_streams.py: the prompt estimate is 18 tokens. The stream redaction
    # hands "chunk01 " on once the second chunk has arrived, so two chunks had streamed: 5 tokens.
    reservation = 18 + 1900
    ApiClient.objects.filter(pk=client.pk).update(daily_token_limit=3 * reservation - 1)
    text = "".join(f"chunk{n:02d} " for n in range(1, 21))
    fake_provider.script(*[Reply(text=text, latency=0.5)] * 4)  # every reservation is taken in flight
    messages = [{"role": "user", "content": "Describe our tone."}]
    body = {"model": configuration.identifier, "messages": messages, "stream": True, "max_tokens": 1900}
    connection.close()

    def leave_after_the_first_chunk(index: int) -> int:
        response = Client().post(
            "/api/openai/v1/chat/completions",
            body,
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )
        if response.status_code == 200:
            events = iter(response.streaming_content)
            while b"chunk01" not in next(events):
                pass
            response.close()  # the client goes away before the rest and the usage
        return response.status_code

    statuses = together(4, leave_after_the_first_chunk)

    assert sorted(statuses) == [200, 200, 429, 429], statuses
    assert len(fake_provider.requests) == 2
    row = ClientDailyUsage.objects.get(client=client, day=budget_day())
    assert (row.tokens_used, row.tokens_reserved) == (2 * (18 + 5), 0)
    assert row.tokens_used <= 3 * reservation - 1
    assert CompletionRecord.objects.filter(api_client=client).count() == 2


@pytest.fixture
def make_client():
    from catalog.services import api_client_create

    counter = iter(range(1000))

    def make(*, tokens: int | None, configuration=None, with_token: bool = False):
        issued = api_client_create(
            name=f"racer-{next(counter)}",
            scopes=["configurations:use"],
            configurations=[configuration] if configuration else [],
        )
        ApiClient.objects.filter(pk=issued.client.pk).update(daily_token_limit=tokens)
        return (issued.client, issued.token) if with_token else issued.client

    return make
