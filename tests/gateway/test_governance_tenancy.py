"""Governance reads are scoped to the client: events of its own requests, events of no client's request
on the configurations it may use, readiness rows of those configurations only; never another client's
name, request or configuration."""

from __future__ import annotations

import pytest

from governance.models import GovernanceEvent
from governance.services import EventContext, governance_event_record
from governance.vocabulary import DataClass, Decision, Enforcement, EventOutcome, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import configuration_make, snippet_make

pytestmark = pytest.mark.django_db

EVENTS = "/api/v1/governance/events"
READINESS = "/api/v1/governance/readiness"


def _event(correlation_id: str, *, configuration: str = "", api_client: str = "") -> None:
    governance_event_record(
        context=EventContext(
            correlation_id=correlation_id, configuration=configuration, api_client=api_client
        ),
        decision=Decision.CONTEXT_BLOCKED,
        outcome=EventOutcome.ENFORCED,
        zone=TrustZone.EXTERNAL_EU,
    )


def _ids(caller, **params) -> list[str]:
    response = caller.get(EVENTS, params)
    assert response.status_code == 200, response.content
    return sorted(item["correlation_id"] for item in response.json()["results"])


@pytest.fixture
def two_clients(make_caller):
    """``first`` may use ``shared``; ``second`` may use ``shared`` and ``own``."""
    shared = configuration_make(identifier="shared")
    own = configuration_make(identifier="own")
    first = make_caller("governance:read", configurations=(shared,))
    second = make_caller("governance:read", configurations=(shared, own))
    return first, second


def test_a_client_lists_its_own_requests_and_clientless_events_of_its_configurations(two_clients):
    first, second = two_clients
    _event("first-on-shared", configuration="shared", api_client=first.client.name)
    _event("second-on-shared", configuration="shared", api_client=second.client.name)
    _event("second-on-own", configuration="own", api_client=second.client.name)
    _event("command-on-shared", configuration="shared")
    _event("command-on-own", configuration="own")
    _event("editor-save")  # no configuration, no client: an editor-side event

    assert _ids(first) == ["command-on-shared", "first-on-shared"]
    assert _ids(second) == ["command-on-own", "command-on-shared", "second-on-own", "second-on-shared"]
    assert _ids(first, configuration="own") == []
    assert _ids(second, configuration="shared") == ["command-on-shared", "second-on-shared"]
    assert GovernanceEvent.objects.count() == 6


def test_no_other_client_name_appears_in_the_event_list(two_clients):
    first, second = two_clients
    _event("first-on-shared", configuration="shared", api_client=first.client.name)
    _event("second-on-shared", configuration="shared", api_client=second.client.name)
    body = first.get(EVENTS).content.decode()
    assert second.client.name not in body
    assert [item["api_client"] for item in first.get(EVENTS).json()["results"]] == [first.client.name]


def test_a_refused_completion_of_another_client_on_a_shared_configuration_stays_hidden(
    fake_provider, make_caller
):
    snippet_make(
        identifier="runbook",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    shared = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    reader = make_caller("governance:read", configurations=(shared,))
    other = make_caller("configurations:use", configurations=(shared,))

    refused = other.post("/api/v1/completions", {"configuration": shared.identifier, "input": "Deploy."})

    assert refused.status_code == 403
    assert fake_provider.requests == []
    assert list(GovernanceEvent.objects.values_list("api_client", flat=True)) == [other.client.name]
    response = reader.get(EVENTS)
    assert response.json()["results"] == []
    assert other.client.name not in response.content.decode()


def test_a_client_with_no_configurations_lists_only_its_own_requests(make_caller):
    configuration_make(identifier="shared")
    lonely = make_caller("governance:read")
    _event("mine", api_client=lonely.client.name)
    _event("command-on-shared", configuration="shared")
    assert _ids(lonely) == ["mine"]


def test_readiness_lists_only_the_clients_configurations(make_caller):
    snippet_make(
        identifier="legacy",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
        enforcement=Enforcement.OBSERVE,
    )
    internal = configuration_make(identifier="internal", zone=TrustZone.PRIVATE_HOSTED, snippet_tags=["ops"])
    configuration_make(identifier="elsewhere", zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    caller = make_caller("governance:read", configurations=(internal,))

    response = caller.get(READINESS)

    assert response.status_code == 200
    report = response.json()
    assert [(row["identifier"], row["configuration"], row["would_be"]) for row in report["rows"]] == [
        ("legacy", "internal", "allowed")
    ]
    assert report["summary"] == {"observe_rows": 1, "would_refuse": 0, "personal_data_findings": 0}
    assert "elsewhere" not in response.content.decode()


def test_readiness_of_a_client_without_configurations_is_empty(make_caller):
    configuration_make(identifier="legacy", system_prompt_enforcement=Enforcement.OBSERVE)
    response = make_caller("governance:read").get(READINESS)
    assert response.json() == {
        "rows": [],
        "summary": {"observe_rows": 0, "would_refuse": 0, "personal_data_findings": 0},
        "declassified_answers": [],
        "personal_data": [],
    }
