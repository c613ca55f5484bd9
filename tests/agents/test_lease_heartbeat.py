"""A step's lease is short and renewed while the step runs: a renewal extends only a lease its worker
still holds, a lease nobody renews expires, a step longer than its lease keeps it, and a worker that
lost its lease keeps nothing of its step."""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

import agents.runtime.heartbeat
import agents.runtime.step
import agents.services.runs
from agents.models import AgentRun, AgentStep, RunMessage, ToolCallRecord
from agents.runtime.heartbeat import LeaseHeartbeat, lease_heartbeat
from agents.runtime.leases import HeldLease, LeaseLost, lease_claim, lease_hold, leases_renew
from agents.runtime.step import LeaseBusy, step_run
from agents.runtime.tool_calls import OUTCOME_UNKNOWN
from agents.services import run_create
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply, unauthorized
from tests.services.worker import wait_for
from tools.registry import REGISTRY, Tool, ToolEffect


def queued_run(configuration) -> AgentRun:
    """A run whose first step was not executed: the test's transaction never commits, so its enqueue
    callback never runs."""
    return run_create(
        configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
    )


def lease_of(run: AgentRun) -> tuple[str, object]:
    return tuple(AgentRun.objects.filter(id=run.id).values_list("lease_owner", "lease_expires_at").get())


def claimed(run: AgentRun, worker: str = "w1") -> HeldLease:
    assert lease_claim(run_id=str(run.id), step_index=0, worker=worker).claimed
    return HeldLease(run_id=str(run.id), step_index=0, worker=worker)


@pytest.mark.django_db
def test_a_renewal_by_the_owner_extends_its_lease_by_a_full_lease(fake_provider, settings):
    run = queued_run(fake_configuration(fake_provider))
    held = claimed(run)
    AgentRun.objects.filter(id=run.id).update(lease_expires_at=timezone.now() + timedelta(seconds=1))

    before = timezone.now()
    assert leases_renew([held]) == ()
    after = timezone.now()

    owner, expires = lease_of(run)
    lease = timedelta(seconds=settings.AGENT_STEP_LEASE_SECONDS)
    assert owner == "w1"
    assert before + lease <= expires <= after + lease


@pytest.mark.django_db
@pytest.mark.parametrize(
    "held",
    [
        pytest.param(lambda run: HeldLease(str(run.id), 0, "w2"), id="another worker"),
        pytest.param(lambda run: HeldLease(str(run.id), 1, "w1"), id="a step the run is not at"),
    ],
)
def test_a_renewal_by_anyone_but_the_owner_at_its_step_changes_nothing(fake_provider, held):
    run = queued_run(fake_configuration(fake_provider))
    claimed(run, "w1")
    stored = lease_of(run)
    lease = held(run)

    assert leases_renew([lease]) == (lease,)
    with pytest.raises(LeaseLost):
        lease_hold(lease)
    assert lease_of(run) == stored


@pytest.mark.django_db
def test_a_lease_nobody_renews_expires_and_another_worker_takes_the_step_over(fake_provider):
    run = queued_run(fake_configuration(fake_provider))
    first = claimed(run, "w1")
    with pytest.raises(LeaseBusy):  # live: the step waits
        step_run(run_id=str(run.id), step_index=0, worker="w2")
    AgentRun.objects.filter(id=run.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    second = claimed(run, "w2")  # expired: another worker takes it over

    assert leases_renew([first, second]) == (first,)  # the first worker's renewal changes nothing
    assert lease_of(run)[0] == "w2"


@pytest.mark.django_db
def test_one_beat_renews_the_live_leases_and_drops_the_lost_and_the_overdue(fake_provider, caplog):
    caplog.set_level(logging.INFO, logger="agents.runtime.heartbeat")
    live, lost, overdue = (queued_run(fake_configuration(fake_provider)) for _ in range(3))
    heartbeat = LeaseHeartbeat(interval=60)  # not started: the test beats
    leases = {run: claimed(run) for run in (live, lost, overdue)}
    soon = timezone.now() + timedelta(seconds=1)
    AgentRun.objects.filter(id__in=[live.id, lost.id, overdue.id]).update(lease_expires_at=soon)
    AgentRun.objects.filter(id=lost.id).update(lease_owner="w2")
    heartbeat.hold(leases[live], deadline=time.monotonic() + 60)
    heartbeat.hold(leases[lost], deadline=time.monotonic() + 60)
    heartbeat.hold(leases[overdue], deadline=time.monotonic() - 1)

    assert heartbeat.beat() == (leases[lost],)

    assert lease_of(live)[1] > soon
    assert lease_of(lost) == ("w2", soon)
    assert lease_of(overdue) == ("w1", soon)
    assert heartbeat.held() == (leases[live],)
    assert f"run {lost.id} step 0: the lease is no longer held here" in caplog.text
    assert f"run {overdue.id} step 0 outlived the task time limit" in caplog.text


@pytest.mark.django_db
def test_a_worker_that_lost_its_lease_during_the_model_call_records_nothing(
    fake_provider, monkeypatch, caplog
):
    fake_provider.script(Reply(text="done", prompt_tokens=40, completion_tokens=2))
    run = queued_run(fake_configuration(fake_provider))
    sent = agents.runtime.step.streamed_send

    def taken_over_meanwhile(*args, **kwargs):
        reply = sent(*args, **kwargs)
        live = timezone.now() + timedelta(seconds=20)
        AgentRun.objects.filter(id=run.id).update(lease_owner="w2", lease_expires_at=live)
        return reply

    monkeypatch.setattr(agents.runtime.step, "streamed_send", taken_over_meanwhile)

    outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")

    assert (outcome.action, outcome.reason) == ("skipped", "lease lost")
    assert f"step 0 of run {run.id}: another worker took the step over" in caplog.text
    assert len(fake_provider.requests) == 1
    assert not AgentStep.objects.filter(run=run).exists()
    assert not RunMessage.objects.filter(run=run, role="assistant").exists()
    stored = AgentRun.objects.get(id=run.id)
    assert (stored.status, stored.lease_owner, stored.next_step_index) == ("running", "w2", 0)
    assert (stored.prompt_tokens_total, stored.completion_tokens_total) == (0, 0)


@pytest.mark.django_db
def test_a_worker_that_lost_its_lease_during_a_failed_call_neither_records_it_nor_ends_the_run(
    fake_provider, monkeypatch
):
    fake_provider.script(unauthorized())
    run = queued_run(fake_configuration(fake_provider))
    sent = agents.runtime.step.streamed_send

    def taken_over_meanwhile(*args, **kwargs):
        live = timezone.now() + timedelta(seconds=20)
        try:
            return sent(*args, **kwargs)
        finally:
            AgentRun.objects.filter(id=run.id).update(lease_owner="w2", lease_expires_at=live)

    monkeypatch.setattr(agents.runtime.step, "streamed_send", taken_over_meanwhile)

    outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")

    assert (outcome.action, outcome.reason) == ("skipped", "lease lost")
    assert len(fake_provider.requests) == 1
    assert not AgentStep.objects.filter(run=run).exists()
    stored = AgentRun.objects.get(id=run.id)
    assert (stored.status, stored.termination_reason, stored.lease_owner) == ("running", "", "w2")


@pytest.mark.django_db
def test_a_worker_that_lost_its_lease_during_a_write_stores_no_result_and_the_write_is_never_replayed(
    fake_provider,
):
    writes: list[dict] = []

    def send_email(context, arguments):
        writes.append(arguments)
        AgentRun.objects.filter(id=run.id).update(lease_owner="w2", lease_expires_at=timezone.now())
        return "sent"

    tool = Tool(
        name="send_email",
        description="Send an email.",
        parameters={"type": "object", "properties": {"to": {"type": "string"}}},
        group="content",
        effect=ToolEffect.NON_IDEMPOTENT_WRITE,
        handler=send_email,
    )
    REGISTRY.register(tool)
    try:
        fake_provider.script(
            Reply.tools(
                ("c1", "send_email", {"to": "a@example.com"}), ("c2", "send_email", {"to": "b@x.org"})
            )
        )
        run = queued_run(fake_configuration(fake_provider))

        first = step_run(run_id=str(run.id), step_index=0, worker="w1")
        assert (first.action, first.reason) == ("skipped", "lease lost")
        assert writes == [{"to": "a@example.com"}]  # the second call was not started
        assert not RunMessage.objects.filter(run=run, role="tool").exists()

        second = step_run(run_id=str(run.id), step_index=0, worker="w2")  # the worker that took over
    finally:
        REGISTRY.unregister(tool.name)

    assert second.action == "advanced"
    assert len(writes) == 2  # c2 ran once, by w2; c1 was not replayed
    results = dict(RunMessage.objects.filter(run=run, role="tool").values_list("tool_call_id", "content"))
    assert results == {"c1": OUTCOME_UNKNOWN, "c2": "sent"}
    assert ToolCallRecord.objects.filter(run=run).count() == 2
    assert len(fake_provider.requests) == 1


@pytest.fixture
def fresh_heartbeat(monkeypatch):
    """No heartbeat started in this process yet; the one the test starts is stopped after it."""
    monkeypatch.setattr(agents.runtime.heartbeat, "_heartbeat", [])
    yield
    for heartbeat in agents.runtime.heartbeat._heartbeat:
        heartbeat.stop()
        heartbeat.join(timeout=30)


@pytest.mark.django_db(transaction=True)
def test_a_step_longer_than_its_lease_keeps_it_while_it_runs(
    fake_provider, settings, fresh_heartbeat, monkeypatch
):
    settings.AGENT_STEP_LEASE_SECONDS = 1
    settings.AGENT_STEP_LEASE_RENEW_SECONDS = 0.2
    fake_provider.script(Reply(text="done", latency=2.5))
    monkeypatch.setattr(agents.services.runs, "step_enqueue", lambda **step: None)  # the test runs it
    run = queued_run(fake_configuration(fake_provider))
    outcomes: list[str] = []
    worker = threading.Thread(
        target=lambda: outcomes.append(step_run(run_id=str(run.id), step_index=0, worker="w1").action)
    )
    worker.start()
    try:
        wait_for(lambda: len(fake_provider.requests) == 1, timeout=10, what="the model call")
        time.sleep(1.5)  # the call has outlasted a lease that nothing renews

        busy = lease_claim(run_id=str(run.id), step_index=0, worker="w2")

        assert not busy.claimed
        assert busy.busy_until is not None and busy.busy_until > timezone.now()
    finally:
        worker.join(timeout=30)
    assert outcomes == ["finished"]
    assert lease_heartbeat().held() == ()
    assert AgentStep.objects.filter(run=run).count() == 1
    assert len(fake_provider.requests) == 1
