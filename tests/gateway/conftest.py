"""Fixtures for the API tests: issued clients with chosen scopes, and a bearer-token HTTP helper."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from catalog.models import ApiClient, Configuration
from catalog.scopes import SCOPES
from catalog.services import api_client_create
from governance.vocabulary import DataClass, TrustZone

_names = itertools.count(1)


@dataclass
class Caller:
    """An issued API client and a Django test client that sends its token."""

    client: ApiClient
    token: str
    http: Client

    def _headers(self, headers: dict[str, str] | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", **(headers or {})}

    def get(self, path: str, params: dict[str, Any] | None = None, headers: dict[str, str] | None = None):
        return self.http.get(path, params or {}, headers=self._headers(headers))

    def post(self, path: str, body: Any = None, headers: dict[str, str] | None = None):
        return self.http.post(path, body, content_type="application/json", headers=self._headers(headers))

    def patch(self, path: str, body: Any = None):
        return self.http.patch(path, body, content_type="application/json", headers=self._headers(None))

    def delete(self, path: str):
        return self.http.delete(path, headers=self._headers(None))


@pytest.fixture(autouse=True)
def _fresh_throttle_counts():
    # Throttle counters live in the cache, keyed by client id; ids repeat across rolled-back tests.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def make_caller():
    def make(
        *scopes: str,
        configurations: tuple[Configuration, ...] = (),
        default_input_data_class: str = DataClass.PUBLIC_CONTENT,
        trust_zone: str = TrustZone.EXTERNAL_GLOBAL,
    ) -> Caller:
        issued = api_client_create(
            name=f"consumer-{next(_names)}",
            scopes=list(scopes or SCOPES),
            configurations=list(configurations),
            default_input_data_class=default_input_data_class,
            trust_zone=trust_zone,
        )
        return Caller(client=issued.client, token=issued.token, http=Client())

    return make


def assert_error(response, status: int, code: str) -> dict[str, Any]:
    """The response is the one error format with ``code``; returns its body."""
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"code", "message", "extra"}
    assert body["code"] == code
    return body
