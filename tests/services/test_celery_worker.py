"""A real Celery worker on Redis writes to PostgreSQL, and a killed worker's task comes back."""

from __future__ import annotations

import os
import signal

import pytest
import redis
from django.conf import settings

from governance.models import GovernanceEvent
from tests.services.celery_tasks import slow_write, write_row
from tests.services.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def rows(correlation_id: str) -> list[str]:
    return list(
        GovernanceEvent.objects.filter(correlation_id=correlation_id).values_list("reason", flat=True)
    )


def test_worker_runs_a_task_that_writes_to_postgres(tmp_path):
    assert settings.DATABASES["default"]["ENGINE"] == "config.db.postgresql"
    with celery_worker("w1", log=tmp_path / "worker.log"):
        write_row.delay("hello")
        wait_for(lambda: bool(rows("hello")), timeout=30, what="the worker's row")
    assert rows("hello") == [""]


def test_task_of_a_killed_worker_is_redelivered_to_a_new_worker(tmp_path):
    with celery_worker("w1", log=tmp_path / "w1.log") as first:
        write_row.delay("warm-up")
        wait_for(lambda: bool(rows("warm-up")), timeout=30, what="the first worker to be ready")
        slow_write.delay("job", 3)
        wait_for(lambda: bool(rows("job:started")), timeout=15, what="the task to start")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
    assert rows("job") == []
    with celery_worker("w2", log=tmp_path / "w2.log"):
        wait_for(lambda: bool(rows("job")), timeout=60, what="the redelivered task to finish")
    assert sorted(rows("job:started")) == ["first delivery", "redelivered"]
    assert rows("job") == [""]
