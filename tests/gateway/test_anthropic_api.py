"""``/api/anthropic/v1`` through Django's test client: the token in ``x-api-key``, errors in
Anthropic's shape (whoever answers), the stream's event sequence, what is refused before anything is
sent, and how ``cache_control``, ``thinking``, a mid-conversation system message and a failed tool
result are carried."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from catalog.models import ApiClient, ProviderKind
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

MESSAGES = "/api/anthropic/v1/messages"
COUNT = "/api/anthropic/v1/messages/count_tokens"
WEATHER = {
    "name": "get_weather",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


@pytest.fixture
def configuration(fake_provider):
    return fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, identifier="notes")


@pytest.fixture
def caller(make_caller, configuration):
    return make_caller("configurations:use", configurations=(configuration,))


def ask(text: str = "Summarise the release.", **extra) -> dict:
    return {"model": "notes", "max_tokens": 100, "messages": [{"role": "user", "content": text}], **extra}


def anthropic_error(response, status: int, kind: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"type", "error"} and body["type"] == "error"
    assert body["error"]["type"] == kind
    return body["error"]


def events_of(response) -> list[tuple[str, dict]]:
    raw = b"".join(response.streaming_content).decode()
    events = []
    for chunk in raw.strip().split("\n\n"):
        name, data = chunk.split("\n")
        events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def test_the_token_in_x_api_key_is_accepted_as_claude_code_sends_it(caller, fake_provider):
    fake_provider.script(Reply(text="Done."))

    response = Client().post(
        MESSAGES, ask(), content_type="application/json", headers={"x-api-key": caller.token}
    )

    assert response.status_code == 200, response.content
    assert response.json()["content"] == [{"type": "text", "text": "Done."}]
    assert len(fake_provider.requests) == 1


@pytest.mark.parametrize("headers", [{}, {"x-api-key": "not-a-token"}], ids=["none", "unknown"])
def test_a_missing_or_unknown_token_is_an_authentication_error(caller, fake_provider, headers):
    response = Client().post(MESSAGES, ask(), content_type="application/json", headers=headers)

    error = anthropic_error(response, 401, "authentication_error")
    assert error["code"] in ("not_authenticated", "authentication_failed")
    assert fake_provider.requests == []


def test_an_unknown_model_and_an_unknown_path_answer_not_found_in_anthropics_shape(caller):
    error = anthropic_error(caller.post(MESSAGES, {**ask(), "model": "nobody"}), 404, "not_found_error")
    assert error["message"] == "There is no configuration 'nobody'."
    anthropic_error(caller.post("/api/anthropic/v1/complete", ask()), 404, "not_found_error")


@pytest.mark.parametrize(
    ("extra", "param", "message"),
    [
        (
            {"thinking": {"type": "enabled", "budget_tokens": 2048}, "max_tokens": 4096},
            "thinking",
            "thinking is not supported by model 'gpt-4o'",
        ),
        (
            {"thinking": {"type": "enabled", "budget_tokens": 100}},
            "thinking",
            "thinking.budget_tokens must be",
        ),
        (
            {"thinking": {"type": "enabled", "budget_tokens": 2048}},
            "thinking",
            "thinking.budget_tokens must be",
        ),
        ({"top_k": 5}, "top_k", "top_k is not supported."),
        (
            {"mcp_servers": [{"type": "url", "url": "http://127.0.0.1:1/"}]},
            "mcp_servers",
            "mcp_servers is not",
        ),
    ],
)
def test_a_parameter_this_service_cannot_honour_is_a_400_naming_it_and_nothing_is_sent(
    caller, fake_provider, extra, param, message
):
    error = anthropic_error(caller.post(MESSAGES, ask(**extra)), 400, "invalid_request_error")

    assert (error["code"], error["param"]) == ("unsupported_parameter", param)
    assert error["message"].startswith(message)
    assert fake_provider.requests == []


def test_an_image_url_block_is_a_400_naming_the_block_where_remote_media_is_not_fetched(
    caller, fake_provider
):
    image = {"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}}
    body = {
        **ask(),
        "messages": [{"role": "user", "content": [{"type": "text", "text": "What is it?"}, image]}],
    }

    error = anthropic_error(caller.post(MESSAGES, body), 400, "invalid_request_error")

    assert error["param"] == "messages[0].content[1].image_url.url"
    assert error["message"] == (
        "messages[0].content[1].image_url.url: this configuration does not fetch remote media; "
        "send the bytes inline"
    )
    assert fake_provider.requests == []


def test_adaptive_and_disabled_thinking_are_accepted_and_never_forwarded(caller, fake_provider):
    fake_provider.script(Reply(text="One."), Reply(text="Two."))

    for thinking in ({"type": "adaptive"}, {"type": "disabled"}):
        assert caller.post(MESSAGES, ask(thinking=thinking)).status_code == 200

    assert [set(request.body) & {"thinking", "reasoning_effort"} for request in fake_provider.requests] == [
        set(),
        set(),
    ]


def test_a_refused_message_answers_403_in_anthropics_shape_streamed_or_not_and_sends_nothing(
    caller, fake_provider
):
    secret = {"role": "user", "content": "The vault master key.", "data_class": DataClass.SECRET_ADJACENT}

    for stream in (False, True):
        response = caller.post(MESSAGES, {**ask(), "messages": [secret], "stream": stream})

        error = anthropic_error(response, 403, "permission_error")
        assert error["code"] == "context_refused"
        assert error["message"] == (
            "task_input 'messages[0]' may not be sent to zone external_eu: "
            "external_eu is less trusted than ceiling local."
        )
        assert "vault" not in response.content.decode()
    assert fake_provider.requests == []
    assert (
        GovernanceEvent.objects.filter(decision="context_blocked", source_identifier="messages[0]").count()
        == 2
    )


def test_an_exhausted_budget_is_a_rate_limit_error_and_nothing_is_sent(caller, fake_provider):
    ApiClient.objects.filter(pk=caller.client.pk).update(daily_token_limit=10)

    error = anthropic_error(caller.post(MESSAGES, ask()), 429, "rate_limit_error")

    assert error["code"] == "budget_exhausted"
    assert fake_provider.requests == []


def test_the_stream_is_anthropics_event_sequence_with_tool_use_whole_after_the_text(caller, fake_provider):
    fake_provider.script(Reply.tools(("toolu_1", "get_weather", {"city": "Oslo"}), text="Checking."))

    response = caller.post(MESSAGES, ask("Weather in Oslo?", tools=[WEATHER], stream=True))

    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream; charset=utf-8"
    events = events_of(response)
    names = [name for name, _ in events]
    texts = names.count("content_block_delta") - 1
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        *["content_block_delta"] * texts,
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(name == data["type"] for name, data in events)
    assert events[0][1]["message"]["content"] == [] and events[0][1]["message"]["model"] == "notes"
    text = "".join(data["delta"]["text"] for _, data in events[3 : 3 + texts])
    assert text == "Checking."
    tool_start, tool_input, tool_stop = (data for _, data in events[4 + texts : 7 + texts])
    assert tool_start == {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
    }
    assert tool_input["delta"] == {"type": "input_json_delta", "partial_json": '{"city":"Oslo"}'}
    assert tool_stop == {"type": "content_block_stop", "index": 1}
    delta = events[-2][1]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert delta["usage"]["output_tokens"] > 0
    assert delta["governance_receipt"]["zone"] == "external_eu"


def test_a_provider_failure_after_the_first_event_ends_the_stream_with_an_error_event(caller, fake_provider):
    fake_provider.script(Reply(text="A long enough answer to be cut in the middle.", truncate_stream=True))

    response = caller.post(MESSAGES, ask(stream=True))

    assert response.status_code == 200
    events = events_of(response)
    assert events[0][0] == "message_start"
    name, error = events[-1]
    assert name == "error" and error["type"] == "error"
    assert error["error"]["type"] == "api_error"
    assert "message_stop" not in [name for name, _ in events]


def test_a_mid_conversation_system_message_and_a_failed_tool_result_are_carried_as_caller_input(
    caller, fake_provider
):
    fake_provider.script(Reply(text="Sorry."))
    messages = [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "system", "content": "Agents: none."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "is_error": True,
                    "content": [{"type": "text", "text": "timeout"}],
                },
                {"type": "text", "text": "Try again?", "cache_control": {"type": "ephemeral"}},
            ],
        },
    ]

    response = caller.post(MESSAGES, {**ask(), "messages": messages, "tools": [WEATHER]})

    assert response.status_code == 200, response.content
    wire = fake_provider.requests[0].body["messages"]
    assert [m["role"] for m in wire] == ["system", "user", "user", "assistant", "tool", "user"]
    assert wire[2]["content"] == 'Context item "system":\nAgents: none.'
    assert wire[4] == {"role": "tool", "tool_call_id": "t1", "content": "Error: timeout"}
    assert wire[5]["content"] == "Try again?"
    sources = {s["identifier"] for s in response.json()["governance"]["decision"]["sources"]}
    assert {"messages[1]", "messages[2]", "messages[3].content[0]", "messages[3]"} <= sources


def test_with_an_anthropic_provider_the_callers_cache_control_is_not_forwarded_as_given(
    make_caller, fake_provider
):
    provider = provider_make(
        kind=ProviderKind.ANTHROPIC,
        base_url=fake_provider.anthropic_base_url,
        trust_zone=TrustZone.EXTERNAL_EU,
    )
    model = model_make(provider=provider, model_id="claude-gateway-test", tokenizer="approximate")
    configuration = configuration_make(model=model, identifier="claude-notes", system_prompt="Be brief.")
    caller = make_caller("configurations:use", configurations=(configuration,))
    marked = {"type": "ephemeral"}
    plain = {"model": "claude-notes", "max_tokens": 100, "system": "Answer tersely."}
    plain["messages"] = [{"role": "user", "content": [{"type": "text", "text": "Hi."}]}]
    cached = {**plain, "system": [{"type": "text", "text": "Answer tersely.", "cache_control": marked}]}
    cached["messages"] = [
        {"role": "user", "content": [{"type": "text", "text": "Hi.", "cache_control": marked}]}
    ]

    for body in (plain, cached):
        assert caller.post(MESSAGES, body).status_code == 200

    first, second = (request.body for request in fake_provider.requests)
    assert second == first
    assert "cache_control" not in json.dumps(second)  # a prefix this short is below the minimum


def test_count_tokens_accepts_x_api_key_and_sends_nothing(caller, fake_provider):
    response = Client().post(
        COUNT,
        {"model": "notes", "messages": [{"role": "user", "content": "Hi."}]},
        content_type="application/json",
        headers={"x-api-key": caller.token},
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["input_tokens"] == body["breakdown"]["estimated"] > 0
    assert body["context_window"] == 128_000
    assert fake_provider.requests == []
