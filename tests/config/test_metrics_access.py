"""Who may scrape /metrics: loopback clients, and others only with METRICS_TOKEN's bearer token."""

from __future__ import annotations

import secrets

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

ELSEWHERE = "192.0.2.7"


def scrape(address: str, **headers: str):
    return Client(REMOTE_ADDR=address, headers=headers).get("/metrics")


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.53", "::1"])
def test_loopback_clients_may_scrape(address):
    response = scrape(address)
    assert response.status_code == 200
    assert b"# TYPE govctx_steps_total counter" in response.content


def test_other_clients_get_a_plain_404_when_no_token_is_configured(settings):
    settings.METRICS_TOKEN = None
    response = scrape(ELSEWHERE)
    assert (response.status_code, response["Content-Type"], response.content) == (
        404,
        "text/plain",
        b"Not Found",
    )


def test_other_clients_need_the_bearer_token_when_one_is_configured(settings):
    settings.METRICS_TOKEN = secrets.token_urlsafe(24)
    assert scrape(ELSEWHERE, Authorization=f"Bearer {settings.METRICS_TOKEN}").status_code == 200
    assert scrape(ELSEWHERE, Authorization=f"Bearer {settings.METRICS_TOKEN}x").status_code == 404
    assert scrape(ELSEWHERE, Authorization=settings.METRICS_TOKEN).status_code == 404
    assert scrape(ELSEWHERE).status_code == 404


def test_a_forwarded_loopback_address_counts_only_behind_a_trusted_proxy(settings):
    assert scrape(ELSEWHERE, **{"X-Forwarded-For": "127.0.0.1"}).status_code == 404
    settings.API_TRUSTED_PROXIES = 1
    assert scrape("10.1.2.3", **{"X-Forwarded-For": "127.0.0.1"}).status_code == 404  # no proxy named yet
    settings.API_TRUSTED_PROXY_NETWORKS = ["10.0.0.0/8"]
    assert scrape("10.1.2.3", **{"X-Forwarded-For": "127.0.0.1"}).status_code == 200
    # A peer that is not one of our proxies names no one: its own address counts.
    assert scrape(ELSEWHERE, **{"X-Forwarded-For": "127.0.0.1"}).status_code == 404
