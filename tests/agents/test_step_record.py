"""A step's record takes one typed StepRecord; a step run reports a StepAction."""

from __future__ import annotations

import time

import pytest

from agents.models import AgentStep, RunMessage
from agents.runtime.leases import lease_claim
from agents.runtime.outcome import Ended
from agents.runtime.plan import send_plan
from agents.runtime.record import StepRecord, completed_step_record, step_record
from agents.runtime.request import SendRequest
from agents.runtime.step import StepAction, step_run
from agents.services import run_create
from governance.errors import ContextRefused
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db


def claimed_record(fake_provider, **fields) -> StepRecord:
    run = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )
    claimed = lease_claim(run_id=str(run.id), step_index=0, worker="w1").run
    assert claimed is not None
    plan = send_plan(
        configuration=claimed.configuration,
        request=SendRequest(task_input="Go.", input_data_class=DataClass.PUBLIC_CONTENT),
    )
    refused = ContextRefused("refused", extra={})
    return StepRecord(run=claimed, index=0, outcome=Ended(plan, refused), started=time.monotonic(), **fields)


def test_a_refused_step_is_recorded_with_the_plans_model_and_no_usage(fake_provider):
    record = claimed_record(fake_provider, status="refused", error="context_refused")
    step_record(record)
    step = AgentStep.objects.get(run=record.run)
    assert (
        step.index,
        step.status,
        step.error_code,
        step.model_id,
        step.provider,
        step.usage_provenance,
        step.estimated_prompt_tokens,
        step.breakdown,
    ) == (
        0,
        "refused",
        "context_refused",
        record.plan.model.pk,
        record.plan.model.provider.identifier,
        "unavailable",
        None,
        {},
    )


def test_a_completed_record_without_its_reply_stores_nothing(fake_provider):
    record = claimed_record(fake_provider, status="completed")
    with pytest.raises(ValueError):
        completed_step_record(record, worker="w1", position=0)
    assert AgentStep.objects.filter(run=record.run).count() == 0
    assert RunMessage.objects.filter(run=record.run).count() == 0
    assert fake_provider.requests == []


def test_a_step_reports_what_it_did_as_a_step_action(fake_provider, django_capture_on_commit_callbacks):
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["x"]})), Reply(text="done"))
    run = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )
    with django_capture_on_commit_callbacks(execute=False):
        outcomes = [step_run(run_id=str(run.id), step_index=index, worker="w1") for index in (0, 1, 1)]
    assert [outcome.action for outcome in outcomes] == [
        StepAction.ADVANCED,
        StepAction.FINISHED,
        StepAction.SKIPPED,
    ]
    assert all(isinstance(outcome.action, StepAction) for outcome in outcomes)
    assert StepAction.values == ["skipped", "advanced", "finished"]
