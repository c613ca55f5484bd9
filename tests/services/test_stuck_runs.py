"""No run is left stuck, on real Celery, Redis and PostgreSQL with Celery beat driving the reaper: a
step whose message was lost is sent again and completes; a step that raises ends its run
``failed`` with ``internal_error``, its lease released. Neither waits for anyone."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings

from agents.models import AgentRun, AgentStep
from agents.services import run_create
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.services.faulty_scanner import MARKER
from tests.services.worker import celery_beat, celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

INCLUDE = "tests.services.celery_tasks,tests.services.faulty_scanner"
# The reaper ticks every second and takes a run waiting 5 s with no lease for a lost message.
REAPER = {"AGENT_REAPER_INTERVAL_SECONDS": "1", "AGENT_QUEUED_STALE_SECONDS": "5"}


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def terminal(run: AgentRun) -> bool:
    return AgentRun.objects.get(id=run.id).is_terminal


def test_a_lost_message_and_a_step_that_raises_both_end_their_runs(fake_provider, tmp_path):
    fake_provider.script(Reply(text="Done."), Reply(text=f"{MARKER}: the quarter closed."))
    configuration = fake_configuration(fake_provider, allowed_tool_groups=[])
    broker = redis.Redis.from_url(settings.REDIS_URL)
    # Published while no worker runs, then lost by the broker (as a restart without persistence would).
    lost = run_create(
        configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
    )
    assert broker.llen("celery") == 1
    broker.delete("celery")
    with (
        celery_worker("stuck", include=INCLUDE, log=tmp_path / "worker.log", env=REAPER),
        celery_beat(tmp_path, env=REAPER),
    ):
        wait_for(lambda: terminal(lost), timeout=90, what="the lost run to be requeued and end")
        # The scanner raises on this run's reply, inside the worker.
        failing = run_create(
            configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
        )
        wait_for(lambda: terminal(failing), timeout=60, what="the run whose step raised to end")
    lost.refresh_from_db()
    assert (lost.status, lost.termination_reason) == ("completed", "completed")
    assert lost.requeue_count >= 1  # more than one only if the worker was slower than the bound
    assert list(AgentStep.objects.filter(run=lost).values_list("index", flat=True)) == [0]
    failing.refresh_from_db()
    assert (failing.status, failing.termination_reason, failing.error_code) == (
        "failed",
        "internal_error",
        "internal_error",
    )
    assert failing.error_message == (
        "The step failed on an internal error (RuntimeError); the service log has the details."
    )
    assert (failing.lease_owner, failing.lease_expires_at, failing.requeue_count) == ("", None, 0)
    assert not AgentStep.objects.filter(run=failing).exists()
    assert len(fake_provider.requests) == 2  # one model call per run: nothing ran twice
    worker_log = (tmp_path / "worker.log").read_text()
    assert f"run {lost.id} requeued at step 0 (lost)" in worker_log
    assert f"of run {failing.id} raised RuntimeError; the run ends with internal_error" in worker_log
    assert MARKER not in worker_log  # the exception's message, which quotes the reply, is not logged
