"""Scores: a client scores an answer it received, by the id it was given with it (a completion's
request_id or a run's id), with its own scope. Unknown and foreign ids answer alike and store nothing;
the score keeps the answer's label as delivered, its configuration and published version, and a
redacted comment."""

from __future__ import annotations

import pytest

from agents.models import AgentRun
from agents.runtime.pins import Pin
from catalog.models import Configuration
from gateway.models import Score
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import run_to_end
from tests.canaries import generate_canaries
from tests.factories import configuration_make
from tests.gateway.conftest import assert_error

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("on_both_databases")]

SCORES = "/api/v1/scores"
COMPLETIONS = "/api/v1/completions"


def completed(caller, configuration: Configuration) -> dict:
    response = caller.post(COMPLETIONS, {"configuration": configuration.identifier, "input": "Hello there."})
    assert response.status_code == 200, response.content
    return response.json()


def test_a_client_scores_a_completion_it_received_with_its_label_and_version(make_caller):
    configuration = configuration_make()
    caller = make_caller("configurations:use", "scores:write", configurations=(configuration,))
    answer = completed(caller, configuration)
    version = Configuration.history.filter(id=configuration.pk).latest("history_id").history_id

    response = caller.post(
        SCORES, {"request_id": answer["request_id"], "kind": "numeric", "value": 4, "comment": "Clear."}
    )

    assert response.status_code == 201, response.content
    score = Score.objects.get()
    body = response.json()
    assert body == {
        "id": score.pk,
        "request_id": answer["request_id"],
        "run_id": None,
        "configuration": configuration.identifier,
        "label": answer["governance_receipt"]["receiver_label"],
        "name": "overall",
        "kind": "numeric",
        "value": 4.0,
        "comment": "Clear.",
        "created_at": body["created_at"],
    }
    assert (score.api_client, score.configuration_version, score.label) == (
        caller.client,
        version,
        DataClass.PUBLIC_CONTENT,
    )


def test_unknown_and_foreign_ids_answer_alike_and_store_nothing(make_caller):
    configuration = configuration_make()
    owner = make_caller("configurations:use", "scores:write", configurations=(configuration,))
    answer = completed(owner, configuration)
    other = make_caller("configurations:use", "scores:write", configurations=(configuration,))

    foreign = assert_error(
        other.post(SCORES, {"request_id": answer["request_id"], "kind": "boolean", "value": True}),
        404,
        "not_found",
    )
    unknown = assert_error(
        other.post(SCORES, {"request_id": "0" * 32, "kind": "boolean", "value": True}), 404, "not_found"
    )

    assert foreign["message"] == f"There is no answer {answer['request_id']!r}."
    assert unknown["message"] == f"There is no answer {'0' * 32!r}."
    assert (foreign["extra"].keys(), unknown["extra"].keys()) == ({"request_id"}, {"request_id"})
    assert Score.objects.count() == 0


def test_scoring_needs_its_own_scope(make_caller):
    configuration = configuration_make()
    caller = make_caller("configurations:use", "runs:create", "runs:read", configurations=(configuration,))
    answer = completed(caller, configuration)

    error = assert_error(
        caller.post(SCORES, {"request_id": answer["request_id"], "kind": "numeric", "value": 1}),
        403,
        "permission_denied",
    )

    assert error["extra"] == {"required_scope": "scores:write"}
    assert Score.objects.count() == 0


def test_a_run_is_scored_with_its_delivered_label_and_pinned_version(
    make_caller, django_capture_on_commit_callbacks, tasks_in_process
):
    configuration = configuration_make(zone=TrustZone.LOCAL)
    caller = make_caller("runs:create", "scores:write", configurations=(configuration,))
    run = run_to_end(django_capture_on_commit_callbacks, configuration, api_client=caller.client)
    pinned = next(Pin.of(raw) for raw in run.pins if raw["kind"] == "configuration")

    response = caller.post(
        SCORES, {"run_id": str(run.pk), "name": "helpful", "kind": "category", "value": " partly "}
    )

    assert response.status_code == 201, response.content
    score = Score.objects.get()
    assert (score.run_id, score.name, score.category_value, score.configuration_version) == (
        run.pk,
        "helpful",
        "partly",
        pinned.history_id,
    )
    assert score.label == run.steps.get().receiver_label


def test_a_run_that_delivered_nothing_has_nothing_to_score(make_caller):
    configuration = configuration_make()
    caller = make_caller("runs:create", "scores:write", configurations=(configuration,))
    run = AgentRun.objects.create(
        configuration=configuration,
        api_client=caller.client,
        input_text="x",
        input_data_class="public_content",
    )

    error = assert_error(
        caller.post(SCORES, {"run_id": str(run.pk), "kind": "boolean", "value": False}),
        409,
        "nothing_to_score",
    )

    assert error["extra"] == {"run": str(run.pk)}
    assert Score.objects.count() == 0


def test_the_comment_is_stored_redacted(make_caller):
    configuration = configuration_make()
    caller = make_caller("configurations:use", "scores:write", configurations=(configuration,))
    answer = completed(caller, configuration)
    canary = next(c for c in generate_canaries(seed=20261206) if c.kind == "github_classic_pat")

    response = caller.post(
        SCORES,
        {"request_id": answer["request_id"], "kind": "boolean", "value": False, "comment": canary.context},
    )

    assert response.status_code == 201, response.content
    stored = Score.objects.get().comment
    assert not canary.leaks(stored)
    assert "[REDACTED:" in stored
    assert response.json()["comment"] == stored


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "numeric", "value": 1},
        {"request_id": "a", "run_id": "b", "kind": "numeric", "value": 1},
        {"request_id": "a", "kind": "numeric", "value": True},
        {"request_id": "a", "kind": "category", "value": 3},
        {"request_id": "a", "kind": "boolean", "value": "yes"},
    ],
)
def test_malformed_scores_are_refused_before_any_lookup(make_caller, body):
    caller = make_caller("scores:write")

    assert_error(caller.post(SCORES, body), 400, "invalid_input")

    assert Score.objects.count() == 0
