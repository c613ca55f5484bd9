"""Text no provider, database or log can carry (NUL, an unpaired surrogate, both writable with JSON's
``\\u`` escapes) is a 400 ``invalid_text`` naming the field on both APIs: nothing is sent, stored or
counted as a provider failure."""

from __future__ import annotations

import json

import pytest

from agents.models import AgentRun
from gateway.models import CompletionRecord
from governance.models import GovernanceEvent
from providers.metrics import PROVIDER_CALLS
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"
COMPLETIONS = "/api/v1/completions"
BAD = {"high surrogate": "Hello \ud800 there", "low surrogate": "\udfff", "NUL": "Hello\x00there"}


def provider_calls() -> float:
    return sum(s.value for m in PROVIDER_CALLS.collect() for s in m.samples if s.name.endswith("_total"))


@pytest.fixture
def setup(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("configurations:use", "runs:create", configurations=(configuration,))
    return configuration, caller


def post_raw(caller, path: str, body: dict):
    # json.dumps writes the surrogate and NUL as \u escapes, as a client library would.
    return caller.http.post(
        path,
        json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {caller.token}"},
    )


def assert_nothing_happened(fake_provider, calls_before: float) -> None:
    assert fake_provider.requests == []
    assert provider_calls() == calls_before
    assert (CompletionRecord.objects.count(), AgentRun.objects.count(), GovernanceEvent.objects.count()) == (
        0,
        0,
        0,
    )


@pytest.mark.parametrize("text", BAD.values(), ids=BAD.keys())
def test_the_openai_api_answers_400_invalid_value_naming_the_message(setup, fake_provider, text):
    configuration, caller = setup
    before = provider_calls()
    messages = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": [{"type": "text", "text": text}]},
    ]

    response = post_raw(
        caller, CHAT, {"model": configuration.identifier, "messages": messages, "stream": True}
    )

    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "message": "messages[1].content[0].text: text must not contain NUL (U+0000) or an unpaired "
            "surrogate (U+D800 to U+DFFF).",
            "type": "invalid_request_error",
            "param": "messages[1].content[0].text",
            "code": "invalid_value",
        }
    }
    assert_nothing_happened(fake_provider, before)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"input": "Hi \ud83d"}, "input"),
        ({"messages": [{"role": "user", "content": "a\x00b"}]}, "messages[0].content"),
        ({"input": "Hi", "context": [{"name": "n", "text": "\udc00", "data_class": "public_content"}]},
         "context[0].text"),
        ({"input": "Hi", "metadata": {"k\x00": "v"}}, "metadata.(key)"),
    ],
)  # fmt: skip
def test_the_native_api_answers_400_invalid_text_naming_the_field(setup, fake_provider, body, field):
    configuration, caller = setup
    before = provider_calls()

    response = post_raw(caller, COMPLETIONS, {"configuration": configuration.identifier, **body})

    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_text",
        "message": f"{field}: text must not contain NUL (U+0000) or an unpaired surrogate (U+D800 to U+DFFF).",
        "extra": {"field": field},
    }
    assert_nothing_happened(fake_provider, before)


def test_a_run_with_bad_text_is_refused_before_anything_is_stored(setup, fake_provider):
    configuration, caller = setup
    before = provider_calls()

    response = post_raw(
        caller, "/api/v1/runs", {"configuration": configuration.identifier, "input": "\ud800"}
    )

    assert (response.status_code, response.json()["code"]) == (400, "invalid_text")
    assert_nothing_happened(fake_provider, before)


def test_a_surrogate_pair_is_one_character_and_goes_through(setup, fake_provider):
    configuration, caller = setup
    fake_provider.script(Reply(text="Fine."))

    response = post_raw(
        caller,
        CHAT,
        {"model": configuration.identifier, "messages": [{"role": "user", "content": "Hi \U0001f600"}]},
    )

    assert response.status_code == 200, response.content
    assert fake_provider.bodies()[0]["messages"][-1]["content"] == "Hi \U0001f600"
