"""The statements every request makes before its provider call, as ordinary ORM calls: the client's
configuration key in one statement, and the budget's reserve and settle updates (``filter(...).update``
with ``F()``, agents/models/usage.py) moving a day exactly."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import ClientDailyUsage
from catalog.selectors import configuration_key_for_client
from catalog.services import api_client_create
from tests.agents.runs import fake_configuration
from tests.factories import configuration_make

pytestmark = pytest.mark.django_db


def test_the_configuration_key_is_one_statement_answering_as_the_orm_does(fake_provider):
    first = fake_configuration(fake_provider)
    second = configuration_make(model=first.model)
    both = api_client_create(name="both", scopes=["configurations:use"], configurations=[first, second])
    one = api_client_create(name="one", scopes=["configurations:use"], configurations=[second])
    for client in (both.client, one.client):
        for identifier in (first.identifier, second.identifier, "unknown"):
            expected = client.configurations.filter(identifier=identifier).first()
            key = configuration_key_for_client(api_client=client, identifier=identifier)
            assert (key and key.configuration_id) == (expected and expected.pk), (client.name, identifier)
    with CaptureQueriesContext(connection) as queries:
        configuration_key_for_client(api_client=one.client, identifier=second.identifier)
    assert len(queries) == 1


def moves_a_day_exactly() -> None:
    """Each budget statement (``ClientDailyUsage.objects.reserve`` and ``settle``, every
    combination of limits) against the figures expected by hand. Run on SQLite here
    and on PostgreSQL by the services suite (tests/services/test_budget_race.py)."""
    client = api_client_create(name="day", scopes=["configurations:use"]).client
    day = datetime.date(2026, 3, 4)
    ClientDailyUsage.objects.create(
        client=client,
        day=day,
        tokens_used=100,
        tokens_reserved=50,
        cost_used=Decimal("1"),
        cost_reserved=Decimal("0.5"),
    )
    usage = ClientDailyUsage.objects

    def figures() -> tuple[int, int, Decimal, Decimal]:
        row = usage.get(client=client, day=day)
        return row.tokens_used, row.tokens_reserved, row.cost_used, row.cost_reserved

    def reserve(token_room: int | None, cost_room: str | None) -> bool:
        return usage.reserve(
            client_id=client.pk,
            day=day,
            tokens=10,
            cost=Decimal("0.25"),
            token_room=token_room,
            cost_room=None if cost_room is None else Decimal(cost_room),
        )

    assert reserve(None, None) is True
    assert figures() == (100, 60, Decimal("1"), Decimal("0.75"))
    assert reserve(159, None) is False  # 100 + 60 > 159
    assert reserve(None, "1.74") is False  # 1 + 0.75 > 1.74
    assert reserve(160, "1.74") is False and reserve(159, "1.75") is False  # each limit binds
    assert figures() == (100, 60, Decimal("1"), Decimal("0.75"))
    assert reserve(160, None) is True
    assert reserve(None, "2.00") is True
    assert reserve(180, "2.25") is True
    assert figures() == (100, 90, Decimal("1"), Decimal("1.5"))
    before = usage.get(client=client, day=day).updated_at
    settled = usage.settle(
        client_id=client.pk,
        day=day,
        reserved_tokens=10,
        reserved_cost=Decimal("0.25"),
        tokens=7,
        cost=Decimal("0.125"),
    )
    assert settled == 1
    assert figures() == (107, 80, Decimal("1.125"), Decimal("1.25"))
    assert usage.get(client=client, day=day).updated_at > before
    other_day = day + datetime.timedelta(days=1)
    assert (
        usage.reserve(
            client_id=client.pk, day=other_day, tokens=1, cost=Decimal(0), token_room=None, cost_room=None
        )
        is False
    )
    assert not usage.filter(day=other_day).exists()


def test_the_budget_statements_move_a_day_exactly():
    moves_a_day_exactly()
