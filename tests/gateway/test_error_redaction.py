"""Error answers never echo a secret the caller sent: every error body (``/api/v1`` and
``/api/openai/v1``) and every streamed error event passes the one redactor before it leaves. A
validation message quotes the refused value (``"…" is not a valid choice.``), a 404 the identifier
asked for; before, a fake AWS key sent as ``input_data_class`` or ``model`` came back word for word.

Canaries are drawn at test time (tests/canaries.py)."""

from __future__ import annotations

import json

import pytest

from agents.models import AgentRun
from catalog.models import Provider
from config import exception_handler
from config.redaction import Redactor
from gateway.models import CompletionRecord
from snippets.models import Snippet
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.fakes.provider_server import Reply
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

AWS = {canary.kind: canary for canary in generate_canaries(seed=20261206)}["aws_access_key_id"]
PLACEHOLDER = "[REDACTED:aws_access_key_id]"
CHAT = "/api/openai/v1/chat/completions"
RESPONSES = "/api/openai/v1/responses"


@pytest.fixture
def setup(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("configurations:use", "snippets:write", configurations=(configuration,))
    return configuration, caller


def assert_nothing_sent_or_stored(fake_provider) -> None:
    assert fake_provider.requests == []
    assert (AgentRun.objects.count(), CompletionRecord.objects.count(), Snippet.objects.count()) == (0, 0, 0)


def test_a_completions_400_does_not_echo_a_secret_sent_as_the_input_class(setup, fake_provider):
    configuration, caller = setup
    body = {"configuration": configuration.identifier, "input": "Hi", "input_data_class": AWS.value}

    response = caller.post("/api/v1/completions", body)

    error = assert_error(response, 400, "invalid_input")
    assert error["extra"] == {
        "fields": {"input_data_class": [f'"{PLACEHOLDER}" is not a valid choice.']},
        "codes": {"input_data_class": ["invalid_choice"]},
    }
    assert AWS.leaks(response.content.decode()) == []
    assert_nothing_sent_or_stored(fake_provider)


def test_a_completions_404_does_not_echo_a_secret_sent_as_the_configuration(setup, fake_provider):
    _, caller = setup

    response = caller.post("/api/v1/completions", {"configuration": AWS.value, "input": "Hi"})

    error = assert_error(response, 404, "not_found")
    assert (error["message"], error["extra"]) == (
        f"There is no configuration '{PLACEHOLDER}'.",
        {"configuration": PLACEHOLDER},
    )
    assert AWS.leaks(response.content.decode()) == []
    assert_nothing_sent_or_stored(fake_provider)


def test_a_snippet_create_400_does_not_echo_a_secret_sent_as_the_data_class(setup, fake_provider):
    _, caller = setup
    body = {
        "identifier": "tone",
        "name": "Tone",
        "text": "Be brief.",
        "ceiling": "local",
        "data_class": AWS.value,
    }

    response = caller.post("/api/v1/snippets", body)

    assert assert_error(response, 400, "invalid_input")["extra"]["fields"] == {
        "data_class": [f'"{PLACEHOLDER}" is not a valid choice.']
    }
    assert AWS.leaks(response.content.decode()) == []
    assert_nothing_sent_or_stored(fake_provider)


def test_an_openai_400_does_not_echo_a_secret_sent_as_a_metadata_key(setup, fake_provider):
    """A field's errors are keyed by the caller's own dict keys: keys are redacted too."""
    configuration, caller = setup
    messages = [{"role": "user", "content": "Hi"}]

    response = caller.post(
        CHAT, {"model": configuration.identifier, "messages": messages, "metadata": {AWS.value: "x" * 513}}
    )

    assert response.status_code == 400, response.content
    assert response.json() == {
        "error": {
            "message": 'metadata: {"'
            + PLACEHOLDER
            + '": ["Ensure this field has no more than 512 characters."]}',
            "type": "invalid_request_error",
            "param": "metadata",
            "code": "invalid_value",
        }
    }
    assert_nothing_sent_or_stored(fake_provider)


@pytest.mark.parametrize("path", [CHAT, RESPONSES])
def test_an_openai_404_does_not_echo_a_secret_sent_as_the_model(setup, fake_provider, path):
    _, caller = setup
    body = {"model": AWS.value, "messages": [{"role": "user", "content": "Hi"}], "input": "Hi"}
    body = {key: value for key, value in body.items() if key != ("input" if path == CHAT else "messages")}

    response = caller.post(path, body)

    assert response.status_code == 404, response.content
    assert response.json() == {
        "error": {
            "message": f"There is no configuration '{PLACEHOLDER}'.",
            "type": "invalid_request_error",
            "param": "model",
            "code": "model_not_found",
        }
    }
    assert_nothing_sent_or_stored(fake_provider)


def test_a_responses_404_does_not_echo_a_secret_sent_as_the_previous_response_id(setup, fake_provider):
    configuration, caller = setup
    body = {"model": configuration.identifier, "input": "Hi", "previous_response_id": AWS.value}

    response = caller.post(RESPONSES, body)

    assert response.status_code == 404, response.content
    assert response.json()["error"]["message"] == f"Previous response with id '{PLACEHOLDER}' not found."
    assert AWS.leaks(response.content.decode()) == []
    assert_nothing_sent_or_stored(fake_provider)


def streamed_events(response) -> list[dict]:
    raw = b"".join(response.streaming_content).decode()
    assert AWS.leaks(raw) == []
    return [
        json.loads(block.split("data: ", 1)[1]) for block in raw.strip().split("\n\n") if "data: {" in block
    ]


@pytest.mark.parametrize("path", [CHAT, RESPONSES])
def test_a_streamed_error_event_passes_the_redaction(setup, fake_provider, path):
    """The one text of a streamed error that is not fixed is the provider's identifier, chosen by an
    operator: one shaped like a key is redacted there too."""
    configuration, caller = setup
    Provider.objects.filter(pk=configuration.model.provider_id).update(identifier=AWS.value)
    fake_provider.script(
        Reply(text="A long answer that will be cut off halfway through.", truncate_stream=True)
    )
    conversation = {"messages": [{"role": "user", "content": "Hi"}]} if path == CHAT else {"input": "Hi"}

    response = caller.post(path, {"model": configuration.identifier, "stream": True, **conversation})

    assert response.status_code == 200
    error = streamed_events(response)[-1]["error"]
    assert error["message"] == f"provider '{PLACEHOLDER}' call failed: connection failed or dropped"
    assert (error["code"], error["failure_class"]) == ("provider_error", "connection")


def failing_redact(text: str):
    raise RuntimeError("the scanner broke")


@pytest.mark.parametrize("path", ["/api/v1/completions", CHAT])
def test_an_error_body_the_redactor_fails_on_keeps_its_code_and_withholds_the_rest(
    setup, fake_provider, monkeypatch, path
):
    configuration, caller = setup
    failing = Redactor(f"{__name__}.failing_redact", withheld=exception_handler.WITHHELD)
    monkeypatch.setattr(exception_handler, "_redactor", failing)
    body = {"configuration": configuration.identifier, "input": "Hi", "input_data_class": AWS.value}
    if path == CHAT:
        body = {"model": AWS.value, "messages": [{"role": "user", "content": "Hi"}]}

    response = caller.post(path, body)

    withheld = "[withheld: it could not be redacted]"
    if path == CHAT:
        assert response.status_code == 404
        assert response.json() == {
            "error": {
                "message": withheld,
                "type": "invalid_request_error",
                "param": "model",
                "code": "model_not_found",
            }
        }
    else:
        assert response.status_code == 400
        assert response.json() == {"code": "invalid_input", "message": withheld, "extra": {}}
    assert_nothing_sent_or_stored(fake_provider)
