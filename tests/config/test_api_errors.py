"""Every error under /api/ is {"code", "message", "extra"}, DEBUG on or off; other pages keep Django's."""

from __future__ import annotations

import secrets

import pytest
from django.test import Client

from config.limits import json_depth_exceeds

SERVER_ERROR = {"code": "server_error", "message": "Internal server error.", "extra": {}}


@pytest.mark.urls("tests.config.failing_urls")
@pytest.mark.parametrize("debug", [True, False])
@pytest.mark.parametrize("path", ["/api/v1/test-failing-api", "/api/v1/test-failing-view"])
def test_an_unexpected_exception_is_a_json_500_that_echoes_nothing(settings, debug, path):
    settings.DEBUG = debug
    marker = "marker-" + secrets.token_hex(8)
    client = Client(raise_request_exception=False)

    response = client.post(path, {"note": marker}, content_type="application/json")

    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json() == SERVER_ERROR
    assert marker.encode() not in response.content
    assert b"Traceback" not in response.content
    page = client.post("/test-failing-page", {"note": marker}, content_type="application/json")
    assert page.status_code == 500
    assert page["Content-Type"].startswith("text/html")  # non-API pages stay as Django renders them


@pytest.mark.parametrize(
    ("text", "deep"),
    [
        ("[" * 65 + "]" * 65, True),
        ("[" * 64 + "]" * 64, False),
        ('{"a": ' * 64 + "1" + "}" * 64, False),
        ('{"a": ' * 65 + "1" + "}" * 65, True),
        ('["' + "[" * 10_000 + '"]', False),
        ('["\\"' + "[" * 100 + '"]', False),
        ('["\\\\", ' + "[" * 65 + "]" * 65 + "]", True),
        ('"' + "{" * 100, False),
        ("1", False),
        ("", False),
    ],
)
def test_json_depth_counts_brackets_outside_strings(text, deep):
    assert json_depth_exceeds(text, 64) is deep


def test_json_depth_of_a_million_levels_is_measured_without_recursion():
    assert json_depth_exceeds("[" * 1_000_000 + "]" * 1_000_000, 64) is True
