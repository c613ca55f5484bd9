"""With PROMETHEUS_MULTIPROC_DIR, what a worker process counts is scraped from the web process."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from agents.models import AgentRun
from agents.services import run_create
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.services.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def test_a_workers_counters_reach_the_web_scrape(fake_provider, tmp_path, monkeypatch):
    shared = tmp_path / "prometheus"
    shared.mkdir()
    fake_provider.script(Reply(text="Done.", prompt_tokens=40, completion_tokens=2))
    configuration = fake_configuration(fake_provider)
    env = {"PROMETHEUS_MULTIPROC_DIR": str(shared)}
    with celery_worker("metrics", log=tmp_path / "worker.log", env=env):
        run = run_create(
            configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
        )
        wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=60, what="the run to end")

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(shared))  # this process now scrapes the files
    response = Client().get("/metrics")
    assert response.status_code == 200
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }
    call = (("model", "gpt-4o"), ("outcome", "ok"), ("provider", configuration.model.provider.identifier))
    assert samples[("govctx_steps_total", (("status", "finished"), ("termination_reason", "completed")))] == 1
    assert samples[("govctx_provider_calls_total", call)] == 1
    assert samples[("govctx_tokens_total", (("model", "gpt-4o"), ("type", "prompt")))] == 40
    assert samples[("govctx_runs_waiting", ())] == 0
    assert any(path.name.startswith("counter_") for path in shared.iterdir())
