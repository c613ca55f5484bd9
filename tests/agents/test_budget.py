"""The budget module on its own (agents/runtime/budget.py): a reservation ends exactly once, a reply
without usage is charged its estimate, a stream closed before its finish gives its reservation back,
and a send without a client holds nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.models import ApiClient, ClientDailyUsage
from agents.providers.values import Usage
from agents.runtime.budget import SendEstimate, budget_day, budget_reserve
from agents.runtime.plan import SendRequest, send_plan
from agents.runtime.send import GovernedSend
from agents.services import api_client_create
from governance.services import EventContext
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

ESTIMATE = SendEstimate(tokens=500, cost=Decimal("0.0040000000"))


@pytest.fixture
def client():
    issued = api_client_create(name="spender", scopes=["configurations:use"])
    ApiClient.objects.filter(pk=issued.client.pk).update(daily_token_limit=10_000)
    return issued.client


def events() -> EventContext:
    return EventContext(correlation_id="budget-test", api_client="spender")


def row(client) -> tuple[int, int, Decimal, Decimal]:
    usage = ClientDailyUsage.objects.get(client=client, day=budget_day())
    return usage.tokens_used, usage.tokens_reserved, usage.cost_used, usage.cost_reserved


def test_a_reservation_ends_once_whatever_ends_it_again(client, fake_provider):
    model = fake_configuration(fake_provider, model_input_price_per_million=Decimal(1)).model
    reservation = budget_reserve(client_id=client.pk, estimate=ESTIMATE, events=events(), zone=None)
    assert row(client) == (0, 500, Decimal(0), ESTIMATE.cost)

    reservation.settle(served=model, usage=Usage.reported(100, 0, 20))
    reservation.settle(served=model, usage=Usage.reported(100, 0, 20))
    reservation.release()

    assert row(client) == (120, 0, Decimal("0.0001"), Decimal(0))


def test_a_reply_without_usage_is_charged_its_estimate(client, fake_provider):
    model = fake_configuration(fake_provider).model
    with budget_reserve(client_id=client.pk, estimate=ESTIMATE, events=events(), zone=None) as reservation:
        reservation.settle(served=model, usage=Usage.unavailable())

    assert row(client) == (500, 0, ESTIMATE.cost, Decimal(0))


def test_a_send_without_a_client_holds_nothing():
    reservation = budget_reserve(client_id=None, estimate=ESTIMATE, events=events(), zone=None)
    reservation.release()
    assert not ClientDailyUsage.objects.exists()


def test_a_stream_closed_before_its_finish_gives_its_reservation_back(client, fake_provider):
    configuration = fake_configuration(fake_provider)
    fake_provider.script(Reply(text="A long answer that nobody reads to the end.", prompt_tokens=90))
    plan = send_plan(
        configuration=configuration,
        request=SendRequest(task_input="Go.", input_data_class=DataClass.PUBLIC_CONTENT),
    )

    outcome = GovernedSend(plan, events(), client_id=client.pk, max_tokens=100).stream()
    assert outcome.stream is not None
    _, reserved, _, _ = row(client)
    assert reserved == outcome.fitted.breakdown.estimated + 100
    next(outcome.stream)
    outcome.stream.close()

    assert row(client) == (0, 0, Decimal(0), Decimal(0))
