"""Clients written for Anthropic's API, pointed at ``/api/anthropic`` unchanged: the official
``anthropic`` SDK (create, stream, a tool_use round trip, count_tokens) and LangChain's
``ChatAnthropic``. Each runs against a live server whose configuration is served by the loopback fake
provider, and the fake's recorder proves what reached the wire.

Canary secrets are drawn at test time (tests/canaries.py); none is written in this file.
"""

from __future__ import annotations

import anthropic
import pytest
from langchain_anthropic import ChatAnthropic

from agents.runtime.plan import model_profile
from catalog.services import api_client_create
from context_assembly.estimator import Estimator
from context_assembly.messages import ToolSpec
from gateway.models import CompletionRecord
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

CANARIES = {canary.kind: canary for canary in generate_canaries(seed=20261214)}
GITHUB = CANARIES["github_classic_pat"]
SYSTEM_PROMPT = "You write release notes for the Atlas team."
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


@pytest.fixture
def served(fake_provider):
    """A configuration in ``external_eu`` served by the fake, and a client token that may use it."""
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_EU,
        system_prompt=SYSTEM_PROMPT,
        system_prompt_data_class=DataClass.EDITOR_CONTENT,
        identifier="release-notes",
    )
    issued = api_client_create(
        name="anthropic-app",
        scopes=["configurations:use"],
        configurations=[configuration],
        default_input_data_class=DataClass.PUBLIC_CONTENT,
        trust_zone=TrustZone.EXTERNAL_GLOBAL,
    )
    return configuration, issued.token


def sdk(live_server, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=f"{live_server.url}/api/anthropic", api_key=token, max_retries=0, timeout=20
    )


def test_the_sdk_creates_a_governed_message_and_the_wire_holds_no_secret(live_server, fake_provider, served):
    configuration, token = served
    fake_provider.script(Reply(text="Atlas 2.1 ships faster search."))

    message = sdk(live_server, token).messages.create(
        model=configuration.identifier,
        max_tokens=200,
        system=[{"type": "text", "text": "Answer in one sentence.", "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": f"Summarise the release. Deploy key: {GITHUB.value}"}],
        stop_sequences=["END"],
        extra_body={"temperature": 0.2},  # the SDK dropped the keyword; the API still takes it
    )

    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == "Atlas 2.1 ships faster search."
    assert (message.model, message.role, message.stop_reason) == ("release-notes", "assistant", "end_turn")
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    extra = message.model_extra
    assert extra["governance"]["redactions"] == {"sent": {"github_token": 1}, "reply": {}}
    assert extra["governance_receipt"]["zone"] == "external_eu"
    assert extra["context_usage"]["used_tokens"] == {
        "value": message.usage.input_tokens,
        "provenance": "provider_reported",
    }
    sources = {(s["kind"], s["identifier"]) for s in extra["governance"]["decision"]["sources"]}
    assert sources == {
        ("system_prompt", "release-notes"),
        ("caller_context", "system"),
        ("caller_context", "stop"),
        ("task_input", "messages[0]"),
    }
    (request,) = fake_provider.requests
    assert [m["role"] for m in request.body["messages"]] == ["system", "user"]
    assert request.body["messages"][0]["content"] == SYSTEM_PROMPT
    assert request.body["messages"][1]["content"] == (
        'Context item "system":\nAnswer in one sentence.\n\n'
        "Summarise the release. Deploy key: [REDACTED:github_token]"
    )
    assert (request.body["max_tokens"], request.body["temperature"], request.body["stop"]) == (
        200,
        0.2,
        ["END"],
    )
    assert "cache_control" not in fake_provider.wire_text()
    assert GITHUB.value not in fake_provider.wire_text()
    assert CompletionRecord.objects.filter(request_id=extra["governance"]["request_id"]).count() == 1


def test_the_sdk_streams_anthropic_events_and_the_helper_assembles_the_message(
    live_server, fake_provider, served
):
    configuration, token = served
    answer = "Atlas 2.1 ships faster search, a new importer and fewer clicks for every export."
    fake_provider.script(Reply(text=answer))

    raw = list(
        sdk(live_server, token).messages.create(
            model=configuration.identifier,
            max_tokens=300,
            messages=[{"role": "user", "content": "Summarise the release."}],
            stream=True,
        )
    )
    fake_provider.script(Reply(text=answer))
    with sdk(live_server, token).messages.stream(
        model=configuration.identifier,
        max_tokens=300,
        messages=[{"role": "user", "content": "Summarise the release."}],
    ) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()

    kinds = [event.type for event in raw]
    deltas = kinds.count("content_block_delta")
    assert kinds == [
        "message_start",
        *(["content_block_start"] if deltas else []),
        *(["content_block_delta"] * deltas),
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert deltas > 1  # handed on as it arrived
    assert "".join(event.delta.text for event in raw if event.type == "content_block_delta") == answer
    assert raw[-2].delta.stop_reason == "end_turn"
    assert raw[-2].model_extra["governance_receipt"]["zone"] == "external_eu"
    assert "".join(pieces) == answer
    assert final.content[0].text == answer
    assert final.usage.output_tokens > 0
    assert len(fake_provider.requests) == 2


def test_a_tool_use_round_trip_returns_tool_use_and_takes_the_tool_result(live_server, fake_provider, served):
    configuration, token = served
    fake_provider.script(
        Reply.tools(("call_7", "get_weather", {"city": "Oslo"})), Reply(text="Sunny in Oslo.")
    )
    client = sdk(live_server, token)
    messages: list[dict] = [{"role": "user", "content": "Weather in Oslo?"}]

    first = client.messages.create(
        model=configuration.identifier, max_tokens=200, messages=messages, tools=[WEATHER]
    )
    (call,) = first.content
    messages += [
        {"role": "assistant", "content": [block.model_dump() for block in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}]},
    ]
    second = client.messages.create(
        model=configuration.identifier, max_tokens=200, messages=messages, tools=[WEATHER]
    )

    assert first.stop_reason == "tool_use"
    assert (call.type, call.id, call.name, call.input) == (
        "tool_use",
        "call_7",
        "get_weather",
        {"city": "Oslo"},
    )
    assert second.content[0].text == "Sunny in Oslo."
    first_body, second_body = (request.body for request in fake_provider.requests)
    assert first_body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": WEATHER["input_schema"],
            },
        }
    ]
    assert [m["role"] for m in second_body["messages"]] == ["system", "user", "assistant", "tool"]
    assert second_body["messages"][2]["tool_calls"] == [
        {
            "id": "call_7",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
        }
    ]
    assert second_body["messages"][3] == {"role": "tool", "tool_call_id": "call_7", "content": "sunny"}


def test_a_streamed_tool_call_is_assembled_by_the_sdk_helper(live_server, fake_provider, served):
    configuration, token = served
    fake_provider.script(Reply.tools(("call_9", "get_weather", {"city": "Bergen"}), text="Let me check."))

    with sdk(live_server, token).messages.stream(
        model=configuration.identifier,
        max_tokens=200,
        messages=[{"role": "user", "content": "Weather in Bergen?"}],
        tools=[WEATHER],
    ) as stream:
        final = stream.get_final_message()

    assert [block.type for block in final.content] == ["text", "tool_use"]
    assert final.content[0].text == "Let me check."
    assert (final.content[1].id, final.content[1].input) == ("call_9", {"city": "Bergen"})
    assert final.stop_reason == "tool_use"


def test_count_tokens_is_the_one_estimators_count_and_sends_nothing(live_server, fake_provider, served):
    configuration, token = served
    client = sdk(live_server, token)
    body = {
        "model": configuration.identifier,
        "messages": [{"role": "user", "content": "Summarise the release."}],
    }

    counted = client.messages.count_tokens(**body)
    with_tools = client.messages.count_tokens(**body, tools=[WEATHER])

    weather = {
        "name": "get_weather",
        "description": WEATHER["description"],
        "parameters": WEATHER["input_schema"],
    }
    tool_tokens = Estimator(model_profile(configuration.model)).count_tools([ToolSpec.from_openai(weather)])
    assert counted.input_tokens > 0
    assert with_tools.input_tokens - counted.input_tokens == tool_tokens
    assert counted.model_extra["breakdown"]["estimated"] == counted.input_tokens
    assert fake_provider.requests == []
    assert GovernanceEvent.objects.count() == 0


def test_a_secret_adjacent_message_is_refused_with_permission_error_and_nothing_is_sent(
    live_server, fake_provider, served
):
    configuration, token = served

    with pytest.raises(anthropic.PermissionDeniedError) as raised:
        sdk(live_server, token).messages.create(
            model=configuration.identifier,
            max_tokens=100,
            messages=[
                {"role": "user", "content": "Rotate the vault master key.", "data_class": "secret_adjacent"}
            ],
        )

    error = raised.value
    assert error.status_code == 403
    assert error.body["type"] == "error"
    assert error.body["error"]["type"] == "permission_error"
    assert error.body["error"]["code"] == "context_refused"
    refused = [s for s in error.body["error"]["governance"]["sources"] if s["outcome"] == "refused"]
    assert [(s["kind"], s["identifier"], s["data_class"]) for s in refused] == [
        ("task_input", "messages[0]", "secret_adjacent")
    ]
    assert "vault master" not in str(error.body)
    assert fake_provider.requests == []
    assert (
        GovernanceEvent.objects.filter(decision="context_blocked", source_identifier="messages[0]").count()
        == 1
    )


def test_langchain_chat_anthropic_gets_a_governed_answer(live_server, fake_provider, served):
    configuration, token = served
    fake_provider.script(Reply(text="Atlas 2.1 ships faster search."))
    model = ChatAnthropic(
        model=configuration.identifier,
        base_url=f"{live_server.url}/api/anthropic",
        api_key=token,
        max_tokens=200,
        max_retries=0,
        timeout=20,
    )

    answer = model.invoke([("system", "Answer in one sentence."), ("human", "Summarise the release.")])

    assert answer.content == "Atlas 2.1 ships faster search."
    assert answer.response_metadata["stop_reason"] == "end_turn"
    (request,) = fake_provider.requests
    assert request.body["messages"][1]["content"] == (
        'Context item "system":\nAnswer in one sentence.\n\nSummarise the release.'
    )
