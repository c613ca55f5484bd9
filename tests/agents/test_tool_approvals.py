"""Tool calls that wait for a person's approval: the run pauses holding nothing, then a decision (or
the reaper, when none comes in time) resumes it; every decision is a governance event."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from agents.errors import ApprovalDecided, RunFinished
from agents.models import AgentRun, AgentStep, ApprovalDecision, RunMessage, ToolApproval, ToolCallRecord
from agents.reaper import reap_sweep
from agents.runtime.approvals import Pause, run_pause
from agents.runtime.leases import lease_claim
from agents.runtime.step import step_run
from agents.services import approval_decide, run_cancel
from governance.actors import Actor
from governance.models import GovernanceEvent
from tests.agents.runs import fake_configuration, run_to_end
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

NOTICE = {"message": "The tone guide changed."}
REVIEWER = Actor.system("reviewer")


def approval_events(run: AgentRun) -> list[tuple[str, int | None, str]]:
    events = GovernanceEvent.objects.filter(run=str(run.id), decision__startswith="approval_")
    return list(events.order_by("created_at", "seq").values_list("decision", "step", "reason"))


@pytest.fixture
def paused(fake_provider, django_capture_on_commit_callbacks):
    """A run paused on a ``notify_editors`` call (asked for beside a call that needs no approval)."""
    fake_provider.script(
        Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]}), ("c2", "notify_editors", NOTICE)),
        Reply(text="Done."),
    )
    configuration = fake_configuration(fake_provider, allowed_tool_groups=["content", "editing"])
    return run_to_end(django_capture_on_commit_callbacks, configuration)


def test_a_call_that_needs_approval_pauses_the_run_holding_no_lease(paused, fake_provider):
    assert (paused.status, paused.termination_reason) == ("awaiting_approval", "")
    assert (paused.lease_owner, paused.lease_expires_at, paused.next_step_index) == ("", None, 0)
    approval = ToolApproval.objects.get()
    assert (approval.run_id, approval.step_index, approval.call_id, approval.tool_name) == (
        paused.id,
        0,
        "c2",
        "notify_editors",
    )
    assert approval.arguments == '{"message": "The tone guide changed."}'
    assert (approval.decision, approval.label, approval.tool_class) == (
        "pending",
        "public_content",
        "editor_content",
    )
    assert approval.expires_at - approval.requested_at == timedelta(seconds=86400)
    # The call before it ran; the waiting call did not, and nothing else was sent or queued.
    results = list(RunMessage.objects.filter(run=paused, role="tool").values_list("tool_call_id", flat=True))
    assert results == ["c1"]
    assert list(ToolCallRecord.objects.filter(run=paused).values_list("call_id", flat=True)) == ["c1"]
    assert len(fake_provider.requests) == 1
    assert approval_events(paused) == [
        (
            "approval_requested",
            0,
            f"notify_editors (c2) waits for approval until {approval.expires_at:%Y-%m-%dT%H:%M:%SZ}",
        )
    ]


def test_an_approved_call_runs_through_the_gate_and_the_run_resumes(
    paused, fake_provider, django_capture_on_commit_callbacks
):
    approval = ToolApproval.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        approval_decide(
            run=paused,
            approval_id=str(approval.id),
            decision=ApprovalDecision.APPROVED,
            reason="Fine to send.",
            actor=REVIEWER,
        )
    paused.refresh_from_db()
    assert (paused.status, paused.termination_reason) == ("completed", "completed")
    approval.refresh_from_db()
    assert (approval.decision, approval.decided_by, approval.reason) == (
        "approved",
        "reviewer",
        "Fine to send.",
    )
    assert ToolCallRecord.objects.get(run=paused, call_id="c2").status == "completed"
    second = fake_provider.bodies()[1]["messages"]
    assert second[-1] == {"role": "tool", "content": "The editors were notified.", "tool_call_id": "c2"}
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "tool"]
    assert list(AgentStep.objects.filter(run=paused).values_list("index", flat=True)) == [0, 1]
    assert [event[0] for event in approval_events(paused)] == ["approval_requested", "approval_granted"]
    assert approval_events(paused)[1][2] == "notify_editors (c2) approved by reviewer"


def test_a_denied_call_is_answered_with_a_refusal_and_never_runs(
    paused, fake_provider, django_capture_on_commit_callbacks
):
    approval = ToolApproval.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        approval_decide(
            run=paused,
            approval_id=str(approval.id),
            decision=ApprovalDecision.DENIED,
            reason="Not this week.",
            actor=REVIEWER,
        )
    paused.refresh_from_db()
    assert (paused.status, paused.termination_reason) == ("completed", "completed")
    assert not ToolCallRecord.objects.filter(run=paused, call_id="c2").exists()
    result = RunMessage.objects.get(run=paused, tool_call_id="c2")
    assert (
        result.content
        == "The call to 'notify_editors' was not run: a reviewer denied it. Reason: Not this week."
    )
    assert result.data_class == "editor_content"
    assert fake_provider.bodies()[1]["messages"][-1]["content"] == result.content
    assert [event[0] for event in approval_events(paused)] == ["approval_requested", "approval_denied"]


def test_a_second_decision_is_refused_and_changes_nothing(paused, django_capture_on_commit_callbacks):
    approval = ToolApproval.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        approval_decide(
            run=paused,
            approval_id=str(approval.id),
            decision=ApprovalDecision.DENIED,
            reason="No.",
            actor=REVIEWER,
        )
    events = GovernanceEvent.objects.count()
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(ApprovalDecided) as raised,
    ):
        approval_decide(
            run=paused,
            approval_id=str(approval.id),
            decision=ApprovalDecision.APPROVED,
            reason="Yes.",
            actor=REVIEWER,
        )
    assert raised.value.extra == {"decision": "denied"}
    assert callbacks == []
    approval.refresh_from_db()
    assert (approval.decision, approval.reason) == ("denied", "No.")
    assert GovernanceEvent.objects.count() == events


def test_the_reaper_expires_an_undecided_call_and_the_model_is_told(
    paused, fake_provider, django_capture_on_commit_callbacks
):
    approval = ToolApproval.objects.get()
    reap_sweep()  # not yet due: nothing changes
    approval.refresh_from_db()
    assert approval.decision == "pending"
    ToolApproval.objects.filter(pk=approval.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        reap_sweep()
    approval.refresh_from_db()
    assert (approval.decision, approval.decided_by, approval.reason) == (
        "expired",
        "reaper",
        "No decision within 86400 seconds.",
    )
    paused.refresh_from_db()
    assert (paused.status, paused.termination_reason) == ("completed", "completed")
    expected = "The call to 'notify_editors' was not run: no one approved it in time."
    assert RunMessage.objects.get(run=paused, tool_call_id="c2").content == expected
    assert fake_provider.bodies()[1]["messages"][-1]["content"] == expected
    assert [event[0] for event in approval_events(paused)] == ["approval_requested", "approval_expired"]


def test_cancelling_a_paused_run_ends_it_at_once_and_leaves_nothing_to_decide(
    paused, fake_provider, django_capture_on_commit_callbacks
):
    run_cancel(run=paused)
    paused.refresh_from_db()
    assert (paused.status, paused.termination_reason) == ("cancelled", "cancelled")
    approval = ToolApproval.objects.get()
    with django_capture_on_commit_callbacks(execute=True) as callbacks, pytest.raises(RunFinished):
        approval_decide(
            run=paused,
            approval_id=str(approval.id),
            decision=ApprovalDecision.APPROVED,
            reason="Go.",
            actor=REVIEWER,
        )
    assert callbacks == []
    approval.refresh_from_db()
    assert approval.decision == "pending"
    ToolApproval.objects.filter(pk=approval.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    reap_sweep()
    approval.refresh_from_db()
    assert approval.decision == "pending"
    assert len(fake_provider.requests) == 1


def test_a_redelivered_step_of_a_paused_run_pauses_it_again_without_a_second_request(
    paused, fake_provider, django_capture_on_commit_callbacks
):
    outcome = step_run(run_id=str(paused.id), step_index=0, worker="stray")
    assert (outcome.action, outcome.reason) == ("skipped", "paused")
    paused.refresh_from_db()
    assert (paused.status, paused.lease_owner, paused.lease_expires_at) == ("awaiting_approval", "", None)
    assert ToolApproval.objects.count() == 1
    assert len(fake_provider.requests) == 1
    assert [event[0] for event in approval_events(paused)] == ["approval_requested"]


def test_a_decision_while_a_stray_step_holds_the_lease_is_not_lost(
    paused, fake_provider, django_capture_on_commit_callbacks
):
    claim = lease_claim(run_id=str(paused.id), step_index=0, worker="stray")
    assert claim.claimed
    approval = ToolApproval.objects.get()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        approval_decide(
            run=paused,
            approval_id=str(approval.id),
            decision=ApprovalDecision.APPROVED,
            reason="Go.",
            actor=REVIEWER,
        )
    assert callbacks == []  # the run is not paused: the step holding it answers the call
    assert run_pause(run=paused, worker="stray", step_index=0) == Pause.DECIDED
    with django_capture_on_commit_callbacks(execute=True):
        outcome = step_run(run_id=str(paused.id), step_index=0, worker="stray")
    assert outcome.action == "advanced"
    paused.refresh_from_db()
    assert (paused.status, paused.termination_reason) == ("completed", "completed")
    assert ToolCallRecord.objects.get(run=paused, call_id="c2").status == "completed"
    assert len(fake_provider.requests) == 2


@pytest.mark.django_db(transaction=True)
def test_run_agent_returns_when_the_run_waits_and_names_the_call(fake_provider):
    fake_provider.script(Reply.tools(("c1", "notify_editors", NOTICE)))
    configuration = fake_configuration(fake_provider, allowed_tool_groups=["editing"])
    out = StringIO()
    call_command(
        "run_agent",
        "--configuration",
        configuration.identifier,
        "--input",
        "Tell them.",
        "--timeout",
        "20",
        stdout=out,
    )
    approval = ToolApproval.objects.get()
    lines = out.getvalue().splitlines()
    assert lines[-2:] == [
        "Status: awaiting_approval (running)",
        f"Waiting for approval: notify_editors (c1), approval {approval.id}",
    ]
