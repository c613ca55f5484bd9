"""``/healthz``: the embedded answer, and a 503 for each condition under which nothing progresses."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db.utils import OperationalError

pytestmark = pytest.mark.django_db

NOT_APPLICABLE = {"status": "not_applicable"}


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
    assert checks["workers"] == {"status": "failing", "answered": 0, "timeout_seconds": 0.1}


def test_a_failing_database_answers_503(client, monkeypatch):
    def broken_cursor(*args, **kwargs):
        raise OperationalError("gone")

    monkeypatch.setattr("config.health.connection.cursor", broken_cursor)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == {"status": "failing"}
    assert "gone" not in response.content.decode()
