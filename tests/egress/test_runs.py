"""Egress of agent runs: every step's wire, tool outputs, the run's detail and event stream, its rows."""

from __future__ import annotations

import pytest
from hypothesis import given

from agents.models import AgentRun
from tests.egress import oracle
from tests.egress.build import request_body
from tests.egress.harness import Example
from tests.egress.profiles import egress_settings
from tests.egress.world import worlds

pytestmark = pytest.mark.django_db

RUNS = "/api/v1/runs"
ENDINGS = {
    "refused": ("policy_denied", "context_refused"),
    "inactive": (None, "model_inactive"),
    "failed": (None, None),
}


@egress_settings("runs")
@given(world=worlds())
def test_a_run_sends_stores_and_streams_only_what_may_leave(egress, world):
    with egress.example(world) as example:
        example.script()
        with example.tasks():
            response = example.api("POST", RUNS, request_body(example.built), label="run create")
        if _created(world, response):
            run = AgentRun.objects.get()
            outcome = _check_ending(world, run)
            example.check_wire(expect_send=outcome in ("served", "failed"))
            _check_client_reads(example, str(run.id))
        else:
            if "runs:create" in world.client_scopes:
                example.check_refused_skills_alike("POST", RUNS, response)
            assert AgentRun.objects.count() == 0
            example.check_wire(expect_send=False)
        example.check_everything()


def _created(world, response) -> bool:
    if "runs:create" not in world.client_scopes:
        assert (response.status_code, response.json()["code"]) == (403, "permission_denied")
        return False
    if not oracle.request_skills_valid(world):
        assert response.status_code == 400, response.content
        return False
    assert response.status_code == 202, response.content
    return True


def _check_ending(world, run: AgentRun) -> str:
    """How the run's first step ended, as the oracle expects it."""
    outcomes = oracle.send_outcomes(world)
    if run.status == "completed" or run.next_step_index > 0:
        got = "served"
    else:
        got = next(
            (
                outcome
                for outcome, (reason, code) in ENDINGS.items()
                if (reason is None or run.termination_reason == reason)
                and (code is None or run.error_code == code)
            ),
            None,
        )
    assert got in outcomes, (outcomes, run.status, run.termination_reason, run.error_code)
    return got


def _check_client_reads(example: Example, run_id: str) -> None:
    """The run's detail and event stream show the client no part above its zone; the event log shows
    no caller free text."""
    world = example.world
    visible = oracle.client_may_see(world) | oracle.answer_may_hold(world)
    if "runs:read" in world.client_scopes:
        for label, path, query in (
            ("run detail", f"{RUNS}/{run_id}", None),
            ("run events", f"{RUNS}/{run_id}/events", {"timeout": 0}),
        ):
            response = example.api("GET", path, query, label=label)
            assert response.status_code == 200
            beyond = response.received.markers() - visible
            assert not beyond, f"{label} shows parts beyond the client's zone {world.client_zone}: {beyond}"
    if "governance:read" in world.client_scopes:
        response = example.api(
            "GET", "/api/v1/governance/events", {"page_size": 100}, label="governance events"
        )
        assert response.status_code == 200
        found = response.received.markers(oracle.caller_markers(world))
        assert not found, f"the event log shows caller free text: {found}"
