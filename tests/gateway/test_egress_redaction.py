"""Through the API: caller context names are redacted and refused items are named by position.

Canaries are drawn at test time (tests/canaries.py); a name holding one is the issue's reproduction:
before, it was sent verbatim as the context item's label, shown in the preview with ``redactions: {}``,
and written into the refusal's event, error and run row.
"""

from __future__ import annotations

import pytest

from agents.models import AgentRun
from governance.models import GovernanceEvent
from governance.vocabulary import TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.fakes.provider_server import Reply
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

CANARIES = {canary.kind: canary for canary in generate_canaries(seed=20261201)}
GITHUB = CANARIES["github_classic_pat"]
STRIPE = CANARIES["stripe_live_secret_key"]
AWS = CANARIES["aws_access_key_id"]


def leaked(text: str, *canaries) -> list[str]:
    return [c.kind for c in canaries for fragment in c.fragments() if fragment in text]


def body(configuration, **fields):
    return {"configuration": configuration.identifier, "input": "Summarise the launch.", **fields}


def test_a_context_item_name_holding_a_secret_is_redacted_on_the_wire(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU)
    caller = make_caller("configurations:use", configurations=(configuration,))
    context = [
        {"name": f"notes {GITHUB.value}", "text": "We launch on Monday.", "data_class": "public_content"}
    ]
    fake_provider.script(Reply(text="Done."))

    response = caller.post("/api/v1/completions", body(configuration, context=context))

    assert response.status_code == 200, response.content
    wire = fake_provider.wire_text()
    assert leaked(wire, GITHUB) == []
    assert 'Context item "notes [REDACTED:github_token]":\nWe launch on Monday.' in wire
    assert GovernanceEvent.objects.filter(decision="secret_redacted", reason="1 x github_token").count() == 1


def test_the_preview_redacts_a_context_item_name_and_counts_it(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU)
    caller = make_caller("configurations:use", configurations=(configuration,))
    context = [{"name": STRIPE.value, "text": "Pricing notes.", "data_class": "public_content"}]

    response = caller.post("/api/v1/context/preview", body(configuration, context=context))

    assert response.status_code == 200
    assert leaked(response.content.decode(), STRIPE) == []
    preview = response.json()
    assert preview["redactions"] == {"stripe_key": 1}
    assert [s["identifier"] for s in preview["decision"]["sources"] if s["kind"] == "caller_context"] == [
        "context[0]"
    ]
    assert fake_provider.requests == []


def test_a_refused_item_is_named_by_position_in_the_403_and_its_event(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU)
    caller = make_caller("configurations:use", "governance:read", configurations=(configuration,))
    context = [
        {"name": "brief", "text": "Launch notes.", "data_class": "public_content"},
        {"name": f"vault {AWS.value}", "text": "trace", "data_class": "secret_adjacent"},
    ]

    response = caller.post("/api/v1/completions", body(configuration, context=context))

    error = assert_error(response, 403, "context_refused")
    assert error["message"].startswith("caller_context 'context[1]' may not be sent to zone external_eu")
    assert leaked(response.content.decode(), AWS) == []
    event = GovernanceEvent.objects.get(decision="context_blocked")
    assert (event.source_kind, event.source_identifier, event.data_class) == (
        "caller_context",
        "context[1]",
        "secret_adjacent",
    )
    listed = caller.get("/api/v1/governance/events")
    assert "vault" not in listed.content.decode() and leaked(listed.content.decode(), AWS) == []
    assert fake_provider.requests == []
    assert AgentRun.objects.count() == 0
