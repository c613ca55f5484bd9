"""``/healthz``: the embedded answer, and a 503 for each condition under which nothing progresses."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from celery.signals import worker_ready
from django.core.cache import cache
from django.db.utils import OperationalError

from config.worker_starts import worker_starts

pytestmark = pytest.mark.django_db

NOT_APPLICABLE = {"status": "not_applicable"}


@dataclass(frozen=True)
class Consumer:
    """What Celery's ``worker_ready`` names as its sender: the worker's consumer, with its node name."""

    hostname: str


@pytest.fixture(autouse=True)
def _no_reaper_tick():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def real_mode(settings):
    """The real mode as /healthz reads it: tasks go through a broker to workers."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.HEALTH_WORKER_PING_TIMEOUT_MS = 100
    return settings


def test_the_embedded_default_answers_200_with_the_worker_checks_not_applicable(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "run_mode": "embedded",
        "checks": {
            "database": {"status": "ok"},
            "broker": NOT_APPLICABLE,
            "workers": NOT_APPLICABLE,
            "reaper": NOT_APPLICABLE,
            "queue": NOT_APPLICABLE,
        },
    }


def test_an_unreachable_broker_answers_503_without_pinging_workers(client, real_mode):
    real_mode.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert (body["status"], body["run_mode"]) == ("unavailable", "real")
    assert body["checks"]["database"] == {"status": "ok"}
    assert body["checks"]["broker"] == {"status": "failing"}
    assert body["checks"]["workers"] == {"status": "failing"}


def test_no_worker_answering_the_ping_answers_503(client, real_mode):
    real_mode.CELERY_BROKER_URL = "memory://"  # a reachable broker no worker listens on
    response = client.get("/healthz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["broker"] == {"status": "ok"}
    assert checks["workers"] == {"status": "failing", "answered": 0, "timeout_seconds": 0.1, "nodes": {}}


def test_the_worker_that_answers_is_named_with_when_it_started_and_how_often_before(
    client, real_mode, monkeypatch
):
    real_mode.CELERY_BROKER_URL = "memory://"
    monkeypatch.setattr(
        "config.health.app.control.ping", lambda **options: [{"worker.8100@host": {"ok": "pong"}}]
    )
    worker_ready.send(sender=Consumer(hostname="worker.8100@host"))  # its first start
    worker_ready.send(sender=Consumer(hostname="worker.8100@host"))  # started again
    last = worker_starts(["worker.8100@host"])["worker.8100@host"]
    assert last is not None
    checks = client.get("/healthz").json()["checks"]
    assert checks["workers"] == {
        "status": "ok",
        "answered": 1,
        "timeout_seconds": 0.1,
        "nodes": {"worker.8100@host": {"started_at": last.started_at.isoformat(), "restarts": 1}},
    }


def test_a_worker_that_recorded_no_start_is_named_without_one(client, real_mode, monkeypatch):
    real_mode.CELERY_BROKER_URL = "memory://"
    monkeypatch.setattr("config.health.app.control.ping", lambda **options: [{"old@host": {"ok": "pong"}}])
    checks = client.get("/healthz").json()["checks"]
    assert checks["workers"] == {
        "status": "ok",
        "answered": 1,
        "timeout_seconds": 0.1,
        "nodes": {"old@host": None},
    }


def test_a_failing_database_answers_503(client, monkeypatch):
    def broken_cursor(*args, **kwargs):
        raise OperationalError("gone")

    monkeypatch.setattr("config.health.connection.cursor", broken_cursor)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == {"status": "failing"}
    assert "gone" not in response.content.decode()
