"""Tool approvals in admin: listed on the run's page, decided by staff with the permission, once."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission

from agents.models import ToolApproval
from governance.models import GovernanceEvent
from tests.agents.runs import fake_configuration, run_to_end
from tests.editor_accounts import editor_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def paused(fake_provider, django_capture_on_commit_callbacks):
    fake_provider.script(
        Reply.tools(("c1", "notify_editors", {"message": "The tone guide changed."})), Reply(text="Sent.")
    )
    configuration = fake_configuration(fake_provider, allowed_tool_groups=["editing"])
    return run_to_end(django_capture_on_commit_callbacks, configuration)


def decide_url(approval: ToolApproval) -> str:
    return f"/admin/agents/toolapproval/{approval.pk}/decide/"


def test_the_run_page_lists_the_pending_call_with_a_link_to_decide(admin_client, paused):
    approval = ToolApproval.objects.get()
    html = " ".join(admin_client.get(f"/admin/agents/agentrun/{paused.pk}/change/").content.decode().split())
    assert '<td class="field-tool_name"> <p>notify_editors</p> </td>' in html
    assert '<td class="field-decision"> <p>Pending</p> </td>' in html
    assert f'<td class="field-decide"> <p><a href="{decide_url(approval)}">Decide</a></p> </td>' in html
    page = admin_client.get(decide_url(approval)).content.decode()
    assert "<pre>{&quot;message&quot;: &quot;The tone guide changed.&quot;}</pre>" in page
    assert 'id="decide"' in page


def test_staff_approve_with_a_reason_and_the_run_resumes(
    admin_client, admin_user, paused, fake_provider, django_capture_on_commit_callbacks
):
    approval = ToolApproval.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(decide_url(approval), {"decision": "approved", "reason": "Go ahead."})
    assert (response.status_code, response["Location"]) == (302, decide_url(approval))
    approval.refresh_from_db()
    assert (approval.decision, approval.decided_by, approval.reason) == (
        "approved",
        f"user:{admin_user.username}",
        "Go ahead.",
    )
    paused.refresh_from_db()
    assert (paused.status, paused.termination_reason) == ("completed", "completed")
    assert fake_provider.bodies()[1]["messages"][-1]["content"] == "The editors were notified."
    assert LogEntry.objects.get().change_message == "Tool call approved."
    page = admin_client.get(decide_url(approval)).content.decode()
    assert 'id="decide"' not in page and "The run has ended" in page

    events = GovernanceEvent.objects.count()
    again = admin_client.post(decide_url(approval), {"decision": "denied", "reason": "No."}, follow=True)
    assert "This call was already approved." in again.content.decode()
    approval.refresh_from_db()
    assert approval.decision == "approved"
    assert GovernanceEvent.objects.count() == events


def test_staff_without_the_permission_cannot_decide_and_nothing_is_stored(client, paused, fake_provider):
    editor = editor_make()
    editor.user_permissions.add(Permission.objects.get(codename="view_toolapproval"))
    client.force_login(editor)
    approval = ToolApproval.objects.get()
    events = GovernanceEvent.objects.count()
    response = client.post(decide_url(approval), {"decision": "approved", "reason": "Sure."})
    assert response.status_code == 403
    approval.refresh_from_db()
    assert approval.decision == "pending"
    assert (GovernanceEvent.objects.count(), len(fake_provider.requests)) == (events, 1)


def test_a_decision_without_a_reason_is_refused_by_the_form(admin_client, paused):
    approval = ToolApproval.objects.get()
    response = admin_client.post(decide_url(approval), {"decision": "denied", "reason": ""})
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    approval.refresh_from_db()
    assert approval.decision == "pending"
