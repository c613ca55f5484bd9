"""Tool approvals on real Celery workers, Redis and PostgreSQL: a run waiting for a decision holds no
worker, survives its worker being killed, and resumes on another; the reaper (on beat) expires it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import redis
from django.conf import settings

from agents.models import AgentRun, ApprovalDecision, RunMessage, ToolApproval
from agents.services import approval_decide, run_create
from governance.actors import Actor
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.services.worker import celery_beat, celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

INCLUDE = "tests.services.celery_tasks,tests.services.approval_tools"
REVIEWER = Actor.system("reviewer")


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def executions(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def start(fake, text: str = "Send the weekly note.") -> AgentRun:
    configuration = fake_configuration(fake, allowed_tools=["send_reviewed_note"], allowed_tool_groups=[])
    return run_create(configuration=configuration, input_text=text, input_data_class=DataClass.PUBLIC_CONTENT)


def status(run: AgentRun) -> str:
    return AgentRun.objects.get(id=run.id).status


def decisions(run: AgentRun) -> list[str]:
    events = GovernanceEvent.objects.filter(run=str(run.id), decision__startswith="approval_")
    return list(events.order_by("created_at").values_list("decision", flat=True))


def test_a_waiting_run_holds_no_worker_and_resumes_on_another_after_its_worker_is_killed(
    fake_provider, tmp_path
):
    tool_log = tmp_path / "tools.log"
    fake_provider.script(
        Reply.tools(("n1", "send_reviewed_note", {"id": "n1"})),
        Reply(text="The other run is done."),
        Reply(text="Sent the note."),
    )
    env = {"TEST_TOOL_LOG": str(tool_log)}
    with celery_worker("first", include=INCLUDE, log=tmp_path / "first.log", env=env) as first:
        waiting = start(fake_provider)
        wait_for(lambda: status(waiting) == "awaiting_approval", timeout=60, what="the run to pause")
        # The one worker process (concurrency 1) is free: another run goes through it meanwhile.
        other = start(fake_provider, "Say hello.")
        wait_for(lambda: AgentRun.objects.get(id=other.id).is_terminal, timeout=60, what="the other run")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
    waiting.refresh_from_db()
    assert (waiting.status, waiting.lease_owner, waiting.lease_expires_at) == ("awaiting_approval", "", None)
    assert AgentRun.objects.get(id=other.id).status == "completed"
    assert executions(tool_log) == []
    approval = ToolApproval.objects.get(run=waiting)
    # Decided while no worker runs: the resumed step waits in the broker.
    approval_decide(
        run=waiting,
        approval_id=str(approval.id),
        decision=ApprovalDecision.APPROVED,
        reason="Fine.",
        actor=REVIEWER,
    )
    assert status(waiting) == "running"
    with celery_worker("second", include=INCLUDE, log=tmp_path / "second.log", env=env):
        wait_for(lambda: AgentRun.objects.get(id=waiting.id).is_terminal, timeout=60, what="the run to end")
    waiting.refresh_from_db()
    assert (waiting.status, waiting.termination_reason, waiting.requeue_count) == (
        "completed",
        "completed",
        0,
    )
    assert executions(tool_log) == ["n1"]  # ran once, after the approval
    assert RunMessage.objects.get(run=waiting, tool_call_id="n1").content == "sent"
    assert decisions(waiting) == ["approval_requested", "approval_granted"]
    assert len(fake_provider.requests) == 3


def test_the_reaper_on_beat_expires_a_call_nobody_decided(fake_provider, tmp_path):
    tool_log = tmp_path / "tools.log"
    fake_provider.script(Reply.tools(("n1", "send_reviewed_note", {"id": "n1"})), Reply(text="Not sent."))
    env = {
        "TEST_TOOL_LOG": str(tool_log),
        "AGENT_APPROVAL_TIMEOUT_SECONDS": "2",
        "AGENT_REAPER_INTERVAL_SECONDS": "1",
    }
    with (
        celery_worker("expiry", include=INCLUDE, log=tmp_path / "worker.log", env=env),
        celery_beat(tmp_path, env=env),
    ):
        run = start(fake_provider)
        wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=90, what="the run to end")
    run.refresh_from_db()
    assert (run.status, run.termination_reason) == ("completed", "completed")
    approval = ToolApproval.objects.get(run=run)
    assert (approval.decision, approval.decided_by, approval.reason) == (
        "expired",
        "reaper",
        "No decision within 2 seconds.",
    )
    expected = "The call to 'send_reviewed_note' was not run: no one approved it in time."
    assert RunMessage.objects.get(run=run, tool_call_id="n1").content == expected
    assert fake_provider.bodies()[1]["messages"][-1]["content"] == expected
    assert executions(tool_log) == []
    assert decisions(run) == ["approval_requested", "approval_expired"]
    assert f"approval {approval.id} of run {run.id} expired" in (tmp_path / "worker.log").read_text()
