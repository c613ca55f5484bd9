"""``Compiled`` and ``CompiledUpdate`` (agents/models/sql.py): a statement compiled once answers, for
each set of values, what the ORM answers for the same statement, and refuses markers that do not stand
exactly once."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.authentication import _CLIENT_BY_TOKEN
from agents.models import ApiClient, ClientDailyUsage
from agents.models.sql import Compiled
from agents.selectors import configuration_key_for_client
from agents.services import api_client_create
from tests.agents.runs import fake_configuration
from tests.factories import configuration_make

pytestmark = pytest.mark.django_db


def test_a_compiled_read_answers_each_value_as_the_orm_does(fake_provider):
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


def test_a_compiled_instance_is_the_row_as_the_orm_reads_it(fake_provider):
    issued = api_client_create(name="reader", scopes=["configurations:use", "runs:read"])
    read = _CLIENT_BY_TOKEN.first(ApiClient, digest=issued.client.token_digest)
    expected = ApiClient.objects.get(pk=issued.client.pk)
    assert read is not None and not read._state.adding and read._state.db == "default"
    values = {f.attname: getattr(read, f.attname) for f in ApiClient._meta.concrete_fields}
    assert values == {f.attname: getattr(expected, f.attname) for f in ApiClient._meta.concrete_fields}
    assert _CLIENT_BY_TOKEN.first(ApiClient, digest="0" * 64) is None


@pytest.mark.parametrize(
    "build",
    [
        lambda name: ApiClient.objects.filter(name=name, pk__gte=name, id__lte=name),  # three times
        lambda name: ApiClient.objects.filter(name="fixed"),  # not at all
    ],
)
def test_a_marker_that_does_not_stand_once_is_refused(build):
    # Either way a value would go to the wrong place, or to none.
    with pytest.raises(ValueError, match="the marker of 'name' stands"):
        Compiled(build, name=7).rows(name=8)


def moves_a_day_as_the_orm_would() -> None:
    """Each compiled budget statement (``ClientDailyUsage.objects.reserve`` and ``settle``, every
    combination of limits) against the figures the ORM's own update would leave. Run on SQLite here
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


def test_the_compiled_budget_statements_move_a_day_as_the_orm_would():
    moves_a_day_as_the_orm_would()
