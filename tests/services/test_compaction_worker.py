"""Compaction on real Celery workers, Redis and PostgreSQL: a summary is a step of its own, sent and
recorded by a worker, and the run's next model call gets the smaller context."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings

from agents.models import AgentRun, AgentStep
from agents.services import run_create
from governance.vocabulary import DataClass, TrustZone
from tests.agents.compaction_runs import (
    SUMMARY,
    compacting_configuration,
    notes,
    summary_model_on,
    tool_heavy_script,
)
from tests.fakes.provider_server import FakeProvider, Reply
from tests.services.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def test_a_run_on_a_worker_summarises_instead_of_dropping_turns(fake_provider, tmp_path):
    notes()
    tool_heavy_script(fake_provider)
    with FakeProvider() as summary_fake:
        summary_fake.script(Reply(text=SUMMARY))
        summarizer = summary_model_on(summary_fake, TrustZone.LOCAL)
        configuration = compacting_configuration(fake_provider, "summarise", summary_model=summarizer)
        with celery_worker("agents", log=tmp_path / "worker.log"):
            run = run_create(
                configuration=configuration,
                input_text="Summarise our tone of voice.",
                input_data_class=DataClass.PUBLIC_CONTENT,
            )
            wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=90, what="the run to end")
        assert len(summary_fake.requests) == 1
    run.refresh_from_db()
    assert (run.status, run.termination_reason) == ("completed", "completed")
    steps = list(AgentStep.objects.filter(run=run).order_by("index").values_list("index", "kind", "status"))
    assert steps[5:] == [
        (5, "compaction", "completed"),
        (6, "model_call", "completed"),
        (7, "model_call", "completed"),
    ]
    prompts = dict(
        AgentStep.objects.filter(run=run, kind="model_call").values_list("index", "reported_prompt_tokens")
    )
    assert prompts[6] < prompts[4]
    assert AgentStep.objects.get(run=run, index=5).compaction["summary"] == SUMMARY
    assert len(fake_provider.requests) == 7
