"""``/api/openai/v1/responses`` with the official ``openai`` SDK against a live server whose
configuration is served by the loopback fake provider (which answers chat completions: the endpoint
translates). The fake's recorder proves what reached the wire; refused context never reaches it.

Canary secrets are drawn at test time (tests/canaries.py); none is written in this file.
"""

from __future__ import annotations

import json

import openai
import pytest

from agents.models import ClientDailyUsage
from catalog.models import ApiClient
from catalog.services import api_client_create
from gateway.models import CompletionRecord, StoredResponse
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

CANARIES = {canary.kind: canary for canary in generate_canaries(seed=20261203)}
GITHUB = CANARIES["github_classic_pat"]
SYSTEM_PROMPT = "You write release notes for the Atlas team."
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def leaked(text: str, *canaries) -> list[str]:
    return [c.kind for c in canaries for fragment in c.fragments() if fragment in text]


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
        name="consumer-app",
        scopes=["configurations:use"],
        configurations=[configuration],
        default_input_data_class=DataClass.PUBLIC_CONTENT,
        trust_zone=TrustZone.EXTERNAL_GLOBAL,
    )
    return configuration, issued.token


def sdk(live_server, token: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{live_server.url}/api/openai/v1", api_key=token, max_retries=0, timeout=20
    )


def test_create_is_governed_redacted_and_stored_with_the_reply_label(live_server, fake_provider, served):
    configuration, token = served
    fake_provider.script(Reply(text="Atlas 2.1 ships faster search."))

    response = sdk(live_server, token).responses.create(
        model=configuration.identifier,
        instructions="Answer in one sentence.",
        input=f"Summarise the release. Deploy key: {GITHUB.value}",
        max_output_tokens=200,
        temperature=0.2,
    )

    assert response.output_text == "Atlas 2.1 ships faster search."
    assert (response.status, response.model, response.object) == ("completed", "release-notes", "response")
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    extra = response.model_extra
    assert extra["governance"]["redactions"] == {"sent": {"github_token": 1}, "reply": {}}
    assert extra["governance_receipt"]["label"] == "editor_content"
    sources = {(s["kind"], s["identifier"]): s["outcome"] for s in extra["governance"]["decision"]["sources"]}
    assert sources == {
        ("system_prompt", "release-notes"): "allowed",
        ("caller_context", "instructions"): "allowed",
        ("task_input", "input"): "allowed",
    }
    (body,) = fake_provider.bodies()
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == SYSTEM_PROMPT
    assert body["messages"][1]["content"] == (
        'Context item "system":\nAnswer in one sentence.\n\n'
        "Summarise the release. Deploy key: [REDACTED:github_token]"
    )
    assert (body["max_tokens"], body["temperature"]) == (200, 0.2)
    assert leaked(fake_provider.wire_text(), GITHUB) == []
    stored = StoredResponse.objects.get()
    assert (stored.response_id, stored.label, stored.receiver_label) == (
        response.id,
        "editor_content",
        "editor_content",
    )
    assert leaked(json.dumps(stored.conversation), GITHUB) == []
    assert CompletionRecord.objects.get().request_id == extra["governance"]["request_id"]


def test_stream_events_follow_the_sdks_rules_and_the_reply_is_redacted_whole_and_streamed(
    live_server, fake_provider, served
):
    configuration, token = served
    answer = f"Rotate the key {GITHUB.value} today, then tell the whole team about the new release."
    fake_provider.script(Reply(text=answer), Reply(text=answer), Reply(text=answer))
    client = sdk(live_server, token)
    expected = "Rotate the key [REDACTED:github_token] today, then tell the whole team about the new release."

    with client.responses.stream(model=configuration.identifier, input="Summarise.") as stream:
        deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    raw = list(client.responses.create(model=configuration.identifier, input="Summarise.", stream=True))
    whole = client.responses.create(model=configuration.identifier, input="Summarise.")

    assert "".join(deltas) == expected and len(deltas) > 1
    assert final.output_text == expected and whole.output_text == expected
    assert final.usage.output_tokens > 0
    assert final.model_extra["governance"]["redactions"]["reply"] == {"github_token": 1}
    assert [event.type for event in raw][:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert [event.type for event in raw][-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [event.sequence_number for event in raw] == list(range(len(raw)))
    assert raw[-1].response.id == raw[0].response.id
    assert raw[-1].response.model_extra["governance_receipt"]["label"] == "editor_content"
    assert (
        leaked(final.output_text + json.dumps([e.model_dump() for e in raw]) + whole.output_text, GITHUB)
        == []
    )
    assert StoredResponse.objects.count() == 3
    assert (
        leaked(json.dumps(list(StoredResponse.objects.values_list("conversation", flat=True))), GITHUB) == []
    )


def test_function_tools_round_trip_with_function_call_output_streamed_and_not(
    live_server, fake_provider, served
):
    configuration, token = served
    fake_provider.script(
        Reply.tools(("call_7", "get_weather", {"city": "Oslo"})),
        Reply(text="Sunny in Oslo."),
        Reply.tools(("call_8", "get_weather", {"city": "Bergen"})),
    )
    client = sdk(live_server, token)
    history: list = [{"role": "user", "content": "Weather in Oslo?"}]

    first = client.responses.create(model=configuration.identifier, input=history, tools=[WEATHER])
    (call,) = first.output
    history += [
        call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": '{"sky": "sunny"}'},
    ]
    second = client.responses.create(model=configuration.identifier, input=history, tools=[WEATHER])
    with client.responses.stream(
        model=configuration.identifier, input="Weather in Bergen?", tools=[WEATHER], tool_choice="required"
    ) as stream:
        streamed = stream.get_final_response()

    assert (call.type, call.call_id, call.name, json.loads(call.arguments)) == (
        "function_call",
        "call_7",
        "get_weather",
        {"city": "Oslo"},
    )
    assert second.output_text == "Sunny in Oslo."
    (streamed_call,) = streamed.output
    assert (streamed_call.call_id, json.loads(streamed_call.arguments)) == ("call_8", {"city": "Bergen"})
    first_body, second_body, third_body = fake_provider.bodies()
    assert first_body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": WEATHER["parameters"],
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
    assert second_body["messages"][3] == {
        "role": "tool",
        "content": '{"sky": "sunny"}',
        "tool_call_id": "call_7",
    }
    assert third_body["tool_choice"] == "required"


def test_previous_response_id_continues_the_clients_own_response_with_its_reply_as_a_labelled_turn(
    live_server, fake_provider, served
):
    configuration, token = served
    fake_provider.script(Reply(text="Atlas ships Monday."), Reply(text="Yes, at nine."))
    client = sdk(live_server, token)

    first = client.responses.create(model=configuration.identifier, instructions="Be brief.", input="When?")
    second = client.responses.create(
        model=configuration.identifier, input="In the morning?", previous_response_id=first.id
    )

    assert second.output_text == "Yes, at nine." and second.previous_response_id == first.id
    messages = fake_provider.bodies()[1]["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("system", SYSTEM_PROMPT),
        ("user", "When?"),
        ("assistant", "Atlas ships Monday."),
        ("user", "In the morning?"),
    ]
    sources = [
        (s["kind"], s["identifier"], s["data_class"], s["outcome"])
        for s in second.model_extra["governance"]["decision"]["sources"]
    ]
    assert sources == [
        ("system_prompt", "release-notes", "editor_content", "allowed"),
        ("assistant_turn", f"{first.id}.output", "editor_content", "allowed"),
        ("caller_context", "input", "public_content", "allowed"),
        ("task_input", "previous[0]", "public_content", "allowed"),
    ]


def test_another_clients_response_or_an_unstored_one_is_not_found_and_nothing_is_sent(
    live_server, fake_provider, served
):
    configuration, token = served
    other = api_client_create(
        name="other-app", scopes=["configurations:use"], configurations=[configuration]
    ).token
    fake_provider.script(Reply(text="Atlas ships Monday."), Reply(text="Not stored."))
    first = sdk(live_server, token).responses.create(model=configuration.identifier, input="When?")
    unstored = sdk(live_server, token).responses.create(
        model=configuration.identifier, input="When?", store=False
    )
    sent = len(fake_provider.requests)

    refused = []
    for caller, previous in ((other, first.id), (token, unstored.id), (token, "resp_unknown")):
        for stream in (False, True):
            with pytest.raises(openai.NotFoundError) as raised:
                sdk(live_server, caller).responses.create(
                    model=configuration.identifier,
                    input="And then?",
                    previous_response_id=previous,
                    stream=stream,
                )
            refused.append(
                (raised.value.status_code, raised.value.code, raised.value.param, raised.value.type)
            )

    assert (
        refused == [(404, "previous_response_not_found", "previous_response_id", "invalid_request_error")] * 6
    )
    assert (sent, len(fake_provider.requests)) == (2, 2)
    assert list(StoredResponse.objects.values_list("response_id", flat=True)) == [first.id]


def test_a_secret_adjacent_item_is_refused_in_openais_shape_and_nothing_is_sent_or_stored(
    live_server, fake_provider, served
):
    configuration, token = served

    for stream in (False, True):
        with pytest.raises(openai.PermissionDeniedError) as raised:
            sdk(live_server, token).responses.create(
                model=configuration.identifier,
                input=[{"role": "user", "content": "Rotate the vault key.", "data_class": "secret_adjacent"}],
                stream=stream,
            )
        error = raised.value
        assert (error.status_code, error.code, error.type) == (403, "context_refused", "permission_error")
        refused = [s for s in error.body["governance"]["sources"] if s["outcome"] == "refused"]
        assert [(s["kind"], s["identifier"], s["data_class"]) for s in refused] == [
            ("task_input", "input[0]", "secret_adjacent")
        ]

    assert fake_provider.requests == []
    assert StoredResponse.objects.count() == 0 and CompletionRecord.objects.count() == 0
    assert (
        GovernanceEvent.objects.filter(decision="context_blocked", source_identifier="input[0]").count() == 2
    )


def test_unsupported_items_and_parameters_are_bad_requests_naming_them(live_server, fake_provider, served):
    configuration, token = served
    client = sdk(live_server, token)
    cases = [
        ({"input": [{"type": "reasoning", "summary": []}]}, "input[0].type"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]},
            "input[0].content[0].type",
        ),
        ({"input": "Hi", "tools": [{"name": "typeless"}]}, "tools[0].type"),
        ({"input": "Hi", "background": True}, "background"),
        ({"input": "Hi", "include": ["file_search_call.results"]}, "include"),
        ({"input": "Hi", "reasoning": {"effort": "high"}}, "reasoning"),
    ]

    params = []
    for fields, _ in cases:
        with pytest.raises(openai.BadRequestError) as raised:
            client.responses.create(model=configuration.identifier, **fields)
        params.append(raised.value.param)

    assert params == [param for _, param in cases]
    assert fake_provider.requests == []


def test_a_stream_broken_midway_ends_with_response_failed_and_an_error_the_sdk_raises(
    live_server, fake_provider, served
):
    configuration, token = served
    fake_provider.script(Reply(text="Shipped today, and more news follows after this.", truncate_stream=True))

    events = []
    with pytest.raises(openai.APIError) as raised:
        for event in sdk(live_server, token).responses.create(
            model=configuration.identifier, input="Hi.", stream=True
        ):
            events.append(event.type)

    assert events[0] == "response.created" and events[-1] == "response.failed"
    assert raised.value.body["type"] == "api_error"
    assert StoredResponse.objects.count() == 0


def test_the_budget_is_charged_and_an_exhausted_one_refuses_without_retries(
    live_server, fake_provider, served
):
    configuration, token = served
    fake_provider.script(
        Reply(text="Shipped.", prompt_tokens=120, completion_tokens=30),
        Reply(text="Shipped today, as planned.", prompt_tokens=100, completion_tokens=20),
    )
    client = openai.OpenAI(
        base_url=f"{live_server.url}/api/openai/v1", api_key=token, max_retries=2, timeout=20
    )

    client.responses.create(model=configuration.identifier, input="Hi.")
    (day,) = ClientDailyUsage.objects.all()
    assert (day.tokens_used, day.tokens_reserved) == (150, 0)
    with client.responses.stream(model=configuration.identifier, input="Hi.") as stream:
        assert stream.get_final_response().usage.total_tokens == 120
    day.refresh_from_db()
    assert (day.tokens_used, day.tokens_reserved) == (270, 0)
    ApiClient.objects.filter(name="consumer-app").update(daily_token_limit=280)
    for stream in (False, True):
        with pytest.raises(openai.RateLimitError) as raised:
            client.responses.create(
                model=configuration.identifier, input="Summarise the release.", stream=stream
            )
        assert (raised.value.status_code, raised.value.code) == (429, "budget_exhausted")

    assert len(fake_provider.requests) == 2
    assert GovernanceEvent.objects.filter(decision="budget_exhausted").count() == 2


def test_a_reply_cut_at_max_output_tokens_is_an_incomplete_response(live_server, fake_provider, served):
    configuration, token = served
    fake_provider.script(Reply(text="Atlas 2.1 ships", max_tokens_reached=True))

    response = sdk(live_server, token).responses.create(
        model=configuration.identifier, input="Summarise.", max_output_tokens=4
    )

    assert (response.status, response.incomplete_details.reason) == ("incomplete", "max_output_tokens")
    assert response.output_text == "Atlas 2.1 ships"
    assert fake_provider.bodies()[0]["max_tokens"] == 4


def test_too_many_input_items_is_a_bad_request_naming_input(live_server, fake_provider, served):
    configuration, token = served
    items = [{"role": "user", "content": "Hi."}] * 1001

    with pytest.raises(openai.BadRequestError) as raised:
        sdk(live_server, token).responses.create(model=configuration.identifier, input=items)

    assert (raised.value.param, raised.value.code) == ("input", "invalid_value")
    assert fake_provider.requests == []


def test_a_function_call_output_continues_the_stored_response_that_called_the_tool(
    live_server, fake_provider, served
):
    configuration, token = served
    fake_provider.script(
        Reply.tools(("call_7", "get_weather", {"city": "Oslo"})), Reply(text="Sunny in Oslo.")
    )
    client = sdk(live_server, token)

    first = client.responses.create(model=configuration.identifier, input="Weather in Oslo?", tools=[WEATHER])
    second = client.responses.create(
        model=configuration.identifier,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": "call_7", "output": "sunny"}],
        tools=[WEATHER],
    )

    assert second.output_text == "Sunny in Oslo."
    messages = fake_provider.bodies()[1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["tool_calls"][0]["id"] == "call_7"
    assert messages[3] == {"role": "tool", "content": "sunny", "tool_call_id": "call_7"}
    kinds = [(s["kind"], s["identifier"]) for s in second.model_extra["governance"]["decision"]["sources"]]
    assert kinds == [
        ("system_prompt", "release-notes"),
        ("assistant_turn", f"{first.id}.output"),
        ("caller_context", "input[0]"),
        ("caller_context", "tools"),
        ("task_input", "previous[0]"),
    ]


def test_a_streamed_reply_with_text_then_a_tool_call_is_one_message_and_one_call(
    live_server, fake_provider, served
):
    configuration, token = served
    fake_provider.script(
        Reply.tools(("call_9", "get_weather", {"city": "Oslo"}), text="Let me look that up for you now.")
    )

    with sdk(live_server, token).responses.stream(
        model=configuration.identifier, input="Weather in Oslo?", tools=[WEATHER]
    ) as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()

    message, call = final.output
    assert (message.type, final.output_text) == ("message", "Let me look that up for you now.")
    assert (call.type, call.call_id, json.loads(call.arguments)) == (
        "function_call",
        "call_9",
        {"city": "Oslo"},
    )
    # The redaction hands on its held-back last word once the tool call has begun: the message item stays
    # open until the finish, so that word still lands in it.
    text = "response.output_text.delta"
    assert types == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *[text] * 4,
        "response.output_item.added",
        text,
        "response.function_call_arguments.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
