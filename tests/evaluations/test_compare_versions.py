"""Two published versions of a configuration side by side over its evaluation set: each side sends its
own version's content, the page compares pass rate, judge scores, tokens, cost and latency per case
and in total with the differences marked, and a configuration may require no regression to publish."""

from __future__ import annotations

from decimal import Decimal

import pytest

from catalog.models import Configuration
from catalog.services import configuration_save
from evaluations.comparison import BETTER, SAME, WORSE, compared
from evaluations.errors import EvaluationInvalid
from evaluations.models import Evaluation, EvaluationResult, EvaluationStatus
from evaluations.services import evaluation_start
from governance.drafts import draft_save
from governance.models import Draft
from tests.evaluations.test_evaluations import ACTOR, case_make, evaluate, fake, system_text, tone_setup
from tests.fakes.provider_server import FakeProvider, Reply

pytestmark = pytest.mark.django_db

__all__ = ["fake"]  # the fixture, shared with the evaluations' tests

FIRST_PROMPT = "You answer customers."
SECOND_PROMPT = "You answer customers in one short sentence."


def two_versions(fake: FakeProvider, **fields) -> tuple[Configuration, int, int]:
    """The configuration as first created and after one published change of its system prompt."""
    configuration, _ = tone_setup(fake, **fields)
    first = configuration.history.order_by("-history_id").first().history_id
    configuration.system_prompt = SECOND_PROMPT
    configuration_save(configuration=configuration, actor=ACTOR)
    second = configuration.history.order_by("-history_id").first().history_id
    return configuration, first, second


def compare(configuration, versions, capture) -> Evaluation:
    with capture(execute=True):
        evaluation = evaluation_start(
            configuration=configuration, model=configuration.model, actor=ACTOR, versions=versions
        )
    evaluation.refresh_from_db()
    return evaluation


def test_two_published_versions_are_sent_side_by_side_and_a_regression_is_counted(
    fake, django_capture_on_commit_callbacks, admin_client
):
    configuration, first, second = two_versions(fake)
    case_make(configuration, "parcel", must_contain="parcel")
    case_make(configuration, "refund", input="Can I get a refund?", must_contain="refund")
    fake.script(
        Reply("Your parcel is on its way.", completion_tokens=7),
        Reply("On its way.", completion_tokens=4),
        Reply("A refund takes a week.", completion_tokens=6),
        Reply("Your refund is coming.", completion_tokens=5),
    )

    evaluation = compare(configuration, (first, second), django_capture_on_commit_callbacks)

    assert (evaluation.status, evaluation.done, evaluation.passed, evaluation.regressions, evaluation.drafts) == (
        EvaluationStatus.FINISHED, 4, False, 1, [],
    )  # fmt: skip
    prompts = [system_text(body).split("\n\n")[0] for body in fake.bodies()]
    assert prompts == [FIRST_PROMPT, SECOND_PROMPT, FIRST_PROMPT, SECOND_PROMPT]
    assert (evaluation.pins[0]["kind"], evaluation.pins[0]["history_id"]) == ("configuration", first)
    candidate = evaluation.candidate_pins[0]
    assert (candidate["kind"], candidate["history_id"]) == ("configuration", second)
    results = EvaluationResult.objects.filter(evaluation=evaluation).order_by("position", "side")
    assert [(r.case_name, r.side, r.passed) for r in results] == [
        ("parcel", "baseline", True), ("parcel", "candidate", False),
        ("refund", "baseline", True), ("refund", "candidate", True),
    ]  # fmt: skip

    page = admin_client.get(f"/admin/evaluations/evaluation/{evaluation.pk}/change/")

    assert page.status_code == 200
    assert page.context["side_labels"] == ["Baseline version", "Candidate version"]
    comparison = page.context["comparison"]
    assert comparison.regressions == 1
    assert [(f.label, f.reference, f.compared, f.verdict) for f in comparison.totals[:1]] == [
        ("Pass rate", "100%", "50%", WORSE)
    ]
    parcel = comparison.cases[0]
    assert (parcel.name, parcel.regressed, parcel.figures[0].difference) == ("parcel", True, "regressed")
    assert 'id="evaluation-regressions">1 case held on the baseline version side' in page.content.decode()


def test_a_version_of_another_configuration_is_refused_and_nothing_is_stored(
    fake, django_capture_on_commit_callbacks
):
    configuration, first, _ = two_versions(fake)
    case_make(configuration, "parcel")
    foreign = Configuration.history.exclude(id=configuration.pk).order_by("-history_id").first()
    unknown = foreign.history_id if foreign else first + 1000

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(EvaluationInvalid):
        evaluation_start(
            configuration=configuration, model=configuration.model, actor=ACTOR, versions=(first, unknown)
        )

    assert (Evaluation.objects.count(), fake.bodies()) == (0, [])


def test_the_evaluate_form_wants_both_versions_or_neither(fake, admin_client):
    configuration, first, _ = two_versions(fake)
    case_make(configuration, "parcel")

    page = admin_client.post(
        f"/admin/catalog/configuration/{configuration.pk}/evaluate/",
        {"model": configuration.model_id, "baseline": first, "candidate": ""},
    )

    assert page.status_code == 200
    assert page.context["form"].non_field_errors() == ["Choose both versions to compare, or neither."]
    assert Evaluation.objects.count() == 0


def test_a_configuration_that_requires_no_regression_publishes_only_without_one(
    fake, django_capture_on_commit_callbacks, admin_client
):
    configuration, _ = tone_setup(fake, require_no_regression=True)
    case_make(configuration, "parcel", must_contain="parcel")
    draft_save(row=configuration, values={"system_prompt": SECOND_PROMPT}, actor=ACTOR)
    publish_url = f"/admin/catalog/configuration/{configuration.pk}/publish/"
    fake.script("Your parcel is near.", "On its way.")
    regressed = evaluate(configuration, django_capture_on_commit_callbacks)
    assert (regressed.passed, regressed.regressions) == (False, 1)

    refused = admin_client.post(publish_url)

    assert refused.status_code == 200
    assert refused.context["error"] == (
        f"Not published: support: evaluation {regressed.pk} of support of this draft did not pass, 1 "
        "regression (cases that held live and not with the drafts). This configuration requires an "
        "evaluation without regressions before publishing."
    )
    assert Configuration.objects.get(pk=configuration.pk).system_prompt == FIRST_PROMPT
    fake.script("No news yet.", "Still no news.")  # fails on both sides: no regression
    steady = evaluate(configuration, django_capture_on_commit_callbacks)
    assert (steady.passed, steady.regressions) == (False, 0)

    published = admin_client.post(publish_url)

    assert published.status_code == 302
    assert Configuration.objects.get(pk=configuration.pk).system_prompt == SECOND_PROMPT
    assert Draft.objects.count() == 0


def result(passed: bool, **fields) -> EvaluationResult:
    values = {"case_name": "c", "position": 0, "side": "live", "outcome": "answered", **fields}
    return EvaluationResult(passed=passed, **values)


def test_the_comparison_marks_lower_cost_better_and_a_lower_judge_score_worse():
    judged = {"judge": "judge", "held": True, "expectation": "judge"}
    reference = result(
        True, prompt_tokens=100, completion_tokens=20, cost=Decimal("0.002"), latency_ms=300,
        checks=[{**judged, "score": 8}],
    )  # fmt: skip
    other = result(
        True, prompt_tokens=100, completion_tokens=20, cost=Decimal("0.001"), latency_ms=400,
        checks=[{**judged, "score": 6}],
    )  # fmt: skip

    comparison = compared([(reference, other)])

    assert [
        (f.label, f.reference, f.compared, f.difference, f.verdict) for f in comparison.cases[0].figures
    ] == [
        ("Passed", "yes", "yes", "—", SAME),
        ("Judge score", "8.0", "6.0", "-2.0", WORSE),
        ("Tokens", "120", "120", "±0", SAME),
        ("Cost", "$0.002000", "$0.001000", "-$0.001000", BETTER),
        ("Latency", "300 ms", "400 ms", "+100 ms", WORSE),
    ]
    assert comparison.regressions == 0
