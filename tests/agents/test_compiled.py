"""``Compiled`` (agents/models/sql.py): a read compiled once answers, for each set of values, what the
ORM answers for the same read, and refuses markers that do not stand exactly once."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.authentication import _CLIENT_BY_TOKEN
from agents.models import ApiClient
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
