"""Egress of the completions API: the provider wire, the answer, the events, the logs."""

from __future__ import annotations

import pytest
from hypothesis import given

from governance.models import GovernanceEvent
from tests.egress import oracle
from tests.egress.build import request_body
from tests.egress.harness import Example
from tests.egress.profiles import egress_settings
from tests.egress.world import worlds

pytestmark = pytest.mark.django_db

COMPLETIONS = "/api/v1/completions"
STATUS = {
    "refused": (403, "context_refused"),
    "inactive": (409, "model_inactive"),
    "failed": (502, "provider_error"),
}


@egress_settings("completions")
@given(world=worlds(max_replies=1))
def test_a_completion_sends_only_what_the_zone_admits_and_answers_no_secret(egress, world):
    with egress.example(world) as example:
        example.script()
        response = example.api("POST", COMPLETIONS, request_body(example.built), label="completion")
        outcome = _check_status(world, response)
        if outcome == "invalid":
            example.check_refused_skills_alike("POST", COMPLETIONS, response)
        example.check_wire(expect_send=outcome in ("served", "failed"))
        beyond = response.received.markers() - oracle.answer_may_hold(world)
        assert not beyond, f"the completion's answer holds parts above the client's zone: {beyond}"
        _check_declassification_recorded(world)
        if outcome == "refused":
            assert GovernanceEvent.objects.filter(decision="context_blocked").exists()
        _check_event_reads(example)
        example.check_everything()


def _check_status(world, response) -> str | None:
    if "configurations:use" not in world.client_scopes:
        assert (response.status_code, response.json()["code"]) == (403, "permission_denied")
        return None
    if not oracle.request_skills_valid(world):
        assert response.status_code == 400, response.content
        return "invalid"
    outcomes = oracle.send_outcomes(world)
    got = "served" if response.status_code == 200 else None
    for outcome, (status, code) in STATUS.items():
        if (response.status_code, response.json().get("code")) == (status, code):
            got = outcome
    assert got in outcomes, (outcomes, response.status_code, response.content)
    return got


def _check_event_reads(example: Example) -> None:
    """The client's view of the governance events: no caller free text (the shared check covers canaries)."""
    if "governance:read" not in example.world.client_scopes:
        return
    response = example.api("GET", "/api/v1/governance/events", {"page_size": 100}, label="governance events")
    assert response.status_code == 200
    found = response.received.markers(oracle.caller_markers(example.world))
    assert not found, f"the event log shows caller free text: {found}"


def _check_declassification_recorded(world) -> None:
    """A declassification that lets an answer through is a recorded event."""
    if world.declassified_to is not None:
        event = GovernanceEvent.objects.get(decision="reclassified")
        assert event.zone == world.declassified_to
