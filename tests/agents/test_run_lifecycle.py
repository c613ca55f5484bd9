"""Leases, idempotent steps, cancellation, the reaper, and tool calls that must not be replayed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import AgentRun, AgentStep, RunMessage, ToolCallRecord
from agents.runtime.leases import MAX_REQUEUES, lease_claim, runs_reap
from agents.runtime.record import CompletedStep
from agents.runtime.step import LeaseBusy, step_run
from agents.runtime.tool_calls import OUTCOME_UNKNOWN
from agents.services import run_cancel, run_create
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tools.registry import REGISTRY, Tool, ToolEffect

pytestmark = pytest.mark.django_db


def queued_run(configuration, **fields) -> AgentRun:
    """A run whose first step was not executed (its enqueue callback is discarded)."""
    run = run_create(configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT)
    AgentRun.objects.filter(id=run.id).update(**fields)
    run.refresh_from_db()
    return run


@pytest.fixture
def writes():
    calls: list[dict] = []
    tool = Tool(
        name="send_email",
        description="Send an email.",
        parameters={"type": "object", "properties": {"to": {"type": "string"}}},
        group="content",
        effect=ToolEffect.NON_IDEMPOTENT_WRITE,
        handler=lambda context, arguments: calls.append(arguments) or "sent",
    )
    REGISTRY.register(tool)
    yield calls
    REGISTRY.unregister(tool.name)


def test_run_create_enqueues_the_first_step_on_commit(fake_provider, django_capture_on_commit_callbacks):
    configuration = fake_configuration(fake_provider)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = run_create(
            configuration=configuration, input_text="Hi", input_data_class=DataClass.PUBLIC_CONTENT
        )
    assert len(callbacks) == 1
    assert (run.status, run.next_step_index) == ("queued", 0)
    assert fake_provider.requests == []


def test_task_input_class_defaults_to_the_clients_default(fake_provider):
    from catalog.services import api_client_create

    client = api_client_create(
        name="shop", scopes=["runs:create"], default_input_data_class=DataClass.SOURCE_CODE
    )
    run = run_create(
        configuration=fake_configuration(fake_provider), input_text="Hi", api_client=client.client
    )
    assert run.input_data_class == "source_code"


def test_completed_step_is_not_redone(fake_provider):
    fake_provider.script(Reply(text="done"))
    run = queued_run(fake_configuration(fake_provider))
    assert step_run(run_id=str(run.id), step_index=0, worker="w1").action == "finished"
    outcome = step_run(run_id=str(run.id), step_index=0, worker="w2")
    assert (outcome.action, outcome.reason) == ("skipped", "step already done or run ended")
    assert len(fake_provider.requests) == 1
    assert AgentStep.objects.filter(run=run).count() == 1


def test_a_step_recorded_but_not_advanced_is_not_called_again(fake_provider):
    """The worker died after recording the step (tool calls pending) and before advancing the run:
    the redelivered step goes straight to the tools, without a second model call."""
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["x"]})), Reply(text="done"))
    run = queued_run(fake_configuration(fake_provider))
    lease_claim(run_id=str(run.id), step_index=0, worker="w1")
    from agents.runtime.step import _model_phase

    _model_phase(AgentRun.objects.select_related("configuration").get(id=run.id), 0, "w1")
    AgentRun.objects.filter(id=run.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert step_run(run_id=str(run.id), step_index=0, worker="w2").action == "advanced"
    assert len(fake_provider.requests) == 1
    assert list(RunMessage.objects.filter(run=run).values_list("role", "tool_call_id")) == [
        ("assistant", ""),
        ("tool", "c1"),
    ]


def test_a_redelivered_step_runs_only_the_calls_without_a_result(fake_provider):
    """The worker died between two tool results: the redelivered step stores the missing one only."""
    calls = (("c1", "snippets_by_tag", {"tags": ["x"]}), ("c2", "snippets_by_tag", {"tags": ["y"]}))
    fake_provider.script(Reply.tools(*calls), Reply(text="done"))
    run = queued_run(fake_configuration(fake_provider))
    lease_claim(run_id=str(run.id), step_index=0, worker="w1")
    from agents.runtime.step import _model_phase

    _model_phase(AgentRun.objects.select_related("configuration").get(id=run.id), 0, "w1")
    RunMessage.objects.create(
        run=run,
        position=1,
        step_index=0,
        role="tool",
        content="stored",
        tool_call_id="c1",
        data_class=DataClass.PUBLIC_CONTENT,
    )
    AgentRun.objects.filter(id=run.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert step_run(run_id=str(run.id), step_index=0, worker="w2").action == "advanced"
    assert list(RunMessage.objects.filter(run=run).values_list("role", "tool_call_id", "content")) == [
        ("assistant", "", ""),
        ("tool", "c1", "stored"),
        ("tool", "c2", "No snippets found.\n\n(Unknown tags: y.)"),
    ]


def test_a_step_that_records_its_tool_calls_does_not_read_their_results(fake_provider):
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["x"]})), Reply(text="done"))
    run = queued_run(fake_configuration(fake_provider))
    with CaptureQueriesContext(connection) as queries:
        assert step_run(run_id=str(run.id), step_index=0, worker="w1").action == "advanced"
    reads = [query["sql"] for query in queries.captured_queries if query["sql"].startswith("SELECT")]
    assert not [sql for sql in reads if "\"role\" = 'tool'" in sql]
    assert list(RunMessage.objects.filter(run=run).values_list("role", "tool_call_id")) == [
        ("assistant", ""),
        ("tool", "c1"),
    ]


def test_a_refused_step_whose_run_was_not_ended_is_replaced(fake_provider):
    fake_provider.script(Reply(text="done"))
    run = queued_run(fake_configuration(fake_provider))
    AgentStep.objects.create(
        run=run, index=0, status="refused", usage_provenance="unavailable", error_code="x"
    )
    outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")
    assert (outcome.action, outcome.reason) == ("finished", "completed")
    assert list(AgentStep.objects.filter(run=run).values_list("index", "status")) == [(0, "completed")]
    assert len(fake_provider.requests) == 1


def test_live_lease_of_another_worker_makes_the_step_wait(fake_provider):
    run = queued_run(fake_configuration(fake_provider))
    assert lease_claim(run_id=str(run.id), step_index=0, worker="w1").claimed
    with pytest.raises(LeaseBusy) as busy:
        step_run(run_id=str(run.id), step_index=0, worker="w2")
    assert 0 < busy.value.retry_in <= 300
    assert fake_provider.requests == []


def test_expired_lease_can_be_taken_over(fake_provider):
    fake_provider.script(Reply(text="done"))
    run = queued_run(fake_configuration(fake_provider))
    lease_claim(run_id=str(run.id), step_index=0, worker="dead")
    AgentRun.objects.filter(id=run.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert step_run(run_id=str(run.id), step_index=0, worker="w2").reason == "completed"


def test_cancel_of_a_queued_run_ends_it_at_once(fake_provider):
    run = queued_run(fake_configuration(fake_provider))
    run = run_cancel(run=run)
    assert (run.status, run.termination_reason) == ("cancelled", "cancelled")
    assert step_run(run_id=str(run.id), step_index=0, worker="w1").action == "skipped"
    assert fake_provider.requests == []


def test_cancel_is_honoured_at_the_next_step_boundary(fake_provider):
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["x"]})), Reply(text="never"))
    run = queued_run(fake_configuration(fake_provider))
    step_run(run_id=str(run.id), step_index=0, worker="w1")
    run_cancel(run=run)
    outcome = step_run(run_id=str(run.id), step_index=1, worker="w1")
    assert outcome.reason == "cancelled"
    run.refresh_from_db()
    assert (run.status, run.termination_reason) == ("cancelled", "cancelled")
    assert len(fake_provider.requests) == 1


def test_non_idempotent_tool_call_is_never_replayed_after_a_crash(fake_provider, writes):
    fake_provider.script(Reply.tools(("c1", "send_email", {"to": "a@example.com"})), Reply(text="done"))
    run = queued_run(fake_configuration(fake_provider))
    # The worker claimed the call, then died before recording its result.
    lease_claim(run_id=str(run.id), step_index=0, worker="w1")
    from agents.runtime.step import _model_phase

    completed = _model_phase(AgentRun.objects.select_related("configuration").get(id=run.id), 0, "w1")
    assert isinstance(completed, CompletedStep) and completed.message.tool_calls[0]["id"] == "c1"
    ToolCallRecord.objects.create(
        run=run,
        step_index=0,
        call_id="c1",
        tool_name="send_email",
        effect="non_idempotent_write",
        status="started",
    )
    AgentRun.objects.filter(id=run.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    step_run(run_id=str(run.id), step_index=0, worker="w2")
    assert writes == []
    assert RunMessage.objects.get(run=run, role="tool").content == OUTCOME_UNKNOWN
    assert len(fake_provider.requests) == 1  # the recorded model call was not made again


def test_tool_exception_becomes_a_generic_text_and_the_details_go_to_the_log(fake_provider, caplog):
    def broken(context, arguments):
        raise RuntimeError("internal detail that stays in the log")

    REGISTRY.register(
        Tool(
            "broken", "Breaks.", {"type": "object", "properties": {}}, "content", ToolEffect.READ_ONLY, broken
        )
    )
    try:
        fake_provider.script(Reply.tools(("c1", "broken", {})), Reply(text="done"))
        run = queued_run(fake_configuration(fake_provider))
        step_run(run_id=str(run.id), step_index=0, worker="w1")
    finally:
        REGISTRY.unregister("broken")
    assert (
        RunMessage.objects.get(run=run, role="tool").content == "The tool failed. No details are available."
    )
    assert "tool broken failed" in caplog.text
    assert ToolCallRecord.objects.get(run=run).status == "failed"


def test_reaper_requeues_expired_leases_then_gives_up(fake_provider):
    run = queued_run(fake_configuration(fake_provider))
    past = timezone.now() - timedelta(seconds=5)
    AgentRun.objects.filter(id=run.id).update(status="running", lease_owner="dead", lease_expires_at=past)
    result = runs_reap()
    assert [(r.run_id, r.step_index, r.cause) for r in result.requeued] == [(str(run.id), 0, "lease_expired")]
    run.refresh_from_db()
    assert (run.requeue_count, run.lease_owner, run.lease_expires_at) == (1, "", None)
    AgentRun.objects.filter(id=run.id).update(
        requeue_count=MAX_REQUEUES, lease_owner="dead", lease_expires_at=past
    )
    result = runs_reap()
    assert [ended.run_id for ended in result.failed] == [str(run.id)]
    run.refresh_from_db()
    assert (run.status, run.termination_reason, run.error_code) == (
        "failed",
        "retries_exhausted",
        "requeue_limit",
    )


def test_reaper_leaves_live_leases_alone(fake_provider):
    run = queued_run(fake_configuration(fake_provider))
    lease_claim(run_id=str(run.id), step_index=0, worker="alive")
    assert runs_reap().requeued == ()
