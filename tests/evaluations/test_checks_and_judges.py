"""Checks beyond contains: a pattern, JSON valid for a schema, a tool called with given arguments; and a
judge, a configuration that scores the answer through the same governed call, refused (nothing on its
wire) when its zone does not admit the case's class, its cost counted in the result's."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from evaluations.models import EvaluationCase, EvaluationResult, ResultOutcome
from evaluations.services import evaluation_start
from governance.actors import Actor
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, Decision, TrustZone
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import FakeProvider, Reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("on_both_databases")]


@pytest.fixture
def fake():
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def judge_fake():
    with FakeProvider() as provider:
        yield provider


@pytest.fixture(autouse=True)
def _eager(tasks_in_process):
    """Evaluations run in this process, on either database."""


def case_make(configuration, **fields) -> EvaluationCase:
    values = {
        "name": "parcel",
        "input": "Where is my parcel?",
        "data_class": DataClass.PUBLIC_CONTENT,
        **fields,
    }
    case = EvaluationCase(configuration=configuration, **values)
    case.full_clean()
    case.save()
    return case


def live_result(configuration, capture) -> EvaluationResult:
    with capture(execute=True):
        evaluation = evaluation_start(
            configuration=configuration, model=configuration.model, actor=Actor.system("t")
        )
    return EvaluationResult.objects.get(evaluation=evaluation, side="live")


def test_pattern_and_json_schema_checks(fake, django_capture_on_commit_callbacks):
    configuration = fake_configuration(fake, identifier="support", allowed_tool_groups=[])
    schema = {"type": "object", "required": ["eta"], "properties": {"eta": {"type": "integer"}}}
    case_make(configuration, must_match=r'"eta":\s*\d+', must_be_valid_json=schema)
    fake.script(Reply(text='{"eta": 3}'), Reply(text='{"eta": "soon"}'))

    result = live_result(configuration, django_capture_on_commit_callbacks)
    drafted = EvaluationResult.objects.get(evaluation=result.evaluation, side="drafted")

    assert result.checks == [
        {"expectation": 'matches /"eta":\\s*\\d+/', "held": True},
        {"expectation": "valid JSON for the schema", "held": True},
    ]
    assert drafted.checks == [
        {"expectation": 'matches /"eta":\\s*\\d+/', "held": False},
        {"expectation": "valid JSON for the schema ('soon' is not of type 'integer')", "held": False},
    ]


def test_a_tool_call_check_reads_the_answers_tool_calls(fake, django_capture_on_commit_callbacks):
    configuration = fake_configuration(fake, identifier="support")
    case_make(configuration, must_call_tool="snippets_by_tag", tool_arguments_match={"tags": ["tone"]})
    fake.script(
        Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"], "limit": 2})),
        Reply.tools(("c1", "snippets_by_tag", {"tags": ["legal"]})),
    )

    result = live_result(configuration, django_capture_on_commit_callbacks)
    drafted = EvaluationResult.objects.get(evaluation=result.evaluation, side="drafted")

    expectation = 'calls snippets_by_tag with arguments {"tags": ["tone"]}'
    assert (result.checks, drafted.checks) == (
        [{"expectation": expectation, "held": True}],
        [{"expectation": expectation, "held": False}],
    )
    assert [(c["name"], json.loads(c["arguments"])) for c in result.tool_calls] == [
        ("snippets_by_tag", {"tags": ["tone"], "limit": 2})
    ]


def test_broken_patterns_schemas_and_a_judge_without_rubric_are_refused_on_save(fake):
    configuration = fake_configuration(fake, identifier="support")
    judge = fake_configuration(fake, identifier="judge")
    case = EvaluationCase(
        configuration=configuration, name="x", input="?", data_class=DataClass.PUBLIC_CONTENT,
        must_match="(", must_be_valid_json={"type": 3}, judge=judge,
    )  # fmt: skip

    with pytest.raises(ValidationError) as refused:
        case.full_clean()

    assert set(refused.value.message_dict) == {"must_match", "must_be_valid_json", "judge_rubric"}
    assert EvaluationCase.objects.count() == 0


def test_a_judge_scores_the_answer_and_its_cost_is_counted(
    fake, judge_fake, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake, identifier="support", allowed_tool_groups=[])
    judge = fake_configuration(
        judge_fake, identifier="judge", allowed_tool_groups=[],
        model_input_price_per_million=Decimal("1000"), model_output_price_per_million=Decimal("1000"),
    )  # fmt: skip
    case_make(configuration, judge=judge, judge_rubric="Names a day.", judge_min_score=6)
    fake.script(Reply(text="It arrives Tuesday."), Reply(text="Soon."))
    judge_fake.script(
        Reply(text="SCORE: 9 It names Tuesday.", prompt_tokens=100, completion_tokens=10),
        Reply(text="SCORE: 2 No day.", prompt_tokens=100, completion_tokens=10),
    )

    result = live_result(configuration, django_capture_on_commit_callbacks)
    drafted = EvaluationResult.objects.get(evaluation=result.evaluation, side="drafted")

    judged = [body["messages"][-1]["content"] for body in judge_fake.bodies()]
    assert [
        ("ANSWER:\nIt arrives Tuesday." in t, "ANSWER:\nSoon." in t, "Names a day." in t) for t in judged
    ] == [
        (True, False, True),
        (False, True, True),
    ]
    assert [(c["score"], c["held"], c["cost"]) for c in (result.checks[0], drafted.checks[0])] == [
        (9.0, True, "0.1100"),
        (2.0, False, "0.1100"),
    ]
    assert result.checks[0]["expectation"] == "judge judge scores at least 6"
    assert (result.passed, drafted.passed) == (True, False)
    assert (result.cost, drafted.cost) == (Decimal("0.11"), Decimal("0.11"))  # the answers cost nothing


def test_a_judge_whose_zone_does_not_admit_the_case_is_refused_and_nothing_reaches_it(
    fake, judge_fake, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake, identifier="support", allowed_tool_groups=[])
    judge = fake_configuration(
        judge_fake, zone=TrustZone.EXTERNAL_GLOBAL, identifier="judge", allowed_tool_groups=[]
    )
    case_make(
        configuration, data_class=DataClass.SYSTEM_DIAGNOSTICS, judge=judge, judge_rubric="Is it right?"
    )
    fake.script(Reply(text="The disk is full."), Reply(text="The disk is full."))

    result = live_result(configuration, django_capture_on_commit_callbacks)

    assert result.outcome == ResultOutcome.ANSWERED
    check = result.checks[0]
    assert (check["held"], check["score"]) == (False, None)
    assert check["reason"].startswith(
        "the judge was refused: task_input 'task_input' may not be sent to zone external_global"
    )
    assert judge_fake.bodies() == []
    refusals = GovernanceEvent.objects.filter(decision=Decision.CONTEXT_BLOCKED, configuration="judge")
    assert list(refusals.values_list("data_class", flat=True)) == [DataClass.SYSTEM_DIAGNOSTICS] * 2
    assert result.passed is False


def test_the_evaluation_page_shows_tool_calls_and_the_judges_score(
    fake, judge_fake, django_capture_on_commit_callbacks, admin_client
):
    configuration = fake_configuration(fake, identifier="support")
    judge = fake_configuration(judge_fake, identifier="judge", allowed_tool_groups=[])
    case_make(configuration, judge=judge, judge_rubric="Looks up the tone.")
    fake.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]})), Reply(text="Calm."))
    judge_fake.script(Reply(text="SCORE: 8 Looks it up."))

    result = live_result(configuration, django_capture_on_commit_callbacks)
    html = admin_client.get(f"/admin/evaluations/evaluation/{result.evaluation_id}/change/").content.decode()

    assert "tool call: snippets_by_tag({&quot;tags&quot;:[&quot;tone&quot;]})" in html
    assert (
        'judge judge scores at least 7: scored 8 <small class="judge-reason">SCORE: 8 Looks it up.</small>'
        in html
    )
