"""The runtime's /healthz checks: the reaper's last tick and the oldest run waiting for a worker."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from agents.models import AgentRun, RunStatus
from agents.services import run_create
from agents.tasks import reap_runs_task
from governance.vocabulary import DataClass
from tests.factories import configuration_make

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def real_mode(settings):
    cache.clear()
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "memory://"
    settings.HEALTH_WORKER_PING_TIMEOUT_MS = 100
    yield settings
    cache.clear()


def checks(client) -> tuple[int, dict]:
    response = client.get("/healthz")
    return response.status_code, response.json()["checks"]


def waiting_run(*, waited: timedelta, status: str = RunStatus.QUEUED, lease_owner: str = "") -> AgentRun:
    """A run created through the service whose task was never delivered (no commit in this test)."""
    run = run_create(
        configuration=configuration_make(), input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
    )
    AgentRun.objects.filter(pk=run.pk).update(
        status=status, lease_owner=lease_owner, updated_at=timezone.now() - waited
    )
    return run


def test_a_reaper_that_never_ticked_fails_the_check(client):
    status, result = checks(client)
    assert status == 503
    assert result["reaper"] == {
        "status": "failing",
        "last_tick": None,
        "silent_seconds": None,
        "limit_seconds": 90,
    }


def test_the_reaper_task_records_its_tick_and_a_silent_reaper_fails(client, real_mode):
    before = timezone.now()
    reap_runs_task()
    _, result = checks(client)
    assert result["reaper"]["status"] == "ok"
    assert result["reaper"]["limit_seconds"] == 90
    assert before.isoformat() <= result["reaper"]["last_tick"] <= timezone.now().isoformat()
    assert 0 <= result["reaper"]["silent_seconds"] < 5

    real_mode.AGENT_REAPER_INTERVAL_SECONDS = 0.01  # so that three intervals pass in the test
    time.sleep(0.05)
    status, result = checks(client)
    assert status == 503
    assert result["reaper"]["status"] == "failing"
    assert result["reaper"]["silent_seconds"] > result["reaper"]["limit_seconds"] == pytest.approx(0.03)


def test_a_run_queued_longer_than_the_bound_fails_the_queue_check(client):
    waiting_run(waited=timedelta(seconds=200))
    _, result = checks(client)
    assert result["queue"]["status"] == "ok"
    assert result["queue"]["waiting_runs"] == 1
    assert 200 <= result["queue"]["oldest_wait_seconds"] < 205

    waiting_run(waited=timedelta(seconds=301))
    status, result = checks(client)
    assert status == 503
    assert result["queue"]["status"] == "failing"
    assert (result["queue"]["waiting_runs"], result["queue"]["limit_seconds"]) == (2, 300)
    assert 301 <= result["queue"]["oldest_wait_seconds"] < 306


def test_a_run_between_steps_waits_and_a_leased_run_does_not(client):
    waiting_run(waited=timedelta(seconds=400), status=RunStatus.RUNNING, lease_owner="worker-1:1:t")
    _, result = checks(client)
    assert result["queue"] == {
        "status": "ok",
        "waiting_runs": 0,
        "oldest_wait_seconds": None,
        "limit_seconds": 300,
    }
    waiting_run(waited=timedelta(seconds=400), status=RunStatus.RUNNING)
    _, result = checks(client)
    assert (result["queue"]["status"], result["queue"]["waiting_runs"]) == ("failing", 1)
