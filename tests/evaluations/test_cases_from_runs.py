"""Evaluation cases made from production runs: the run's text as it was stored (redacted), its labels
(the most sensitive class it sent), its source named; a run made into a case once; and a case above a
model's zone refused at evaluation with nothing on the wire."""

from __future__ import annotations

import pytest

from agents.models import AgentRun
from agents.services import CallerContextItem, run_create
from evaluations.datasets import evaluation_cases_from_runs
from evaluations.models import EvaluationCase, EvaluationResult, ResultOutcome
from evaluations.services import evaluation_start
from governance.actors import Actor
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.editor_accounts import editor_make
from tests.fakes.provider_server import FakeProvider

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("on_both_databases")]


@pytest.fixture
def fake():
    with FakeProvider() as provider:
        yield provider


def queued(configuration, text: str, *context: CallerContextItem) -> AgentRun:
    return run_create(
        configuration=configuration,
        input_text=text,
        input_data_class=DataClass.PUBLIC_CONTENT,
        caller_context=context,
    )


def test_a_run_becomes_a_case_with_its_labels_and_its_text_as_stored(fake):
    configuration = fake_configuration(fake, zone=TrustZone.EXTERNAL_GLOBAL, identifier="support")
    canary = next(c for c in generate_canaries(seed=20261207) if c.kind == "github_classic_pat")
    item = CallerContextItem("logs", f"The job failed. {canary.context}", DataClass.SYSTEM_DIAGNOSTICS)
    run = queued(configuration, "Why did the nightly job fail?", item)

    outcome = evaluation_cases_from_runs(runs=[run])

    case = EvaluationCase.objects.get()
    assert outcome.made == (case,) and outcome.skipped == ()
    assert (case.configuration, case.name, case.input, case.data_class, case.source) == (
        configuration,
        f"from run {str(run.pk)[:8]}",
        "Why did the nightly job fail?",
        DataClass.SYSTEM_DIAGNOSTICS,
        f"run {run.pk}",
    )
    assert case.caller_context == f"logs:\n{run.caller_context[0]['text']}"
    assert not canary.leaks(case.caller_context) and "[REDACTED:" in case.caller_context


def test_a_run_already_made_into_a_case_is_not_made_again(fake):
    configuration = fake_configuration(fake, identifier="support")
    first, second = queued(configuration, "One?"), queued(configuration, "Two?")
    evaluation_cases_from_runs(runs=[first])

    outcome = evaluation_cases_from_runs(runs=[first, second])

    assert outcome.skipped == (str(first.pk),)
    assert [(c.input, c.position) for c in EvaluationCase.objects.order_by("position")] == [
        ("One?", 0),
        ("Two?", 1),
    ]


def test_a_case_from_a_run_above_the_models_zone_is_refused_at_evaluation(
    fake, tasks_in_process, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake, zone=TrustZone.EXTERNAL_GLOBAL, identifier="support")
    item = CallerContextItem("logs", "disk full on node 3", DataClass.SYSTEM_DIAGNOSTICS)
    evaluation_cases_from_runs(runs=[queued(configuration, "What failed?", item)])

    with django_capture_on_commit_callbacks(execute=True):
        evaluation = evaluation_start(
            configuration=configuration, model=configuration.model, actor=Actor.system("test")
        )

    results = EvaluationResult.objects.filter(evaluation=evaluation)
    assert sorted(results.values_list("side", "outcome")) == [
        ("drafted", ResultOutcome.REFUSED),
        ("live", ResultOutcome.REFUSED),
    ]
    assert fake.bodies() == []


def test_the_runs_admin_action_makes_cases(fake, client):
    configuration = fake_configuration(fake, identifier="support")
    run = queued(configuration, "Where is my parcel?")
    client.force_login(editor_make())

    response = client.post(
        "/admin/agents/agentrun/",
        {"action": "make_evaluation_cases", "_selected_action": [str(run.pk)]},
        follow=True,
    )

    assert response.status_code == 200
    case = EvaluationCase.objects.get()
    assert case.source == f"run {run.pk}"
    assert (
        f"Made the case “support: from run {str(run.pk)[:8]}” (public_content)." in response.content.decode()
    )
