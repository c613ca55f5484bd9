"""Tool approvals over the API: the pending call in run detail and run events (arguments redacted and
withheld from a lower-zone reader), a decision with ``runs:approve``, and every refusal storing nothing."""

from __future__ import annotations

import json

import pytest

from agents.models import AgentRun, ToolApproval, ToolCallRecord
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.fakes.provider_server import Reply
from tests.gateway.conftest import assert_error
from tests.gateway.test_runs_api import events_of

pytestmark = pytest.mark.django_db

RUNS = "/api/v1/runs"


@pytest.fixture
def secret():
    return next(c for c in generate_canaries(seed=20261203) if c.kind == "github_classic_pat").value


@pytest.fixture
def setup(fake_provider, make_caller, secret, django_capture_on_commit_callbacks):
    """A local client's run, paused on a ``notify_editors`` call whose arguments hold a secret; the
    configuration's prompt is internal, so the turn that asked is labelled above external zones."""
    fake_provider.script(
        Reply.tools(("c1", "notify_editors", {"message": f"Rotate {secret} today."})), Reply(text="Sent.")
    )
    configuration = fake_configuration(
        fake_provider,
        allowed_tool_groups=["editing"],
        system_prompt_data_class=DataClass.INTERNAL_CONFIGURATION,
        system_prompt_ceiling=TrustZone.EXTERNAL_EU,
    )
    caller = make_caller(
        "runs:create",
        "runs:read",
        "runs:approve",
        configurations=(configuration,),
        trust_zone=TrustZone.LOCAL,
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = caller.post(
            RUNS, {"configuration": configuration.identifier, "input": "Tell the editors."}
        )
    run = AgentRun.objects.get(id=response.json()["id"])
    assert run.status == "awaiting_approval"
    return run, caller, ToolApproval.objects.get()


def decide_url(run: AgentRun, approval_id: object) -> str:
    return f"{RUNS}/{run.id}/approvals/{approval_id}"


def test_run_detail_and_events_show_the_pending_call_redacted(setup, secret):
    run, caller, approval = setup
    detail = caller.get(f"{RUNS}/{run.id}").json()
    assert detail["status"] == "awaiting_approval"
    [shown] = detail["approvals"]
    assert shown["id"] == str(approval.id)
    assert (shown["tool_call_id"], shown["tool_name"], shown["decision"], shown["withheld"]) == (
        "c1",
        "notify_editors",
        "pending",
        False,
    )
    assert (shown["label"], shown["tool_class"]) == ("internal_configuration", "editor_content")
    assert secret not in json.dumps(detail)
    assert shown["arguments"] == approval.arguments
    assert json.loads(shown["arguments"])["message"].startswith("Rotate [REDACTED")
    assert caller.get(f"{RUNS}/{run.id}/approvals").json() == [shown]

    stream = events_of(caller.get(f"{RUNS}/{run.id}/events", {"timeout": 0}))
    assert [(event_id, name) for event_id, name, _ in stream] == [
        (None, "tool_call"),
        ("0", "step"),
        (None, "approval"),
        (None, "timeout"),
    ]
    assert secret not in json.dumps(stream)
    assert json.loads(stream[2][2]) == shown


def test_a_lower_zone_reader_sees_the_call_but_not_its_arguments_and_cannot_approve_it(
    setup, secret, fake_provider
):
    run, caller, approval = setup
    caller.client.trust_zone = TrustZone.EXTERNAL_GLOBAL  # the client was moved to a less trusted zone
    caller.client.save(update_fields=["trust_zone"])
    [shown] = caller.get(f"{RUNS}/{run.id}").json()["approvals"]
    assert shown["withheld"] is True and "arguments" not in shown
    [(_, _, data)] = [
        e for e in events_of(caller.get(f"{RUNS}/{run.id}/events", {"timeout": 0})) if e[1] == "approval"
    ]
    assert json.loads(data) == shown
    events = GovernanceEvent.objects.count()

    refused = caller.post(decide_url(run, approval.id), {"decision": "approve", "reason": "Looks fine."})

    assert_error(refused, 403, "approval_withheld")
    approval.refresh_from_db()
    assert approval.decision == "pending"
    assert GovernanceEvent.objects.count() == events
    assert len(fake_provider.requests) == 1


def test_a_client_with_runs_approve_approves_and_the_run_resumes(
    setup, fake_provider, django_capture_on_commit_callbacks
):
    run, caller, approval = setup
    with django_capture_on_commit_callbacks(execute=True):
        response = caller.post(decide_url(run, approval.id), {"decision": "approve", "reason": "Agreed."})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["decision"], body["decided_by"], body["reason"]) == (
        "approved",
        f"api_client:{caller.client.name}",
        "Agreed.",
    )
    run.refresh_from_db()
    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert ToolCallRecord.objects.get(run=run, call_id="c1").status == "completed"
    assert fake_provider.bodies()[1]["messages"][-1]["content"] == "The editors were notified."
    decisions = GovernanceEvent.objects.filter(run=str(run.id), decision__startswith="approval_")
    assert list(decisions.order_by("created_at", "seq").values_list("decision", "api_client")) == [
        ("approval_requested", caller.client.name),
        ("approval_granted", caller.client.name),
    ]

    again = caller.post(decide_url(run, approval.id), {"decision": "deny", "reason": "Changed my mind."})
    assert assert_error(again, 409, "approval_decided")["extra"] == {"decision": "approved"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"decision": "maybe", "reason": "Hm."}, "decision"),
        ({"decision": "approve"}, "reason"),
        ({"decision": "deny", "reason": "x" * 501}, "reason"),
    ],
)
def test_invalid_decisions_are_refused_and_store_nothing(setup, fake_provider, body, field):
    run, caller, approval = setup
    events = GovernanceEvent.objects.count()
    error = assert_error(caller.post(decide_url(run, approval.id), body), 400, "invalid_input")
    assert field in error["extra"]["fields"]
    approval.refresh_from_db()
    assert approval.decision == "pending"
    assert (GovernanceEvent.objects.count(), len(fake_provider.requests)) == (events, 1)


def test_other_clients_unknown_ids_and_missing_scope_are_refused(setup, make_caller, fake_provider):
    run, caller, approval = setup
    other = make_caller("runs:read", "runs:approve", trust_zone=TrustZone.LOCAL)
    reader = make_caller(
        "runs:read", "runs:create", configurations=(run.configuration,), trust_zone=TrustZone.LOCAL
    )
    events = GovernanceEvent.objects.count()
    deny = {"decision": "deny", "reason": "No."}
    assert_error(other.post(decide_url(run, approval.id), deny), 404, "not_found")
    assert_error(other.get(f"{RUNS}/{run.id}/approvals"), 404, "not_found")
    assert_error(caller.post(decide_url(run, "not-a-uuid"), deny), 404, "not_found")
    assert_error(caller.post(decide_url(run, "00000000-0000-0000-0000-000000000000"), deny), 404, "not_found")
    denied = assert_error(reader.post(decide_url(run, approval.id), deny), 403, "permission_denied")
    assert denied["extra"] == {"required_scope": "runs:approve"}
    approval.refresh_from_db()
    assert approval.decision == "pending"
    assert (GovernanceEvent.objects.count(), len(fake_provider.requests)) == (events, 1)


def test_a_denial_with_a_secret_in_its_reason_is_stored_and_sent_redacted(
    setup, secret, fake_provider, django_capture_on_commit_callbacks
):
    run, caller, approval = setup
    with django_capture_on_commit_callbacks(execute=True):
        response = caller.post(
            decide_url(run, approval.id), {"decision": "deny", "reason": f"Never paste {secret}."}
        )
    assert response.status_code == 200
    assert secret not in response.content.decode()
    approval.refresh_from_db()
    assert secret not in approval.reason and approval.reason.startswith("Never paste [REDACTED")
    assert secret not in json.dumps(fake_provider.bodies())
    reasons = list(GovernanceEvent.objects.filter(run=str(run.id)).values_list("reason", flat=True))
    assert f"notify_editors (c1) denied by api_client:{caller.client.name}" in reasons
    assert not [reason for reason in reasons if "Never paste" in reason or secret in reason]
