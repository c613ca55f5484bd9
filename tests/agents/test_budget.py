"""The budget module on its own (agents/runtime/budget.py): a reservation ends exactly once, a reply
without usage is charged its estimate, a stream closed before its finish is charged what was spent
(never more than its reservation), and a send without a client holds nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.models import ClientDailyUsage
from agents.runtime.budget import SendEstimate, budget_day, budget_reserve
from agents.runtime.plan import send_plan
from agents.runtime.request import SendRequest
from agents.runtime.send import GovernedCall
from agents.runtime.streaming import GovernedStream
from agents.runtime.targets import TargetFits
from catalog.models import ApiClient
from catalog.services import api_client_create
from governance.services import EventContext
from governance.vocabulary import DataClass, Provenance
from providers.streams import TextDelta, UsageDelta
from providers.values import Usage
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


def go(fake_provider):
    return send_plan(
        configuration=fake_configuration(fake_provider),
        request=SendRequest(task_input="Go.", input_data_class=DataClass.PUBLIC_CONTENT),
    )


def test_a_stream_closed_before_its_finish_is_charged_its_prompt_and_what_streamed(client, fake_provider):
    fake_provider.script(Reply(text="A long answer that nobody reads to the end.", prompt_tokens=90))

    plan = go(fake_provider)
    stream = GovernedCall(plan, events(), client_id=client.pk, max_tokens=100).stream()
    assert isinstance(stream, GovernedStream)
    prompt = TargetFits(plan, events(), 100).fit(0).fitted.breakdown.estimated
    assert row(client)[1] == prompt + 100
    # The provider's first chunk "A long a" (3 tokens) went in; the redactor held its last word and
    # the space before it back (a spelt-out token could still follow).
    assert next(stream) == TextDelta("A ")
    stream.close()

    assert row(client)[:2] == (prompt + 3, 0)


def test_a_stream_closed_after_its_usage_is_charged_the_reported_usage(client, fake_provider):
    fake_provider.script(Reply(text="Short.", prompt_tokens=90, completion_tokens=7))

    stream = GovernedCall(go(fake_provider), events(), client_id=client.pk, max_tokens=100).stream()
    assert isinstance(stream, GovernedStream)
    # The usage passes at once; the redactor still holds the text, and the finish is not read.
    assert next(stream) == UsageDelta(Usage.reported(90, 0, 7))
    stream.close()

    assert row(client)[:2] == (97, 0)


def test_an_abandoned_estimate_never_exceeds_its_reservation(client, fake_provider):
    model = fake_configuration(fake_provider, model_input_price_per_million=Decimal(1)).model
    reservation = budget_reserve(client_id=client.pk, estimate=ESTIMATE, events=events(), zone=None)
    charged = []
    reservation.on_abandoned = lambda served, usage: charged.append(usage)

    reservation.abandon(served=model, usage=Usage(450, None, 900, Provenance.ESTIMATED))
    reservation.abandon(served=model, usage=Usage(450, None, 900, Provenance.ESTIMATED))

    assert row(client) == (500, 0, Decimal("0.00045"), Decimal(0))
    assert charged == [Usage(450, None, 50, Provenance.ESTIMATED)]
