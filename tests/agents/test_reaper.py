"""The reaper moves every run nothing else will: a lost first message (queued), a lost message between
two steps (running, no lease), an expired lease; bounded by the same requeue count. It never runs a
step twice: a step in flight or waiting only briefly is left alone, and a second copy of a message
that was not lost after all is skipped by the claim."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from agents.metrics import REQUEUES
from agents.models import AgentRun, AgentStep
from agents.reaper import reap_sweep
from agents.runtime.leases import MAX_REQUEUES, lease_claim, runs_reap
from agents.runtime.step import LeaseBusy, StepAction, step_run
from agents.services import run_create
from gateway.apis.run_output import run_summary_body
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db


def lookup(call_id: str) -> Reply:
    return Reply.tools((call_id, "snippets_by_tag", {"tags": ["tone"]}))


def lost_run(fake_provider, **fields) -> AgentRun:
    """A run whose first step's message was lost: created, its enqueue never executed (the test's
    transaction never commits), and waiting for longer than the bound."""
    run = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )
    waited(run, **fields)
    return run


def waited(run: AgentRun, **fields) -> None:
    """Make ``run`` look as if it has waited a second longer than ``AGENT_QUEUED_STALE_SECONDS``."""
    stale = timezone.now() - timedelta(seconds=settings.AGENT_QUEUED_STALE_SECONDS + 1)
    AgentRun.objects.filter(id=run.id).update(updated_at=stale, **fields)
    run.refresh_from_db()


def counted(action: str, cause: str) -> float:
    return REQUEUES.labels(action=action, cause=cause)._value.get()


def sweep(capture, *, execute: bool):
    """One sweep; the messages it sends are run (eagerly) when ``execute``, else only counted."""
    with capture(execute=execute) as sent:
        result = reap_sweep()
    return result, sent


def test_a_lost_first_message_is_requeued_and_the_run_completes(
    fake_provider, django_capture_on_commit_callbacks
):
    fake_provider.script(Reply(text="Done."))
    run = lost_run(fake_provider)
    assert run.status == "queued"
    before = counted("requeued", "lost")
    result, sent = sweep(django_capture_on_commit_callbacks, execute=True)
    assert [(r.run_id, r.step_index, r.cause) for r in result.requeued] == [(str(run.id), 0, "lost")]
    assert len(sent) == 1
    run.refresh_from_db()
    assert (run.status, run.termination_reason, run.requeue_count) == ("completed", "completed", 1)
    assert len(fake_provider.requests) == 1
    assert counted("requeued", "lost") - before == 1


def test_a_message_lost_between_two_steps_is_requeued_at_the_next_step(
    fake_provider, django_capture_on_commit_callbacks
):
    fake_provider.script(lookup("c0"), Reply(text="Done."))
    run = lost_run(fake_provider)
    # Step 0 runs; the message of step 1 is lost (its on-commit enqueue never runs here).
    assert step_run(run_id=str(run.id), step_index=0, worker="w1").action == StepAction.ADVANCED
    run.refresh_from_db()
    assert (run.status, run.next_step_index, run.lease_owner) == ("running", 1, "")
    waited(run)
    result, _ = sweep(django_capture_on_commit_callbacks, execute=True)
    assert [(r.step_index, r.cause) for r in result.requeued] == [(1, "lost")]
    run.refresh_from_db()
    assert (run.status, run.requeue_count) == ("completed", 1)
    assert list(AgentStep.objects.filter(run=run).values_list("index", flat=True).order_by("index")) == [0, 1]
    assert len(fake_provider.requests) == 2


def test_runs_waiting_less_than_the_bound_are_left_alone(fake_provider, django_capture_on_commit_callbacks):
    fake_provider.script(lookup("c0"))
    queued = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )
    between = lost_run(fake_provider)
    step_run(run_id=str(between.id), step_index=0, worker="w1")  # just released: waits from now
    result, sent = sweep(django_capture_on_commit_callbacks, execute=False)
    assert (result.requeued, result.failed, len(sent)) == ((), (), 0)
    for run in (queued, between):
        run.refresh_from_db()
        assert (run.requeue_count, run.status) == (0, "queued" if run is queued else "running")


def test_a_step_in_flight_is_not_requeued_however_long_its_run_has_waited(
    fake_provider, django_capture_on_commit_callbacks
):
    run = lost_run(fake_provider)
    assert lease_claim(run_id=str(run.id), step_index=0, worker="alive").claimed
    waited(run)  # the lease is live; only updated_at is old
    result, sent = sweep(django_capture_on_commit_callbacks, execute=False)
    assert (result.requeued, result.failed, len(sent)) == ((), (), 0)
    run.refresh_from_db()
    assert (run.status, run.lease_owner, run.requeue_count) == ("running", "alive", 0)
    assert fake_provider.requests == []


def test_a_second_copy_of_a_message_that_was_not_lost_runs_nothing_twice(
    fake_provider, django_capture_on_commit_callbacks
):
    """The reaper cannot tell a lost message from a slow one; both copies arriving is harmless."""
    fake_provider.script(lookup("c0"), Reply(text="Done."))
    run = lost_run(fake_provider)
    _, sent = sweep(django_capture_on_commit_callbacks, execute=False)
    assert len(sent) == 1  # the reaper's copy of step 0, not yet delivered
    # The original message arrives first, and its step is still running when the copy arrives.
    assert lease_claim(run_id=str(run.id), step_index=0, worker="original").claimed
    with pytest.raises(LeaseBusy):
        step_run(run_id=str(run.id), step_index=0, worker="copy")
    assert fake_provider.requests == []
    outcome = step_run(run_id=str(run.id), step_index=0, worker="original")
    assert outcome.action == StepAction.ADVANCED
    # The copy, retried after the lease, finds the step done.
    assert step_run(run_id=str(run.id), step_index=0, worker="copy").action == StepAction.SKIPPED
    assert len(fake_provider.requests) == 1
    assert list(AgentStep.objects.filter(run=run).values_list("index", flat=True)) == [0]


def test_a_run_requeued_once_is_not_requeued_again_until_it_waited_the_bound_again(
    fake_provider, django_capture_on_commit_callbacks
):
    expired = lost_run(fake_provider)
    AgentRun.objects.filter(id=expired.id).update(
        status="running", lease_owner="dead", lease_expires_at=timezone.now() - timedelta(seconds=5)
    )
    lost = lost_run(fake_provider)
    first, sent = sweep(django_capture_on_commit_callbacks, execute=False)
    # The expired lease is requeued once, not also as a lost message in the same sweep.
    assert sorted((r.run_id, r.cause) for r in first.requeued) == sorted(
        [(str(expired.id), "lease_expired"), (str(lost.id), "lost")]
    )
    assert len(sent) == 2
    second, sent = sweep(django_capture_on_commit_callbacks, execute=False)
    assert (second.requeued, len(sent)) == ((), 0)
    assert [AgentRun.objects.get(id=r.id).requeue_count for r in (expired, lost)] == [1, 1]


def test_past_the_bound_a_lost_run_fails_with_requeue_limit(
    fake_provider, django_capture_on_commit_callbacks
):
    run = lost_run(fake_provider, requeue_count=MAX_REQUEUES)
    before = counted("failed", "lost")
    result, sent = sweep(django_capture_on_commit_callbacks, execute=False)
    assert ([e.run_id for e in result.failed], result.requeued, len(sent)) == ([str(run.id)], (), 0)
    run.refresh_from_db()
    assert (run.status, run.termination_reason, run.error_code) == (
        "failed",
        "retries_exhausted",
        "requeue_limit",
    )
    assert run.error_message == "The run was requeued 3 times and its next step was not picked up again."
    assert (run.lease_owner, run.lease_expires_at, run.requeue_count) == ("", None, MAX_REQUEUES)
    assert run_summary_body(run)["error"]["code"] == "requeue_limit"  # the run's terminal event
    assert counted("failed", "lost") - before == 1
    assert fake_provider.requests == []


def test_requeues_of_either_cause_count_towards_one_bound(fake_provider):
    run = lost_run(fake_provider)
    past = timezone.now() - timedelta(seconds=5)
    for cause in ("lease_expired", "lost", "lease_expired"):
        if cause == "lease_expired":
            AgentRun.objects.filter(id=run.id).update(
                status="running", lease_owner="dead", lease_expires_at=past
            )
        else:
            waited(run)
        assert [r.cause for r in runs_reap().requeued] == [cause]
    AgentRun.objects.filter(id=run.id).update(status="running", lease_owner="dead", lease_expires_at=past)
    result = runs_reap()
    assert [(e.run_id, e.cause) for e in result.failed] == [(str(run.id), "lease_expired")]
    run.refresh_from_db()
    assert (run.status, run.error_code, run.requeue_count) == ("failed", "requeue_limit", MAX_REQUEUES)
    assert run.error_message == "The run was requeued 3 times and its worker stopped responding again."


def test_finished_and_cancelled_runs_are_never_reaped(fake_provider, django_capture_on_commit_callbacks):
    for status in ("completed", "failed", "cancelled"):
        lost_run(fake_provider, status=status)
    result, sent = sweep(django_capture_on_commit_callbacks, execute=False)
    assert (result.requeued, result.failed, len(sent)) == ((), (), 0)
