"""What a request asks of an Anthropic-served configuration beyond its messages is forwarded, held or
refused before anything is sent, never dropped: ``parallel_tool_calls`` false is Anthropic's
``disable_parallel_tool_use``, ``response_format`` is held by a response tool whose input is the reply
(checked against the schema), ``seed`` is a 400 naming it and the model. The same on every entry point
(chat completions, Responses, Anthropic messages, agent runs share one send path)."""

from __future__ import annotations

import json

import pytest

from catalog.models import ProviderKind
from gateway.models import CompletionRecord
from governance.vocabulary import TrustZone
from providers.anthropic_structured import RESPONSE_TOOL
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"
RESPONSES = "/api/openai/v1/responses"
MESSAGES = "/api/anthropic/v1/messages"
MODEL = "claude-structured-test"
CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "sunny": {"type": "boolean"}},
    "required": ["city", "sunny"],
    "additionalProperties": False,
}
SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY, "strict": True}}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
USER = [{"role": "user", "content": "Which city is sunny?"}]


@pytest.fixture
def setup(fake_provider, make_caller):
    provider = provider_make(
        kind=ProviderKind.ANTHROPIC,
        base_url=fake_provider.anthropic_base_url,
        trust_zone=TrustZone.EXTERNAL_EU,
        max_retries=0,
    )
    configuration = configuration_make(
        model=model_make(provider=provider, model_id=MODEL), identifier="claude-notes"
    )
    return configuration, make_caller("configurations:use", configurations=(configuration,))


def chat(caller, messages=USER, **fields):
    return caller.post(CHAT, {"model": "claude-notes", "messages": messages, **fields})


def events_of(response) -> list[dict]:
    raw = b"".join(response.streaming_content).decode()
    lines = [line.removeprefix("data: ") for line in raw.split("\n") if line.startswith("data: ")]
    return [json.loads(line) for line in lines if line != "[DONE]"]


def test_seed_is_a_400_naming_it_and_the_model_and_nothing_is_sent(setup, fake_provider):
    _, caller = setup

    response = chat(caller, seed=7)

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("unsupported_parameter", "seed")
    assert MODEL in error["message"]
    assert fake_provider.requests == []
    assert CompletionRecord.objects.count() == 0


def test_parallel_tool_calls_false_is_disable_parallel_tool_use(setup, fake_provider):
    _, caller = setup
    fake_provider.script(Reply(text="Sunny in Oslo."), Reply(text="Sunny in Oslo."))

    assert chat(caller, tools=[WEATHER], parallel_tool_calls=False).status_code == 200
    assert chat(caller, tools=[WEATHER], parallel_tool_calls=True).status_code == 200

    held, free = fake_provider.bodies()
    assert held["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert "tool_choice" not in free


def test_a_json_schema_is_a_forced_response_tool_whose_input_is_the_reply(setup, fake_provider):
    _, caller = setup
    fake_provider.script(Reply.tools(("toolu_1", RESPONSE_TOOL, {"city": "Oslo", "sunny": True})))

    response = chat(caller, response_format=SCHEMA_FORMAT)

    assert response.status_code == 200, response.content
    sent = fake_provider.bodies()[0]
    assert sent["tools"] == [
        {"name": RESPONSE_TOOL, "description": sent["tools"][0]["description"], "input_schema": CITY}
    ]
    assert sent["tool_choice"] == {"type": "tool", "name": RESPONSE_TOOL}
    choice = response.json()["choices"][0]
    assert json.loads(choice["message"]["content"]) == {"city": "Oslo", "sunny": True}
    assert (choice["finish_reason"], choice["message"].get("tool_calls")) == ("stop", None)


def test_a_streamed_structured_reply_is_handed_on_as_text(setup, fake_provider):
    _, caller = setup
    fake_provider.script(Reply.tools(("toolu_1", RESPONSE_TOOL, {"city": "Oslo", "sunny": True})))

    response = chat(caller, response_format=SCHEMA_FORMAT, stream=True)

    assert response.status_code == 200
    chunks = events_of(response)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert json.loads(text) == {"city": "Oslo", "sunny": True}
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    assert not any(c["choices"][0]["delta"].get("tool_calls") for c in chunks if c["choices"])


def test_beside_the_callers_tools_the_model_must_call_one_of_them_or_answer(setup, fake_provider):
    _, caller = setup
    fake_provider.script(Reply.tools(("toolu_1", "get_weather", {"city": "Oslo"})))

    response = chat(caller, response_format=SCHEMA_FORMAT, tools=[WEATHER])

    assert response.status_code == 200, response.content
    sent = fake_provider.bodies()[0]
    assert [tool["name"] for tool in sent["tools"]] == ["get_weather", RESPONSE_TOOL]
    assert sent["tool_choice"] == {"type": "any"}
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert [call["function"]["name"] for call in choice["message"]["tool_calls"]] == ["get_weather"]


def test_a_structured_reply_that_breaks_the_schema_is_not_handed_on(setup, fake_provider):
    _, caller = setup
    fake_provider.script(Reply.tools(("toolu_1", RESPONSE_TOOL, {"city": 42})))

    response = chat(caller, response_format=SCHEMA_FORMAT)

    assert response.status_code == 502, response.content
    assert response.json()["error"]["failure_class"] == "malformed"
    assert "42" not in response.content.decode()


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        (
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "l", "schema": {"type": "array"}},
                }
            },
            "root",
        ),
        (
            {
                "response_format": {"type": "json_object"},
                "tools": [{"type": "function", "function": {"name": RESPONSE_TOOL, "parameters": {}}}],
            },
            RESPONSE_TOOL,
        ),
    ],
    ids=["array-root", "tool-named-as-the-response-tool"],
)
def test_a_format_that_cannot_be_held_is_a_400_and_nothing_is_sent(setup, fake_provider, fields, problem):
    _, caller = setup

    response = chat(caller, **fields)

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("unsupported_parameter", "response_format")
    assert problem in error["message"] and MODEL in error["message"]
    assert fake_provider.requests == []


def test_the_responses_api_holds_a_text_format_the_same_way(setup, fake_provider):
    _, caller = setup
    fake_provider.script(Reply.tools(("toolu_1", RESPONSE_TOOL, {"city": "Oslo", "sunny": False})))
    text_format = {"type": "json_schema", "name": "city", "schema": CITY, "strict": True}

    response = caller.post(
        RESPONSES, {"model": "claude-notes", "input": "Which city?", "text": {"format": text_format}}
    )

    assert response.status_code == 200, response.content
    assert fake_provider.bodies()[0]["tool_choice"] == {"type": "tool", "name": RESPONSE_TOOL}
    assert json.loads(response.json()["output"][0]["content"][0]["text"]) == {"city": "Oslo", "sunny": False}


def test_the_anthropic_api_holds_output_config_format_the_same_way(setup, fake_provider):
    _, caller = setup
    fake_provider.script(Reply.tools(("toolu_1", RESPONSE_TOOL, {"city": "Oslo", "sunny": True})))
    body = {"model": "claude-notes", "max_tokens": 100, "messages": USER}
    body["output_config"] = {"format": {"type": "json_schema", "schema": CITY}}

    response = caller.post(MESSAGES, body)

    assert response.status_code == 200, response.content
    assert fake_provider.bodies()[0]["tool_choice"] == {"type": "tool", "name": RESPONSE_TOOL}
    answer = response.json()
    assert [block["type"] for block in answer["content"]] == ["text"]
    assert json.loads(answer["content"][0]["text"]) == {"city": "Oslo", "sunny": True}
    assert answer["stop_reason"] == "end_turn"
