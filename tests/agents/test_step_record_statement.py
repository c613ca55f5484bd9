"""A completed step's record (its step row, assistant message, the run's totals and the model's
calibration) and a tool call's result (with its record's status, and for the step's last result the
run's move to its next step) are written only while the step's worker holds the lease: one statement
each on PostgreSQL, one transaction each on SQLite; a lost lease writes none of it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

import agents.runtime.step
import agents.runtime.tool_calls
from agents.models import AgentRun, AgentStep, RunMessage, ToolCallRecord
from agents.runtime.step import step_run
from agents.services import run_create
from catalog.models import LlmModel
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tools.registry import REGISTRY, Tool, ToolEffect

# The fast suite runs on SQLite, the services suite on PostgreSQL: each runs the variant marked for it.
DATABASES = [
    pytest.param("default", marks=pytest.mark.django_db),
    pytest.param("services", marks=[pytest.mark.services, pytest.mark.django_db(transaction=True)]),
]


def started_run(fake_provider) -> AgentRun:
    return run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )


def calibration_samples(run: AgentRun) -> int:
    return LlmModel.objects.get(pk=run.configuration.model_id).calibration_samples


def taken_over(run: AgentRun) -> None:
    live = timezone.now() + timedelta(seconds=20)
    AgentRun.objects.filter(id=run.id).update(lease_owner="w2", lease_expires_at=live)


def counted(monkeypatch, module, name: str) -> list[int]:
    """Statements run by each call of ``module.name``, appended to the list returned."""
    counts: list[int] = []
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        with CaptureQueriesContext(connection) as statements:
            result = original(*args, **kwargs)
        counts.append(len(statements))
        return result

    monkeypatch.setattr(module, name, wrapper)
    return counts


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_final_answer_is_recorded_with_totals_calibration_and_completion_in_one_statement(
    fake_provider, monkeypatch
):
    fake_provider.script(Reply(text="done", prompt_tokens=40, completion_tokens=2))
    run = started_run(fake_provider)
    records = counted(monkeypatch, agents.runtime.step, "completed_step_record")

    outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")

    assert (outcome.action, outcome.reason) == ("finished", "completed")
    assert records == [1]
    stored = AgentRun.objects.get(id=run.id)
    assert (
        stored.status,
        stored.lease_owner,
        stored.prompt_tokens_total,
        stored.completion_tokens_total,
    ) == (
        "completed",
        "",
        40,
        2,
    )
    assert list(AgentStep.objects.filter(run=run).values_list("index", "status")) == [(0, "completed")]
    assert list(RunMessage.objects.filter(run=run, role="assistant").values_list("content", flat=True)) == [
        "done"
    ]
    assert calibration_samples(run) == 1


@pytest.mark.parametrize("database", DATABASES)
def test_a_step_whose_lease_was_lost_during_the_call_adds_no_row_total_or_calibration_sample(
    database, fake_provider, monkeypatch
):
    fake_provider.script(Reply(text="done", prompt_tokens=40, completion_tokens=2))
    run = started_run(fake_provider)
    sent = agents.runtime.step.streamed_send

    def taken_over_meanwhile(*args, **kwargs):
        reply = sent(*args, **kwargs)
        taken_over(run)
        return reply

    monkeypatch.setattr(agents.runtime.step, "streamed_send", taken_over_meanwhile)

    outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")

    assert (outcome.action, outcome.reason) == ("skipped", "lease lost")
    assert len(fake_provider.requests) == 1
    assert not AgentStep.objects.filter(run=run).exists()
    assert not RunMessage.objects.filter(run=run).exclude(role="user").exists()
    stored = AgentRun.objects.get(id=run.id)
    assert (stored.status, stored.lease_owner, stored.prompt_tokens_total) == ("running", "w2", 0)
    assert calibration_samples(run) == 0


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_tool_result_and_its_records_status_are_one_statement(fake_provider, monkeypatch):
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]})))
    run = started_run(fake_provider)
    stored = agents.runtime.tool_calls._store_result
    seen: list[tuple[str, int, str]] = []

    def store(*args, **kwargs):
        before = ToolCallRecord.objects.get(run=run, call_id="c1").status
        with CaptureQueriesContext(connection) as statements:
            stored(*args, **kwargs)
        seen.append((before, len(statements), ToolCallRecord.objects.get(run=run, call_id="c1").status))

    monkeypatch.setattr(agents.runtime.tool_calls, "_store_result", store)

    outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")

    assert outcome.action == "advanced"
    assert seen == [("started", 1, "completed")]
    assert RunMessage.objects.filter(run=run, role="tool", tool_call_id="c1").count() == 1


@pytest.mark.parametrize("database", DATABASES)
def test_a_tool_call_whose_lease_was_lost_as_it_ran_stores_no_result_and_stays_started(
    database, fake_provider, monkeypatch
):
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]})))
    run = started_run(fake_provider)
    executed = agents.runtime.tool_calls._execute

    def taken_over_meanwhile(*args, **kwargs):
        result = executed(*args, **kwargs)
        taken_over(run)
        return result

    monkeypatch.setattr(agents.runtime.tool_calls, "_execute", taken_over_meanwhile)

    outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")

    assert (outcome.action, outcome.reason) == ("skipped", "lease lost")
    assert ToolCallRecord.objects.get(run=run, call_id="c1").status == "started"
    assert not RunMessage.objects.filter(run=run, role="tool").exists()
    assert AgentRun.objects.get(id=run.id).next_step_index == 0


def advances(monkeypatch) -> list[int]:
    """The next step indices :func:`run_advance` was called with, as a step called it."""
    called: list[int] = []
    original = agents.runtime.step.run_advance

    def spy(*, run, worker, next_index):
        called.append(next_index)
        return original(run=run, worker=worker, next_index=next_index)

    monkeypatch.setattr(agents.runtime.step, "run_advance", spy)
    return called


@pytest.mark.parametrize("database", DATABASES)
def test_the_last_tool_results_write_moves_the_run_on_and_releases_the_lease(
    database, fake_provider, monkeypatch
):
    fake_provider.script(
        Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]}), ("c2", "snippets_by_tag", {}))
    )
    run = started_run(fake_provider)
    called = advances(monkeypatch)

    outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")

    assert outcome.action == "advanced"
    assert called == []  # no statement of its own
    stored = AgentRun.objects.get(id=run.id)
    assert (stored.next_step_index, stored.lease_owner, stored.lease_expires_at) == (1, "", None)
    results = RunMessage.objects.filter(run=run, role="tool").order_by("position")
    assert list(results.values_list("tool_call_id", flat=True)) == ["c1", "c2"]


@pytest.mark.parametrize("database", DATABASES)
def test_a_redacted_last_result_records_its_event_before_the_run_moves_on(
    database, fake_provider, monkeypatch
):
    token = "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    tool = Tool(
        name="deploy_token",
        description="The deploy token.",
        parameters={"type": "object", "properties": {}},
        group="content",
        effect=ToolEffect.READ_ONLY,
        handler=lambda context, arguments: f"Use {token}.",
    )
    REGISTRY.register(tool)
    try:
        fake_provider.script(Reply.tools(("c1", "deploy_token", {})))
        run = started_run(fake_provider)
        called = advances(monkeypatch)

        outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")
    finally:
        REGISTRY.unregister(tool.name)

    assert outcome.action == "advanced"
    assert called == [1]  # moved on by its own statement, after the event
    assert RunMessage.objects.get(run=run, role="tool").content == "Use [REDACTED:github_token]."
    assert GovernanceEvent.objects.filter(decision="secret_redacted", run=str(run.id), step=0).count() == 1
    assert AgentRun.objects.get(id=run.id).next_step_index == 1
