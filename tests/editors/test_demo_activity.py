"""A fresh demo has something to read: runs seeded through the real runtime (one completed with a tool
call, one refused on demo-external) on the dashboard, evaluation sets that pass on demo-assistant and
show a refusal on demo-external, answered with text, and a configuration whose tool waits for approval."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from agents.models import AgentRun, RunMessage, ToolApproval, ToolCallRecord
from catalog.models import Configuration
from editors.dashboard import editors_dashboard
from editors.demo import DEMO_APPROVALS_CONFIGURATION, LOCAL_ANSWER
from evaluations.models import EvaluationResult, ResultOutcome
from evaluations.services import evaluation_start
from governance.actors import Actor
from governance.models import GovernanceEvent

pytestmark = pytest.mark.django_db


def seed(capture) -> dict[str, str]:
    out = StringIO()
    with capture(execute=True):
        call_command("seed_demo", stdout=out)
    lines = [line.split(":", 1) for line in out.getvalue().splitlines() if ":" in line]
    return {label.strip(): value.strip() for label, value in lines}


def test_a_fresh_demo_seeds_a_completed_and_a_refused_run_once_and_the_dashboard_shows_them(
    django_capture_on_commit_callbacks,
):
    seed(django_capture_on_commit_callbacks)

    runs = {run.configuration.identifier: run for run in AgentRun.objects.select_related("configuration")}
    assert sorted(runs) == ["demo-assistant", "demo-external"]
    assistant, external = runs["demo-assistant"], runs["demo-external"]
    assert (assistant.status, assistant.termination_reason) == ("completed", "completed")
    assert list(ToolCallRecord.objects.filter(run=assistant).values_list("tool_name", flat=True)) == [
        "snippets_by_tag"
    ]
    assert (external.status, external.termination_reason, external.error_code) == (
        "failed", "policy_denied", "context_refused",
    )  # fmt: skip
    assert GovernanceEvent.objects.filter(
        correlation_id=str(external.pk), decision="context_blocked"
    ).exists()
    panels = {panel.identifier: panel for panel in editors_dashboard().panels}
    assert [point.run_id for point in panels["demo-assistant"].points] == [str(assistant.pk)]
    assert dict(panels["demo-external"].refusals)  # the refusal counted at once

    seed(django_capture_on_commit_callbacks)  # a second start seeds no more runs

    assert AgentRun.objects.count() == 2


def evaluate(identifier: str, capture) -> list[EvaluationResult]:
    configuration = Configuration.objects.select_related("model").get(identifier=identifier)
    with capture(execute=True):
        evaluation = evaluation_start(
            configuration=configuration, model=configuration.model, actor=Actor.system("test")
        )
    evaluation.refresh_from_db()
    assert evaluation.status == "finished"
    return list(evaluation.results.order_by("position", "side"))


def test_the_demo_sets_pass_on_demo_assistant_with_text_and_show_a_refusal_on_demo_external(
    django_capture_on_commit_callbacks,
):
    seed(django_capture_on_commit_callbacks)

    assistant = evaluate("demo-assistant", django_capture_on_commit_callbacks)
    external = evaluate("demo-external", django_capture_on_commit_callbacks)

    assert [(r.case_name, r.side, r.outcome, r.answer, r.tool_calls, r.passed) for r in assistant] == [
        ("launch note", "drafted", ResultOutcome.ANSWERED, LOCAL_ANSWER, [], True),
        ("launch note", "live", ResultOutcome.ANSWERED, LOCAL_ANSWER, [], True),
        ("customer reply", "drafted", ResultOutcome.ANSWERED, LOCAL_ANSWER, [], True),
        ("customer reply", "live", ResultOutcome.ANSWERED, LOCAL_ANSWER, [], True),
    ]
    assert [(r.case_name, r.outcome, r.answer, r.passed) for r in external] == [
        ("launch note, refused", ResultOutcome.REFUSED, "", True),
        ("launch note, refused", ResultOutcome.REFUSED, "", True),
    ]
    assert [
        source["identifier"] for source in external[0].decision["sources"] if source["outcome"] == "refused"
    ] == ["incident-runbook"]


def test_the_demo_approvals_configuration_waits_for_a_person_and_resumes_once_approved(
    django_capture_on_commit_callbacks,
):
    credentials = seed(django_capture_on_commit_callbacks)
    api = Client(headers={"Authorization": f"Bearer {credentials['API token']}"})

    with django_capture_on_commit_callbacks(execute=True):
        created = api.post(
            "/api/v1/runs",
            {
                "configuration": DEMO_APPROVALS_CONFIGURATION,
                "input": "Please notify the editors: the draft is ready.",
            },
            content_type="application/json",
        )
    assert created.status_code == 202, created.content
    run_id = created.json()["id"]
    assert AgentRun.objects.get(pk=run_id).status == "awaiting_approval"
    [pending] = api.get(f"/api/v1/runs/{run_id}/approvals").json()
    assert (pending["tool_name"], pending["decision"]) == ("notify_editors", "pending")

    with django_capture_on_commit_callbacks(execute=True):
        decided = api.post(
            f"/api/v1/runs/{run_id}/approvals/{pending['id']}",
            {"decision": "approve", "reason": "fine"},
            content_type="application/json",
        )

    assert decided.status_code == 200, decided.content
    run = AgentRun.objects.get(pk=run_id)
    assert (run.status, ToolApproval.objects.get().decision) == ("completed", "approved")
    answer = RunMessage.objects.filter(run=run, role="assistant").order_by("-position").first()
    assert answer.content == LOCAL_ANSWER
