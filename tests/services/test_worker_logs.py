"""A real worker with LOG_FORMAT=json writes its records as JSON lines carrying the step's ids."""

from __future__ import annotations

import json
import re

import pytest
import redis
from django.conf import settings

from agents.models import AgentRun
from agents.services import run_create
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.services.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

CELERY_TEXT_RECORD = re.compile(r"^\[\d{4}-\d\d-\d\d [^\]]*: [A-Z]+/")


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def test_worker_records_are_json_lines_with_the_run_and_step_ids(fake_provider, tmp_path):
    fake_provider.script(Reply(text="Done."))
    configuration = fake_configuration(fake_provider)
    log = tmp_path / "worker.log"
    with celery_worker("logs", log=log, env={"LOG_FORMAT": "json"}):
        run = run_create(
            configuration=configuration, input_text="Draft it.", input_data_class=DataClass.PUBLIC_CONTENT
        )
        wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=60, what="the run to end")
        # The run ends when its step commits; the pool child logs the task's success just after, and
        # stopping the worker signals the child too, so wait for that record before stopping.
        wait_for(lambda: "succeeded" in log.read_text(), timeout=30, what="the task's success record")
    text = log.read_text()
    assert [line for line in text.splitlines() if CELERY_TEXT_RECORD.match(line)] == []
    records = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    (succeeded,) = [r for r in records if r["logger"] == "celery.app.trace" and "succeeded" in r["message"]]
    assert (succeeded["run_id"], succeeded["step_index"], succeeded["correlation_id"]) == (
        str(run.id),
        0,
        str(run.id),
    )
    assert "client" not in succeeded  # a run started without an API client
    assert "Draft it." not in text
