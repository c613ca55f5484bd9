"""The governance API: the event log (filtered, never content) and the readiness report. What each
client may see of them is in test_governance_tenancy.py."""

from __future__ import annotations

import pytest

from governance.services import EventContext, governance_event_record
from governance.vocabulary import DataClass, Decision, Enforcement, EventOutcome, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import configuration_make, snippet_make
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

EVENTS = "/api/v1/governance/events"


def _event(**context):
    governance_event_record(
        context=EventContext(correlation_id=context.pop("correlation_id", "req-1"), **context),
        decision=Decision.CONTEXT_BLOCKED,
        outcome=EventOutcome.ENFORCED,
        zone=TrustZone.EXTERNAL_EU,
    )


def test_lists_events_filtered_by_run_and_configuration(make_caller):
    _event(correlation_id="r1", run="r1", configuration="alpha")
    _event(correlation_id="r2", run="r2", configuration="beta")
    governance_event_record(
        context=EventContext(correlation_id="r3", configuration="alpha"),
        decision=Decision.SECRET_REDACTED,
        outcome=EventOutcome.ENFORCED,
        reason="1 x github_token",
    )
    alpha, beta = configuration_make(identifier="alpha"), configuration_make(identifier="beta")
    caller = make_caller("governance:read", configurations=(alpha, beta))

    def ids(**params):
        response = caller.get(EVENTS, params)
        assert response.status_code == 200
        return sorted(item["correlation_id"] for item in response.json()["results"])

    assert ids() == ["r1", "r2", "r3"]
    assert ids(run="r1") == ["r1"]
    assert ids(configuration="alpha") == ["r1", "r3"]
    assert ids(decision="secret_redacted") == ["r3"]
    assert ids(outcome="observed") == []


def test_refused_completion_events_carry_names_never_content(fake_provider, make_caller):
    marker = "Confidential runbook line 7"
    snippet_make(
        identifier="runbook",
        text=marker,
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    caller = make_caller("configurations:use", "governance:read", configurations=(configuration,))
    caller.post("/api/v1/completions", {"configuration": configuration.identifier, "input": "Deploy."})
    response = caller.get(EVENTS, {"source_kind": "snippet"})
    [event] = response.json()["results"]
    assert (event["source_identifier"], event["outcome"], event["api_client"]) == (
        "runbook",
        "enforced",
        caller.client.name,
    )
    assert marker not in response.content.decode()
    assert fake_provider.requests == []


def test_invalid_event_filter_is_400(make_caller):
    error = assert_error(
        make_caller("governance:read").get(EVENTS, {"decision": "nope"}), 400, "invalid_input"
    )
    assert error["extra"]["codes"] == {"decision": ["invalid_choice"]}


@pytest.mark.parametrize("path", [EVENTS, "/api/v1/governance/readiness"])
def test_governance_needs_the_read_scope(make_caller, path):
    error = assert_error(make_caller("runs:read").get(path), 403, "permission_denied")
    assert error["extra"] == {"required_scope": "governance:read"}


def test_readiness_reports_observed_rows_that_would_be_refused(fake_provider, make_caller):
    snippet_make(
        identifier="legacy",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
        enforcement=Enforcement.OBSERVE,
    )
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    caller = make_caller("governance:read", configurations=(configuration,))
    response = caller.get("/api/v1/governance/readiness")
    assert response.status_code == 200
    report = response.json()
    assert report["summary"] == {"observe_rows": 1, "would_refuse": 1, "personal_data_findings": 0}
    row = report["rows"][0]
    assert (row["identifier"], row["configuration"], row["would_be"]) == (
        "legacy",
        configuration.identifier,
        "refused",
    )
