"""An evaluation on a real Celery worker, Redis and PostgreSQL: enqueued once the start commits, run by
the worker against the loopback fake provider, stored with its results."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings

from evaluations.models import Evaluation, EvaluationCase, EvaluationResult, EvaluationStatus
from evaluations.services import evaluation_start
from governance.actors import Actor
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.services.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def test_a_worker_runs_an_evaluation_and_stores_both_sides(fake_provider, tmp_path):
    configuration = fake_configuration(fake_provider, identifier="support", allowed_tool_groups=[])
    EvaluationCase.objects.create(
        configuration=configuration, name="parcel", input="Where is my parcel?",
        data_class=DataClass.PUBLIC_CONTENT, must_contain="parcel",
    )  # fmt: skip
    fake_provider.script("Your parcel is on its way.", "Your parcel arrives soon.")
    evaluation = evaluation_start(
        configuration=configuration, model=configuration.model, actor=Actor.system("test")
    )
    assert Evaluation.objects.get().status == EvaluationStatus.QUEUED  # nothing ran in this process

    with celery_worker("evaluations", log=tmp_path / "worker.log"):
        wait_for(
            lambda: Evaluation.objects.get(pk=evaluation.pk).finished,
            timeout=60,
            what="the evaluation to finish",
        )

    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.done, evaluation.passed) == (EvaluationStatus.FINISHED, 2, True)
    answers = (
        EvaluationResult.objects.filter(evaluation=evaluation).order_by("side").values_list("side", "answer")
    )
    assert list(answers) == [("drafted", "Your parcel arrives soon."), ("live", "Your parcel is on its way.")]
    assert len(fake_provider.bodies()) == 2
