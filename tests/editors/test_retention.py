"""Retention: expiries per deployment, what is due (command and admin page), the purge, and what it
keeps: governance events, receipts and usage, with the governance log still verifying."""

from __future__ import annotations

import datetime
from io import StringIO

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.utils import timezone

from agents.models import AgentRun, AgentStep, RunMessage, RunStatus
from catalog.models import ApiClient, Configuration
from config.celery import app
from editors.demo import demo_seed
from editors.retention import KINDS, pseudonymization_mappings_purge, retention_plan
from editors.tasks import purge_expired_task
from evaluations.models import Evaluation, EvaluationResult
from gateway.models import StoredResponse
from governance.chain.verify import governance_log_verify
from governance.chain.writes import anchor_record
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import run_to_end
from tests.canaries import generate_canaries

pytestmark = pytest.mark.django_db

CANARY = generate_canaries(seed=20261207)[0]
NOW = timezone.now()
LONG_AGO = NOW - datetime.timedelta(days=40)


@pytest.fixture
def content(django_capture_on_commit_callbacks):
    """Two finished runs (one 40 days old), one run in flight created 40 days ago, two stored
    responses (one 40 days old), two finished evaluations (one 40 days old); every run recorded a
    ``secret_redacted`` event, and the log is anchored."""
    demo_seed()
    configuration = Configuration.objects.get(identifier="demo-assistant")

    def run(text: str) -> AgentRun:
        return run_to_end(
            django_capture_on_commit_callbacks,
            configuration,
            input_text=f"{text}: {CANARY.context}",
            receiver_zone=TrustZone.LOCAL,
        )

    old, recent = run("an old run"), run("a recent run")
    assert {old.status, recent.status} == {RunStatus.COMPLETED}
    AgentRun.objects.filter(pk=old.pk).update(finished_at=LONG_AGO)
    in_flight = AgentRun.objects.create(
        configuration=configuration, input_text="still running", input_data_class=DataClass.PUBLIC_CONTENT
    )
    AgentRun.objects.filter(pk=in_flight.pk).update(created_at=LONG_AGO, updated_at=LONG_AGO)
    responses = [
        StoredResponse.objects.create(
            response_id=f"resp_{n}",
            api_client=demo_client(),
            configuration=configuration,
            request_id=f"req{n}",
            label=DataClass.PUBLIC_CONTENT,
            receiver_label=DataClass.PUBLIC_CONTENT,
            conversation=[{"message": {"role": "user", "content": "hello"}}],
        )
        for n in range(2)
    ]
    StoredResponse.objects.filter(pk=responses[0].pk).update(created_at=LONG_AGO)
    evaluations = [evaluation_make(configuration, finished_at=when) for when in (LONG_AGO, NOW)]
    anchor_record()
    return {"old": old, "recent": recent, "in_flight": in_flight, "evaluations": evaluations}


def demo_client() -> ApiClient:
    return ApiClient.objects.order_by("pk").first()


def evaluation_make(configuration: Configuration, *, finished_at: datetime.datetime) -> Evaluation:
    evaluation = Evaluation.objects.create(
        configuration=configuration,
        model=configuration.model,
        status="finished",
        started_by="editor",
        finished_at=finished_at,
    )
    EvaluationResult.objects.create(
        evaluation=evaluation,
        case_name="greets",
        case_input="Say hello to Ada.",
        position=0,
        side="drafted",
        outcome="answered",
        answer="Hello, Ada.",
        receipt={"label": "public_content"},
        checks=[{"expectation": "Hello", "held": True}],
        passed=True,
    )
    return evaluation


@pytest.fixture
def expiries(settings):
    settings.RETENTION_STORED_RESPONSES_DAYS = 30
    settings.RETENTION_RUN_TRANSCRIPTS_DAYS = 30
    settings.RETENTION_EVALUATION_RESULTS_DAYS = 30


def test_nothing_expires_by_default(content):
    assert [(line.kind.setting, line.days, line.rows) for line in retention_plan()] == [
        ("RETENTION_STORED_RESPONSES_DAYS", None, 0),
        ("RETENTION_RUN_TRANSCRIPTS_DAYS", None, 0),
        ("RETENTION_EVALUATION_RESULTS_DAYS", None, 0),
    ]
    output = StringIO()
    call_command("purge_expired", stdout=output)
    assert output.getvalue() == (
        "stored responses: kept forever (RETENTION_STORED_RESPONSES_DAYS is 0)\n"
        "run transcripts: kept forever (RETENTION_RUN_TRANSCRIPTS_DAYS is 0)\n"
        "evaluation results: kept forever (RETENTION_EVALUATION_RESULTS_DAYS is 0)\n"
    )
    assert StoredResponse.objects.count() == 2
    assert AgentRun.objects.filter(content_purged_at__isnull=False).count() == 0


def test_a_dry_run_names_what_is_due_and_purges_nothing(content, expiries):
    messages = RunMessage.objects.count()
    output = StringIO()
    call_command("purge_expired", "--dry-run", stdout=output)
    assert [line.split(" (")[0] for line in output.getvalue().splitlines()] == [
        "stored responses: 1 due",
        "run transcripts: 1 due",
        "evaluation results: 1 due",
    ]
    assert (StoredResponse.objects.count(), RunMessage.objects.count()) == (2, messages)
    assert AgentRun.objects.get(pk=content["old"].pk).input_text != ""


def test_the_purge_removes_expired_content_and_keeps_events_receipts_and_the_chain(content, expiries):
    old, recent, in_flight = content["old"], content["recent"], content["in_flight"]
    events = list(GovernanceEvent.objects.order_by("id").values_list("id", "hash"))
    assert GovernanceEvent.objects.filter(correlation_id=str(old.pk)).exists()
    receipts = dict(AgentStep.objects.values_list("id", "receipt"))
    assert any(receipts.values())
    recent_messages = RunMessage.objects.filter(run=recent).count()
    assert RunMessage.objects.filter(run=old).count() > 0

    output = StringIO()
    call_command("purge_expired", stdout=output)

    assert [line.split(" (")[0] for line in output.getvalue().splitlines()] == [
        "stored responses: 1 purged",
        "run transcripts: 1 purged",
        "evaluation results: 1 purged",
    ]
    assert list(StoredResponse.objects.values_list("response_id", flat=True)) == ["resp_1"]
    old.refresh_from_db()
    assert (old.input_text, old.caller_context, old.conversation) == ("", [], {})
    assert old.content_purged_at is not None
    assert (old.status, old.completion_tokens_total > 0) == (RunStatus.COMPLETED, True)
    assert RunMessage.objects.filter(run=old).count() == 0
    assert RunMessage.objects.filter(run=recent).count() == recent_messages
    assert AgentRun.objects.get(pk=in_flight.pk).input_text == "still running"  # never while in flight
    old_evaluation, new_evaluation = content["evaluations"]
    assert list(EvaluationResult.objects.filter(evaluation=old_evaluation).values_list(
        "case_input", "answer", "outcome", "passed", "receipt", "checks"
    )) == [("", "", "answered", True, {"label": "public_content"}, [{"expectation": "Hello", "held": True}])]  # fmt: skip
    assert EvaluationResult.objects.get(evaluation=new_evaluation).answer == "Hello, Ada."

    assert list(GovernanceEvent.objects.order_by("id").values_list("id", "hash")) == events
    assert dict(AgentStep.objects.values_list("id", "receipt")) == receipts
    anchor_record()
    verification = governance_log_verify()
    assert verification.intact, verification.breaks
    assert verification.events == len(events)


def test_a_second_purge_finds_nothing_due(content, expiries):
    call_command("purge_expired", stdout=StringIO())
    assert [line.rows for line in retention_plan()] == [0, 0, 0]


def test_the_admin_page_shows_what_would_be_purged(content, expiries, admin_client):
    page = admin_client.get("/admin/agents/agentrun/retention/")
    assert page.status_code == 200
    html = page.content.decode()
    for kind in ("stored responses", "run transcripts", "evaluation results"):
        assert f'<tr data-kind="{kind}">' in html
    assert html.count('<td class="due">1</td>') == 3
    assert "30 days" in html
    assert "/admin/agents/agentrun/retention/" in admin_client.get("/admin/agents/agentrun/").content.decode()
    assert StoredResponse.objects.count() == 2  # the page purges nothing


def test_beat_purges_periodically_through_the_task(content, expiries):
    entry = django_settings.CELERY_BEAT_SCHEDULE["purge-expired-content"]
    assert entry == {"task": "editors.tasks.purge_expired_task", "schedule": 3600}
    assert entry["task"] in app.tasks
    assert purge_expired_task() == {"stored responses": 1, "run transcripts": 1, "evaluation results": 1}


def test_pseudonymization_mappings_have_a_purge_hook_and_nothing_to_purge():
    assert pseudonymization_mappings_purge(before=NOW, now=NOW) == 0
    assert [kind.name for kind in KINDS] == ["stored responses", "run transcripts", "evaluation results"]
