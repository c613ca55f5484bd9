from __future__ import annotations

import pytest
from django.db.utils import OperationalError


@pytest.mark.django_db
def test_healthz_reports_database_and_embedded_mode(client, settings):
    settings.REDIS_URL = None
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "redis": "not_configured"},
        "run_mode": "embedded",
    }


@pytest.mark.django_db
def test_healthz_fails_when_redis_is_configured_but_unreachable(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"] == {"database": "ok", "redis": "failing"}


@pytest.mark.django_db
def test_healthz_fails_when_the_database_fails(client, monkeypatch):
    def broken_cursor(*args, **kwargs):
        raise OperationalError("gone")

    monkeypatch.setattr("config.health.connection.cursor", broken_cursor)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == "failing"
