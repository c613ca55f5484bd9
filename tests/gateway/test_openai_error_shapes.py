"""Every error under ``/api/openai/v1`` is in OpenAI's shape, whoever answered it: the body size limit
before any view, Django's 404 for an unknown path, a method the view does not take, and
an unexpected failure. The native API keeps its own shape for the same errors."""

from __future__ import annotations

import secrets

import pytest
from django.test import Client

from gateway.models import CompletionRecord
from tests.agents.runs import fake_configuration

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"


@pytest.fixture
def caller(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider)
    return make_caller("configurations:use", configurations=(configuration,))


def auth(caller) -> dict[str, str]:
    return {"Authorization": f"Bearer {caller.token}"}


def openai_error(response, status: int) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert list(body) == ["error"]
    assert list(body["error"]) == ["message", "type", "param", "code"]
    return body["error"]


def test_a_body_over_the_size_limit_is_413_in_openai_shape(caller, fake_provider, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    body = {"model": "x", "messages": [{"role": "user", "content": "a" * 4096}]}

    error = openai_error(caller.post(CHAT, body), 413)

    assert error == {
        "message": "The request body exceeds 2,048 bytes.",
        "type": "invalid_request_error",
        "param": None,
        "code": "request_too_large",
    }
    assert fake_provider.requests == []
    assert CompletionRecord.objects.count() == 0


def test_an_unknown_path_is_404_in_openai_shape(caller):
    error = openai_error(caller.post("/api/openai/v1/completions", {"model": "x", "prompt": "Hi"}), 404)
    assert (error["type"], error["code"], error["message"]) == (
        "invalid_request_error",
        "model_not_found",
        "Not found.",
    )


def test_a_wrong_method_is_405_in_openai_shape_with_allow(caller):
    response = caller.get(CHAT)
    error = openai_error(response, 405)
    assert (error["type"], error["code"]) == ("invalid_request_error", "method_not_allowed")
    assert response["Allow"] == "POST, OPTIONS"


@pytest.mark.urls("tests.config.failing_urls")
@pytest.mark.parametrize("debug", [True, False])
def test_an_unexpected_failure_is_500_in_openai_shape_and_echoes_nothing(settings, debug):
    settings.DEBUG = debug
    marker = "marker-" + secrets.token_hex(8)
    client = Client(raise_request_exception=False)

    response = client.post(
        "/api/openai/v1/test-failing-view", {"note": marker}, content_type="application/json"
    )

    error = openai_error(response, 500)
    assert error == {
        "message": "Internal server error.",
        "type": "api_error",
        "param": None,
        "code": "server_error",
    }
    assert marker not in response.content.decode()


def test_no_token_is_401_in_openai_shape():
    error = openai_error(Client().post(CHAT, {}, content_type="application/json"), 401)
    assert (error["type"], error["code"]) == ("authentication_error", "invalid_api_key")


def test_the_native_api_keeps_its_own_shape(caller, settings):
    assert caller.post("/api/v1/no-such-thing", {}).json() == {
        "code": "not_found",
        "message": "Not found.",
        "extra": {},
    }
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    assert caller.post("/api/v1/completions", {"input": "a" * 4096}).json()["code"] == "request_too_large"
