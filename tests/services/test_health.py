"""/healthz against real Redis, a real worker answering the ping and Celery beat driving the reaper."""

from __future__ import annotations

import socket

import pytest
import redis
from django.conf import settings
from django.test import Client

from tests.services.worker import celery_beat, celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def health() -> tuple[int, dict]:
    response = Client().get("/healthz")
    return response.status_code, response.json()


def test_a_worker_answers_the_ping_and_the_reaper_ticks_as_soon_as_beat_starts(tmp_path):
    assert settings.AGENT_REAPER_INTERVAL_SECONDS == 30
    with celery_worker("health", log=tmp_path / "worker.log"):
        wait_for(lambda: health()[1]["checks"]["workers"]["status"] == "ok", timeout=30, what="a ping answer")
        status, body = health()
        assert (status, body["run_mode"]) == (503, "real")
        assert body["checks"]["broker"] == {"status": "ok"}
        workers = body["checks"]["workers"]
        node = f"health@{socket.gethostname()}"
        assert (workers["status"], workers["answered"], list(workers["nodes"])) == ("ok", 1, [node])
        assert workers["nodes"][node]["restarts"] == 0  # its first start since the flush
        assert (body["checks"]["reaper"]["status"], body["checks"]["reaper"]["last_tick"]) == (
            "failing",
            None,
        )

        with celery_beat(tmp_path):
            # Well within the first 30-second interval: the tick comes from the reap at beat's start.
            wait_for(lambda: health()[0] == 200, timeout=20, what="the reaper's first tick")
        status, body = health()
    assert status == 200
    assert body["status"] == "ok"
    assert body["checks"]["reaper"]["status"] == "ok"
    assert body["checks"]["reaper"]["silent_seconds"] < 25
    assert body["checks"]["queue"] == {
        "status": "ok",
        "waiting_runs": 0,
        "oldest_wait_seconds": None,
        "limit_seconds": 300,
    }
