"""Evaluations of drafts: both sides go through the governed send and are stored with the versions they
used; a case above the model's zone is refused like any send and reaches no provider; a draft is sent
under no looser class than live; a configuration may require a passing evaluation before a publish."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone

from catalog.models import Configuration
from evaluations.errors import EvaluationInvalid
from evaluations.models import Evaluation, EvaluationCase, EvaluationResult, EvaluationStatus, ResultOutcome
from evaluations.services import evaluation_run, evaluation_start
from governance.actors import Actor
from governance.drafts import draft_digest, draft_get, draft_save
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, Decision, TrustZone
from snippets.models import Snippet
from tests.agents.runs import fake_configuration
from tests.editor_accounts import editor_make, snippet_admin_form
from tests.factories import snippet_make
from tests.fakes.provider_server import FakeProvider, Reply

pytestmark = pytest.mark.django_db

LIVE_TEXT = "Answer in a calm, formal tone."
DRAFT_TEXT = "Answer in a warm, brief tone and greet the customer by their first name."
ACTOR = Actor.system("test")


@pytest.fixture
def fake():
    with FakeProvider() as provider:
        yield provider


def tone_setup(fake: FakeProvider, *, zone: str = TrustZone.LOCAL, **fields) -> tuple[Configuration, Snippet]:
    configuration = fake_configuration(
        fake, zone=zone, identifier="support", system_prompt="You answer customers.", snippet_tags=["tone"],
        allowed_tool_groups=[], **fields,
    )  # fmt: skip
    snippet = snippet_make(identifier="tone", name="Tone", text=LIVE_TEXT, tags=("tone",))
    return configuration, snippet


def case_make(configuration: Configuration, name: str, **fields) -> EvaluationCase:
    values = {"input": "Where is my parcel?", "data_class": DataClass.PUBLIC_CONTENT, **fields}
    case = EvaluationCase(configuration=configuration, name=name, **values)
    case.full_clean()
    case.save()
    return case


def draft_snippet(snippet: Snippet, text: str) -> None:
    """Save a change of ``snippet`` as an editor does in admin: a draft, the live row unchanged."""
    client = Client()
    client.force_login(editor_make(f"editor-{Snippet.objects.count()}-{len(text)}"))
    response = client.post(
        f"/admin/snippets/snippet/{snippet.pk}/change/", snippet_admin_form(snippet, text=text)
    )
    assert response.status_code == 302
    assert Snippet.objects.get(pk=snippet.pk).text == snippet.text


def evaluate(configuration: Configuration, capture) -> Evaluation:
    with capture(execute=True):
        evaluation = evaluation_start(configuration=configuration, model=configuration.model, actor=ACTOR)
    evaluation.refresh_from_db()
    return evaluation


def system_text(body: dict) -> str:
    return body["messages"][0]["content"]


def test_an_evaluation_sends_live_and_drafted_and_stores_both_with_their_versions(
    fake, django_capture_on_commit_callbacks
):
    configuration, snippet = tone_setup(fake)
    case_make(configuration, "parcel", must_contain="parcel", max_tokens=50, must_be_permitted=True)
    case_make(configuration, "refund", input="Can I get a refund?", must_not_contain="formal")
    draft_snippet(snippet, DRAFT_TEXT)
    fake.script(
        Reply("Your parcel is on its way.", completion_tokens=7),
        Reply("Your parcel arrives soon.", completion_tokens=6),
        Reply("Refunds take a formal request.", completion_tokens=6),
        Reply("Yes, within 30 days.", completion_tokens=6),
    )

    evaluation = evaluate(configuration, django_capture_on_commit_callbacks)

    assert (evaluation.status, evaluation.done, evaluation.total, evaluation.passed, evaluation.error) == (
        EvaluationStatus.FINISHED, 4, 4, True, "",
    )  # fmt: skip
    bodies = fake.bodies()
    assert [LIVE_TEXT in system_text(body) for body in bodies] == [True, False, True, False]
    assert [DRAFT_TEXT in system_text(body) for body in bodies] == [False, True, False, True]
    results = list(EvaluationResult.objects.filter(evaluation=evaluation).order_by("position", "side"))
    assert [(r.case_name, r.side, r.outcome, r.answer, r.passed) for r in results] == [
        ("parcel", "drafted", ResultOutcome.ANSWERED, "Your parcel arrives soon.", True),
        ("parcel", "live", ResultOutcome.ANSWERED, "Your parcel is on its way.", True),
        ("refund", "drafted", ResultOutcome.ANSWERED, "Yes, within 30 days.", True),
        ("refund", "live", ResultOutcome.ANSWERED, "Refunds take a formal request.", False),
    ]
    assert results[0].checks == [
        {"expectation": "must be permitted", "held": True},
        {"expectation": "must contain “parcel”", "held": True},
        {"expectation": "at most 50 tokens (took 6)", "held": True},
    ]
    assert results[3].checks == [{"expectation": "must not contain “formal”", "held": False}]
    assert [(r.case_input, r.case_data_class) for r in results[::2]] == [
        ("Where is my parcel?", DataClass.PUBLIC_CONTENT),
        ("Can I get a refund?", DataClass.PUBLIC_CONTENT),
    ]
    assert [r.completion_tokens for r in results] == [6, 7, 6, 6]
    assert all(r.receipt["decision_id"] and r.decision["permitted"] for r in results)
    assert all(r.breakdown["estimated"] == r.breakdown["system_prompt"] + r.breakdown["snippets"]
               + r.breakdown["transcript"] for r in results)  # fmt: skip
    assert results[0].breakdown["snippets"] > results[1].breakdown["snippets"]  # the longer drafted text
    # The live versions both sides started from, and the draft applied by its digest.
    assert [(pin["kind"], pin["identifier"]) for pin in evaluation.pins] == [
        ("configuration", "support"), ("snippet", "tone"),
    ]  # fmt: skip
    snippet_version = snippet.history.order_by("-history_id").first()
    assert evaluation.pins[1]["history_id"] == snippet_version.history_id
    assert evaluation.drafts == [
        {"kind": "snippets.snippet", "identifier": "tone", "object_id": str(snippet.pk),
         "digest": draft_digest(draft_get(snippet))},
    ]  # fmt: skip


def test_an_evaluation_stays_readable_after_its_draft_is_published(
    fake, django_capture_on_commit_callbacks, admin_client
):
    configuration, snippet = tone_setup(fake)
    case_make(configuration, "parcel")
    draft_snippet(snippet, DRAFT_TEXT)
    fake.script("Live answer.", "Drafted answer.")
    evaluation = evaluate(configuration, django_capture_on_commit_callbacks)

    response = admin_client.post(f"/admin/snippets/snippet/{snippet.pk}/publish/")

    assert response.status_code == 302
    assert Snippet.objects.get(pk=snippet.pk).text == DRAFT_TEXT
    page = admin_client.get(f"/admin/evaluations/evaluation/{evaluation.pk}/change/")
    assert page.status_code == 200
    row = page.context["rows"][0]
    assert (row["name"], row["reference"]["result"].answer, row["compared"]["result"].answer) == (
        "parcel", "Live answer.", "Drafted answer.",
    )  # fmt: skip
    assert f"version {evaluation.pins[1]['history_id']}" in page.content.decode()
    receipt = row["reference"]["result"].receipt
    html = page.content.decode()
    assert f'<tr><th scope="row">Decision</th><td>{receipt["decision_id"]}</td></tr>' in html
    assert "<tr><td>Snippet</td><td>tone</td><td>Public content</td><td>Allowed</td>" in html
    assert "&#x27;decision_id&#x27;" not in html  # the receipt is a table, not its JSON
    listed = admin_client.get("/admin/evaluations/evaluation/").content.decode()
    assert f"evaluation {evaluation.pk} of support" in listed and "2 of 2 sends" in listed
    cases = admin_client.get("/admin/evaluations/evaluationcase/").content.decode()
    assert ">parcel</a>" in cases


def test_a_case_above_the_models_zone_is_refused_on_both_sides_and_nothing_reaches_the_wire(
    fake, django_capture_on_commit_callbacks
):
    configuration, snippet = tone_setup(fake, zone=TrustZone.EXTERNAL_GLOBAL)
    case_make(configuration, "diagnostics", input="Why did the nightly job fail?",
              data_class=DataClass.SYSTEM_DIAGNOSTICS, must_be_permitted=True)  # fmt: skip
    draft_snippet(snippet, DRAFT_TEXT)

    evaluation = evaluate(configuration, django_capture_on_commit_callbacks)

    assert fake.bodies() == []
    assert (evaluation.status, evaluation.passed) == (EvaluationStatus.FINISHED, False)
    results = list(EvaluationResult.objects.filter(evaluation=evaluation).order_by("side"))
    assert [(r.side, r.outcome, r.answer, r.receipt, r.checks) for r in results] == [
        (side, ResultOutcome.REFUSED, "", {}, [{"expectation": "must be permitted", "held": False}])
        for side in ("drafted", "live")
    ]
    refused = [s for s in results[0].decision["sources"] if s["outcome"] == "refused"]
    assert [(s["kind"], s["data_class"]) for s in refused] == [("task_input", DataClass.SYSTEM_DIAGNOSTICS)]
    events = GovernanceEvent.objects.filter(decision=Decision.CONTEXT_BLOCKED, configuration="support")
    assert sorted(events.values_list("source_kind", "data_class")) == [
        ("task_input", DataClass.SYSTEM_DIAGNOSTICS), ("task_input", DataClass.SYSTEM_DIAGNOSTICS),
    ]  # fmt: skip


def test_a_draft_that_lowers_a_snippets_class_is_sent_under_its_live_class(
    fake, django_capture_on_commit_callbacks, admin_client
):
    configuration, _ = tone_setup(fake, zone=TrustZone.EXTERNAL_EU)
    runbook = snippet_make(identifier="runbook", name="Runbook", text="Restart with make restart.",
                           tags=("tone",), data_class=DataClass.SYSTEM_DIAGNOSTICS,
                           ceiling=TrustZone.PRIVATE_HOSTED)  # fmt: skip
    form = snippet_admin_form(runbook, text="Restart it.", data_class=DataClass.PUBLIC_CONTENT,
                              ceiling=TrustZone.EXTERNAL_GLOBAL)  # fmt: skip
    assert admin_client.post(f"/admin/snippets/snippet/{runbook.pk}/change/", form).status_code == 302
    assert draft_get(runbook).values["data_class"] == DataClass.PUBLIC_CONTENT
    case_make(configuration, "parcel")

    evaluation = evaluate(configuration, django_capture_on_commit_callbacks)

    assert fake.bodies() == []
    drafted = EvaluationResult.objects.get(evaluation=evaluation, side="drafted")
    assert drafted.outcome == ResultOutcome.REFUSED
    refused = [s for s in drafted.decision["sources"] if s["outcome"] == "refused"]
    assert [(s["identifier"], s["data_class"]) for s in refused] == [
        ("runbook", DataClass.SYSTEM_DIAGNOSTICS)
    ]


def test_an_evaluation_without_cases_is_refused_and_nothing_is_stored_or_enqueued(
    fake, django_capture_on_commit_callbacks
):
    configuration, _ = tone_setup(fake)
    with django_capture_on_commit_callbacks() as callbacks, pytest.raises(EvaluationInvalid) as refused:
        evaluation_start(configuration=configuration, model=configuration.model, actor=ACTOR)
    assert refused.value.message == "Configuration 'support' has no evaluation cases."
    assert (callbacks, Evaluation.objects.count(), fake.bodies()) == ([], 0, [])


def test_drafts_changed_after_the_start_fail_the_evaluation_before_anything_is_sent(
    fake, django_capture_on_commit_callbacks
):
    configuration, snippet = tone_setup(fake)
    case_make(configuration, "parcel")
    draft_snippet(snippet, DRAFT_TEXT)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        evaluation = evaluation_start(configuration=configuration, model=configuration.model, actor=ACTOR)
    assert len(callbacks) == 1
    draft_snippet(snippet, "Answer as a pirate.")

    evaluation = evaluation_run(evaluation_id=evaluation.pk)

    assert (evaluation.status, evaluation.passed) == (EvaluationStatus.FAILED, False)
    assert evaluation.error.startswith("The drafts changed after the evaluation started")
    assert (fake.bodies(), EvaluationResult.objects.count()) == ([], 0)


def test_a_case_deleted_after_the_start_fails_the_evaluation_before_anything_is_sent(
    fake, django_capture_on_commit_callbacks
):
    configuration, _ = tone_setup(fake)
    case_make(configuration, "parcel")
    with django_capture_on_commit_callbacks(execute=False):
        evaluation = evaluation_start(configuration=configuration, model=configuration.model, actor=ACTOR)
    EvaluationCase.objects.all().delete()

    evaluation = evaluation_run(evaluation_id=evaluation.pk)

    assert (evaluation.status, evaluation.error) == (
        EvaluationStatus.FAILED,
        "A case was deleted after the evaluation started; start a new one.",
    )
    assert (fake.bodies(), EvaluationResult.objects.count()) == ([], 0)


def test_an_evaluation_whose_worker_died_is_taken_over_after_its_lease_and_sends_only_what_is_missing(
    fake, django_capture_on_commit_callbacks
):
    configuration, _ = tone_setup(fake)
    case_make(configuration, "parcel")
    case_make(configuration, "refund", input="Can I get a refund?")
    with django_capture_on_commit_callbacks(execute=False):
        evaluation = evaluation_start(configuration=configuration, model=configuration.model, actor=ACTOR)
    fake.script("First.", "Second.", "Third.", "Fourth.")
    evaluation_run(evaluation_id=evaluation.pk)
    # As if the worker had died after storing the first case: its other results are gone, it still runs.
    EvaluationResult.objects.filter(evaluation=evaluation, position=1).delete()
    held = timezone.now() + timedelta(minutes=5)
    Evaluation.objects.filter(pk=evaluation.pk).update(
        status=EvaluationStatus.RUNNING, done=2, lease_until=held
    )

    assert evaluation_run(evaluation_id=evaluation.pk).status == EvaluationStatus.RUNNING  # still held
    assert len(fake.bodies()) == 4
    Evaluation.objects.filter(pk=evaluation.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    fake.script("Fifth.", "Sixth.")
    evaluation = evaluation_run(evaluation_id=evaluation.pk)

    assert (evaluation.status, evaluation.done, evaluation.passed, evaluation.lease_until) == (
        EvaluationStatus.FINISHED, 4, True, None,
    )  # fmt: skip
    assert len(fake.bodies()) == 6
    answers = EvaluationResult.objects.filter(evaluation=evaluation).order_by("position", "side")
    assert list(answers.values_list("answer", flat=True)) == ["Second.", "First.", "Sixth.", "Fifth."]


def publish(client: Client, snippet: Snippet):
    return client.post(f"/admin/snippets/snippet/{snippet.pk}/publish/")


def test_a_configuration_that_requires_it_publishes_a_draft_only_after_a_passing_evaluation(
    fake, django_capture_on_commit_callbacks, admin_client
):
    configuration, snippet = tone_setup(fake, require_passing_evaluation=True)
    case_make(configuration, "parcel", must_contain="parcel")
    draft_snippet(snippet, DRAFT_TEXT)

    unevaluated = publish(admin_client, snippet)
    assert unevaluated.status_code == 200
    assert unevaluated.context["error"] == (
        "Not published: support: no evaluation of this draft yet. This configuration requires a passing "
        "evaluation before publishing."
    )
    fake.script("Live.", "No news yet.")
    failing = evaluate(configuration, django_capture_on_commit_callbacks)
    assert failing.passed is False
    assert publish(admin_client, snippet).context["error"] == (
        f"Not published: support: evaluation {failing.pk} of support of this draft did not pass. This "
        "configuration requires a passing evaluation before publishing."
    )
    fake.script("Live.", "Your parcel is near.")
    passing = evaluate(configuration, django_capture_on_commit_callbacks)
    assert passing.passed is True
    draft_snippet(snippet, DRAFT_TEXT + " Sign with your name.")  # another draft than the one evaluated
    assert (
        publish(admin_client, snippet)
        .context["error"]
        .startswith("Not published: support: no evaluation of this draft yet.")
    )
    assert Snippet.objects.get(pk=snippet.pk).text == LIVE_TEXT

    fake.script("Live.", "Your parcel is near.")
    evaluate(configuration, django_capture_on_commit_callbacks)
    published = publish(admin_client, snippet)

    assert published.status_code == 302
    assert Snippet.objects.get(pk=snippet.pk).text == DRAFT_TEXT + " Sign with your name."


def test_a_configurations_own_draft_is_evaluated_and_its_publish_page_names_the_evaluation(
    fake, django_capture_on_commit_callbacks, admin_client
):
    configuration, _ = tone_setup(fake, require_passing_evaluation=True)
    case_make(configuration, "parcel", must_contain="parcel")
    draft_save(row=configuration, values={"system_prompt": "You answer customers of the shop."}, actor=ACTOR)
    fake.script("Live.", "Your parcel is near.")

    evaluation = evaluate(configuration, django_capture_on_commit_callbacks)

    live_body, drafted_body = fake.bodies()
    assert system_text(live_body).startswith("You answer customers.\n\n")
    assert system_text(drafted_body).startswith("You answer customers of the shop.\n\n")
    assert [(d["kind"], d["identifier"]) for d in evaluation.drafts] == [("catalog.configuration", "support")]
    page = admin_client.get(f"/admin/catalog/configuration/{configuration.pk}/publish/")
    [check] = page.context["checks"]
    assert (check.label, check.url, check.blocking) == (
        f"support: evaluation {evaluation.pk} of support of this draft passed.",
        f"/admin/evaluations/evaluation/{evaluation.pk}/change/",
        False,
    )


def test_a_case_without_a_known_class_is_refused_and_nothing_is_stored(fake):
    configuration, _ = tone_setup(fake)
    for data_class in ("", "top_secret"):
        case = EvaluationCase(
            configuration=configuration, name="parcel", input="Where?", data_class=data_class
        )
        with pytest.raises(ValidationError) as invalid:
            case.full_clean()
        assert list(invalid.value.message_dict) == ["data_class"]
    with pytest.raises(IntegrityError), transaction.atomic():
        EvaluationCase.objects.create(
            configuration=configuration, name="raw", input="Where?", data_class="top_secret"
        )
    assert EvaluationCase.objects.count() == 0
