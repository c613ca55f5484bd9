"""``/api/openai/v1``: the request fields, how messages are governed, the provider parameters on the
wire, the errors in OpenAI's shape, and the event stream."""

from __future__ import annotations

import json
import threading

import pytest
from django.test import override_settings

from agents.models import AgentRun
from catalog.models import ProviderKind
from gateway.models import CompletionRecord
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.provider_server import Reply, context_length_exceeded, rate_limited, server_error

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"
CANARIES = {canary.kind: canary for canary in generate_canaries(seed=20261214)}
GITHUB = CANARIES["github_classic_pat"]
STRIPE = CANARIES["stripe_live_secret_key"]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def leaked(text: str, *canaries) -> list[str]:
    return [c.kind for c in canaries for fragment in c.fragments() if fragment in text]


def openai_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert {"message", "type", "param", "code"} <= set(body["error"])
    assert body["error"]["code"] == code
    return body["error"]


@pytest.fixture
def setup(fake_provider, make_caller):
    def make(zone: str = TrustZone.EXTERNAL_EU, **fields):
        configuration = fake_configuration(fake_provider, zone=zone, **fields)
        caller = make_caller("configurations:use", configurations=(configuration,))
        return configuration, caller

    return make


def chat(caller, configuration, messages, headers=None, **fields):
    return caller.post(
        CHAT, {"model": configuration.identifier, "messages": messages, **fields}, headers=headers
    )


# --- messages and governance ---------------------------------------------------------------------------------


def test_a_conversation_goes_on_the_wire_after_the_configuration_prompt(setup, fake_provider):
    configuration, caller = setup(system_prompt="Configured prompt.")
    fake_provider.script(Reply(text="Fine."))
    messages = [
        {"role": "developer", "content": "Be terse."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "First"}, {"type": "text", "text": "question"}],
        },
        {"role": "assistant", "content": "First answer."},
        {"role": "system", "content": "Now in French."},
        {"role": "user", "content": "Second question", "name": "sam"},
    ]

    response = chat(caller, configuration, messages)

    assert response.status_code == 200, response.content
    assert fake_provider.bodies()[0]["messages"] == [
        {"role": "system", "content": "Configured prompt."},
        {"role": "user", "content": 'Context item "developer":\nBe terse.\n\nFirst\nquestion'},
        {"role": "assistant", "content": "First answer."},
        {"role": "user", "content": 'Context item "system":\nNow in French.'},
        {"role": "user", "content": "Second question", "name": "sam"},
    ]
    sources = response.json()["governance"]["decision"]["sources"]
    assert sorted((s["kind"], s["identifier"]) for s in sources) == [
        ("caller_context", "messages[0]"),
        ("caller_context", "messages[2]"),
        ("caller_context", "messages[3]"),
        ("caller_context", "messages[4]"),
        ("system_prompt", configuration.identifier),
        ("task_input", "messages[1]"),
    ]


def test_a_configuration_that_allows_it_takes_the_caller_system_message_as_its_prompt(setup, fake_provider):
    configuration, caller = setup(system_prompt="Configured prompt.", allow_system_override=True)
    fake_provider.script(Reply(text="Fine."))

    response = chat(
        caller, configuration, [{"role": "system", "content": "Mine."}, {"role": "user", "content": "Hi"}]
    )

    assert response.status_code == 200, response.content
    assert fake_provider.bodies()[0]["messages"] == [
        {"role": "system", "content": "Mine."},
        {"role": "user", "content": "Hi"},
    ]
    sources = response.json()["governance"]["decision"]["sources"]
    assert [(s["kind"], s["identifier"]) for s in sources] == [
        ("caller_context", "messages[0]"),
        ("task_input", "messages[1]"),
    ]


def test_the_header_class_applies_to_messages_without_their_own(setup, fake_provider):
    configuration, caller = setup()
    messages = [
        {"role": "user", "content": "Build logs.", "data_class": "public_content"},
        {"role": "assistant", "content": "ok"},
    ]
    messages.append({"role": "user", "content": "More logs."})

    response = chat(caller, configuration, messages, headers={"X-Data-Class": "system_diagnostics"})

    error = openai_error(response, 403, "context_refused")
    assert error["type"] == "permission_error"
    refused = [
        (s["identifier"], s["data_class"])
        for s in error["governance"]["sources"]
        if s["outcome"] == "refused"
    ]
    assert refused == [("messages[1]", "system_diagnostics"), ("messages[2]", "system_diagnostics")]
    assert fake_provider.requests == []
    assert GovernanceEvent.objects.filter(decision="context_blocked").count() == 2


def test_a_secret_adjacent_snippet_refuses_the_call_on_an_external_configuration(setup, fake_provider):
    from tests.factories import snippet_make

    snippet_make(
        tags=("ops",),
        identifier="vault-runbook",
        text="Break-glass steps.",
        data_class=DataClass.SECRET_ADJACENT,
        ceiling=TrustZone.LOCAL,
    )
    configuration, caller = setup(snippet_tags=["ops"])

    response = chat(caller, configuration, [{"role": "user", "content": "Hi"}])

    error = openai_error(response, 403, "context_refused")
    assert error["message"].startswith("snippet 'vault-runbook' may not be sent to zone external_eu")
    assert "Break-glass" not in response.content.decode()
    assert fake_provider.requests == []


def test_secrets_are_redacted_in_tools_options_and_the_reply(setup, fake_provider):
    configuration, caller = setup()
    tool = json.loads(json.dumps(WEATHER))
    tool["function"]["description"] = f"Uses key {STRIPE.value}."
    fake_provider.script(Reply(text=f"The key is {GITHUB.value}."))

    response = chat(
        caller,
        configuration,
        [{"role": "user", "content": "Weather?"}],
        tools=[tool],
        user=f"user {GITHUB.value}",
        stop=[f"stop {GITHUB.value}"],
    )

    assert response.status_code == 200, response.content
    assert leaked(fake_provider.wire_text(), GITHUB, STRIPE) == []
    assert leaked(response.content.decode(), GITHUB, STRIPE) == []
    body = response.json()
    assert body["choices"][0]["message"]["content"] == "The key is [REDACTED:github_token]."
    assert body["governance"]["redactions"] == {
        "sent": {"github_token": 1, "stripe_key": 1},  # the stop sequence's (user is never sent)
        "reply": {"github_token": 1},
    }
    assert (
        fake_provider.bodies()[0]["tools"][0]["function"]["description"] == "Uses key [REDACTED:stripe_key]."
    )


def test_the_configuration_tools_are_not_offered_and_client_tools_come_back_as_tool_calls(
    setup, fake_provider
):
    configuration, caller = setup(allowed_tool_groups=["content"])
    fake_provider.script(Reply.tools(("call_1", "get_weather", {"city": "Oslo"})))

    response = chat(
        caller,
        configuration,
        [{"role": "user", "content": "Weather?"}],
        tools=[WEATHER],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
    )

    assert response.status_code == 200, response.content
    sent = fake_provider.bodies()[0]
    assert [t["function"]["name"] for t in sent["tools"]] == ["get_weather"]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    assert choice["message"]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
        }
    ]
    assert AgentRun.objects.count() == 0


def test_without_tools_nothing_is_offered(setup, fake_provider):
    configuration, caller = setup(allowed_tool_groups=["content"])
    fake_provider.script(Reply(text="ok"))

    assert chat(caller, configuration, [{"role": "user", "content": "Hi"}]).status_code == 200

    assert "tools" not in fake_provider.bodies()[0]


# --- parameters -------------------------------------------------------------------------------------------------


def test_sampling_and_output_parameters_reach_an_openai_compatible_provider(setup, fake_provider):
    configuration, caller = setup()
    fake_provider.script(Reply(text="{}"))

    response = chat(
        caller,
        configuration,
        [{"role": "user", "content": "Hi"}],
        max_completion_tokens=300,
        max_tokens=100,
        temperature=0.3,
        top_p=0.9,
        stop="END",
        seed=7,
        response_format={"type": "json_object"},
        user="end-user-1",
        metadata={"ticket": "A-1"},
        parallel_tool_calls=True,
        some_future_field={"x": 1},
    )

    assert response.status_code == 200, response.content
    sent = fake_provider.bodies()[0]
    assert {
        key: sent[key] for key in ("max_tokens", "temperature", "top_p", "stop", "seed", "response_format")
    } == {
        "max_tokens": 300,
        "temperature": 0.3,
        "top_p": 0.9,
        "stop": ["END"],
        "seed": 7,
        "response_format": {"type": "json_object"},
    }
    assert "metadata" not in sent and "some_future_field" not in sent and "user" not in sent


def test_parameters_reach_an_anthropic_provider_in_its_own_shape(fake_provider, make_caller):
    provider = provider_make(
        kind=ProviderKind.ANTHROPIC,
        base_url=fake_provider.anthropic_base_url,
        trust_zone=TrustZone.EXTERNAL_EU,
        max_retries=0,
    )
    configuration = configuration_make(model=model_make(provider=provider, model_id="claude-sonnet-4-5"))
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(Reply.tools(("toolu_1", "get_weather", {"city": "Oslo"})))

    response = chat(
        caller,
        configuration,
        [{"role": "user", "content": "Weather?"}],
        tools=[WEATHER],
        tool_choice="required",
        stop=["END"],
        top_p=0.5,
        user="end-user-1",
        parallel_tool_calls=False,
    )

    assert response.status_code == 200, response.content
    sent = fake_provider.bodies()[0]
    assert fake_provider.requests[0].path == "/v1/messages"
    assert sent["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert (sent["stop_sequences"], sent["top_p"]) == (["END"], 0.5)
    assert "seed" not in sent and "metadata" not in sent
    assert response.json()["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize(
    ("fields", "param"),
    [({"n": 2}, "n"), ({"logprobs": True}, "logprobs"), ({"top_logprobs": 3}, "top_logprobs")],
)
def test_parameters_that_cannot_be_honoured_are_a_400_naming_them(setup, fake_provider, fields, param):
    configuration, caller = setup()

    error = openai_error(
        chat(caller, configuration, [{"role": "user", "content": "Hi"}], **fields),
        400,
        "unsupported_parameter",
    )

    assert (error["type"], error["param"]) == ("invalid_request_error", param)
    assert fake_provider.requests == []


def test_n_of_one_and_false_logprobs_are_accepted(setup, fake_provider):
    configuration, caller = setup()
    fake_provider.script(Reply(text="ok"))

    response = chat(caller, configuration, [{"role": "user", "content": "Hi"}], n=1, logprobs=False)

    assert response.status_code == 200, response.content


@pytest.mark.parametrize(
    ("messages", "param"),
    [
        ([], "messages"),
        ([{"role": "assistant", "content": "Hi"}], "messages"),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}],
                }
            ],
            "messages[0].content[0].type",
        ),
        ([{"role": "user", "content": "Hi", "data_class": "top_secret"}], "messages[0].data_class"),
        ([{"role": "function", "content": "Hi", "name": "f"}], "messages[0].role"),
        ([{"role": "user", "content": "Hi"}, {"role": "tool", "content": "x"}], "messages[1].tool_call_id"),
    ],
)
def test_a_malformed_conversation_is_a_400_naming_the_field(setup, fake_provider, messages, param):
    configuration, caller = setup()

    error = openai_error(chat(caller, configuration, messages), 400, "invalid_value")

    assert error["param"] == param
    assert fake_provider.requests == []


def test_a_tool_choice_naming_no_offered_tool_is_a_400(setup, fake_provider):
    configuration, caller = setup()

    response = chat(
        caller,
        configuration,
        [{"role": "user", "content": "Hi"}],
        tools=[WEATHER],
        tool_choice={"type": "function", "function": {"name": "other"}},
    )

    assert openai_error(response, 400, "invalid_value")["param"] == "tool_choice.function.name"
    assert fake_provider.requests == []


# --- errors ---------------------------------------------------------------------------------------------------


def test_an_unknown_token_is_a_401_authentication_error(client):
    response = client.post(
        CHAT,
        {"model": "x", "messages": []},
        content_type="application/json",
        headers={"Authorization": "Bearer nope"},
    )

    assert openai_error(response, 401, "invalid_api_key")["type"] == "authentication_error"


def test_a_configuration_the_client_may_not_use_is_model_not_found(setup, fake_provider):
    _, caller = setup()
    other = fake_configuration(fake_provider, identifier="someone-elses")

    error = openai_error(chat(caller, other, [{"role": "user", "content": "Hi"}]), 404, "model_not_found")

    assert error["param"] == "model"


def test_an_overflowing_conversation_is_context_length_exceeded_with_the_breakdown(setup, fake_provider):
    configuration, caller = setup(model_context_window=2000, model_max_output_tokens=500)

    response = chat(caller, configuration, [{"role": "user", "content": "word " * 3000}])

    error = openai_error(response, 400, "context_length_exceeded")
    assert error["param"] == "messages"
    assert error["breakdown"]["estimated"] > error["breakdown"]["budget"]
    assert fake_provider.requests == []


def test_a_provider_failure_is_a_502(setup, fake_provider):
    configuration, caller = setup()
    fake_provider.script(server_error())

    error = openai_error(
        chat(caller, configuration, [{"role": "user", "content": "Hi"}]), 502, "provider_error"
    )

    assert (error["type"], error["failure_class"]) == ("api_error", "server_error")


def test_a_provider_context_overflow_is_a_502_naming_the_class(setup, fake_provider):
    configuration, caller = setup()
    fake_provider.script(context_length_exceeded())

    error = openai_error(
        chat(caller, configuration, [{"role": "user", "content": "Hi"}]), 502, "provider_error"
    )

    assert error["failure_class"] == "context_overflow"


def test_a_provider_rate_limit_is_a_429_with_retry_after(setup, fake_provider):
    configuration, caller = setup()
    fake_provider.script(rate_limited(retry_after=7))

    response = chat(caller, configuration, [{"role": "user", "content": "Hi"}])

    error = openai_error(response, 429, "rate_limit_exceeded")
    assert error["type"] == "rate_limit_error"
    assert response["Retry-After"] == "7"


@override_settings(API_RATE_LIMIT="1/min")
def test_throttling_is_a_429_with_retry_after(setup, fake_provider):
    configuration, caller = setup()
    fake_provider.script(Reply(text="ok"))
    assert chat(caller, configuration, [{"role": "user", "content": "Hi"}]).status_code == 200

    response = chat(caller, configuration, [{"role": "user", "content": "Hi"}])

    assert openai_error(response, 429, "rate_limit_exceeded")["type"] == "rate_limit_error"
    assert int(response["Retry-After"]) > 0
    assert len(fake_provider.requests) == 1


def test_a_switched_off_configuration_tells_the_sdk_not_to_retry(setup, fake_provider):
    configuration, caller = setup(is_active=False)

    response = chat(caller, configuration, [{"role": "user", "content": "Hi"}])

    openai_error(response, 409, "configuration_inactive")
    assert response["x-should-retry"] == "false"


# --- the event stream -----------------------------------------------------------------------------------------


def events_of(response) -> list:
    assert response["Content-Type"] == "text/event-stream; charset=utf-8"
    raw = b"".join(response.streaming_content).decode()
    assert raw.endswith("data: [DONE]\n\n")
    return [json.loads(block[len("data: ") :]) for block in raw.split("\n\n")[:-2]]


def test_a_stream_of_tool_calls_sends_id_and_name_first_then_arguments(setup, fake_provider):
    configuration, caller = setup()
    fake_provider.script(Reply.tools(("call_1", "get_weather", {"city": "Oslo"})))

    response = chat(
        caller, configuration, [{"role": "user", "content": "Weather?"}], tools=[WEATHER], stream=True
    )

    chunks = events_of(response)
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[0] == {"role": "assistant", "content": ""}
    assert deltas[1] == {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": ""},
            }
        ]
    }
    assert deltas[2] == {"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Oslo"}'}}]}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert {c["id"] for c in chunks} == {chunks[0]["id"]}
    assert all("usage" not in c for c in chunks)


def test_a_stream_with_include_usage_ends_with_usage_and_context_usage(setup, fake_provider):
    configuration, caller = setup()
    fake_provider.script(Reply(text=f"Here: {GITHUB.value}"))

    response = chat(
        caller,
        configuration,
        [{"role": "user", "content": "Hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )

    chunks = events_of(response)
    assert leaked(json.dumps(chunks), GITHUB) == []
    assert (
        "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-1])
        == "Here: [REDACTED:github_token]"
    )
    last = chunks[-1]
    assert last["choices"] == []
    assert (
        last["usage"]["total_tokens"] == last["usage"]["prompt_tokens"] + last["usage"]["completion_tokens"]
    )
    configuration.model.refresh_from_db()
    assert configuration.model.calibration_samples == 1  # as a completion that did not stream
    assert CompletionRecord.objects.get().completion_tokens == last["usage"]["completion_tokens"]
    assert last["context_usage"]["used_tokens"] == {
        "value": last["usage"]["prompt_tokens"],
        "provenance": "provider_reported",
    }
    assert last["governance"]["redactions"]["reply"] == {"github_token": 1}
    assert all(c["usage"] is None for c in chunks[:-1])


def test_a_refused_stream_answers_the_403_before_any_event(setup, fake_provider):
    configuration, caller = setup()

    response = chat(
        caller,
        configuration,
        [{"role": "user", "content": "x", "data_class": "secret_adjacent"}],
        stream=True,
    )

    openai_error(response, 403, "context_refused")
    assert fake_provider.requests == []


def test_models_lists_active_configurations_and_reads_one(setup, fake_provider, make_caller):
    configuration, _ = setup()
    inactive = fake_configuration(fake_provider, is_active=False)
    caller = make_caller("configurations:use", configurations=(configuration, inactive))

    listed = caller.get("/api/openai/v1/models")
    one = caller.get(f"/api/openai/v1/models/{configuration.identifier}")
    missing = caller.get("/api/openai/v1/models/unknown")

    assert listed.json() == {
        "object": "list",
        "data": [
            {
                "id": configuration.identifier,
                "object": "model",
                "created": 0,
                "owned_by": "governed",
                "modalities": {"input": ["text"], "output": ["text"]},
                "context_window": configuration.model.context_window,
                "max_output_tokens": configuration.model.max_output_tokens,
            }
        ],
    }
    assert one.json()["id"] == configuration.identifier
    openai_error(missing, 404, "model_not_found")


# --- the native API takes messages too -------------------------------------------------------------------------


def test_native_completions_take_a_conversation_governed_the_same_way(setup, fake_provider):
    configuration, caller = setup(system_prompt="Configured prompt.")
    fake_provider.script(Reply(text="Fine."))
    body = {
        "configuration": configuration.identifier,
        "input_data_class": "editor_content",
        "messages": [
            {"role": "system", "content": "Be terse."},
            {"role": "user", "content": f"Hi {GITHUB.value}", "data_class": "public_content"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Again"},
        ],
    }

    response = caller.post("/api/v1/completions", body)

    assert response.status_code == 200, response.content
    assert response.json()["text"] == "Fine."
    assert fake_provider.bodies()[0]["messages"] == [
        {"role": "system", "content": "Configured prompt."},
        {"role": "user", "content": 'Context item "system":\nBe terse.\n\nHi [REDACTED:github_token]'},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Again"},
    ]
    assert GovernanceEvent.objects.filter(decision="secret_redacted", reason="1 x github_token").count() == 1


def test_the_native_preview_lists_a_conversation_message_by_message(setup, fake_provider):
    configuration, caller = setup()
    body = {
        "configuration": configuration.identifier,
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Logs", "data_class": "system_diagnostics"},
        ],
    }

    preview = caller.post("/api/v1/context/preview", body).json()

    outcomes = {s["identifier"]: s["outcome"] for s in preview["decision"]["sources"]}
    assert outcomes["messages[0]"] == "allowed" and outcomes["messages[2]"] == "refused"
    assert preview["would_send"] is False
    parts = [
        (m["role"], p["identifier"], p.get("text"), p["withheld"])
        for m in preview["messages"]
        for p in m["parts"]
    ]
    assert parts[-3:] == [
        ("user", "messages[0]", "Hi", False),
        ("assistant", "messages[1]", "Hello.", False),
        ("user", "messages[2]", None, True),
    ]
    assert fake_provider.requests == []


@pytest.mark.parametrize("fields", [{}, {"input": "Hi", "messages": [{"role": "user", "content": "Hi"}]}])
def test_native_completions_need_exactly_one_of_input_and_messages(setup, fake_provider, fields):
    configuration, caller = setup()

    response = caller.post("/api/v1/completions", {"configuration": configuration.identifier, **fields})

    assert response.status_code == 400, response.content
    assert response.json()["extra"]["fields"] == {"input": ["Give exactly one of input and messages."]}
    assert fake_provider.requests == []


def test_a_run_takes_a_conversation_and_its_steps_send_it_before_their_own_turns(
    fake_provider, make_caller, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, system_prompt="Configured.")
    caller = make_caller("runs:create", "runs:read", configurations=(configuration,))
    fake_provider.script(Reply.tools(("call_1", "snippets_by_tag", {"tags": ["tone"]})), Reply(text="Done."))
    messages = [
        {"role": "developer", "content": "Be terse."},
        {"role": "user", "content": f"Draft it. {GITHUB.value}"},
        {"role": "assistant", "content": "Which tone?"},
        {"role": "user", "content": "Ours."},
    ]

    with django_capture_on_commit_callbacks(execute=True):
        response = caller.post(
            "/api/v1/runs", {"configuration": configuration.identifier, "messages": messages}
        )

    assert response.status_code == 202, response.content
    run = AgentRun.objects.get()
    assert (run.status, run.input_text) == ("completed", "Draft it. [REDACTED:github_token]")
    assert run.caller_context == [
        {
            "name": "developer",
            "text": "Be terse.",
            "data_class": "public_content",
            "identifier": "messages[0]",
        }
    ]
    assert leaked(json.dumps(run.conversation), GITHUB) == []
    first, second = fake_provider.bodies()
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant", "user"]
    assert (
        first["messages"][1]["content"]
        == 'Context item "developer":\nBe terse.\n\nDraft it. [REDACTED:github_token]'
    )
    assert [m["role"] for m in second["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
    ]
    assert second["messages"][3]["content"] == "Ours."
    assert leaked(fake_provider.wire_text(), GITHUB) == []
    detail = caller.get(response["Location"]).json()
    assert [m["role"] for m in detail["messages"]] == ["assistant", "tool", "assistant"]


def test_a_run_whose_conversation_holds_a_message_above_the_zone_is_refused_before_any_send(
    fake_provider, make_caller, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU)
    caller = make_caller("runs:create", "runs:read", configurations=(configuration,))
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "The vault notes.", "data_class": "secret_adjacent"},
    ]

    with django_capture_on_commit_callbacks(execute=True):
        response = caller.post(
            "/api/v1/runs", {"configuration": configuration.identifier, "messages": messages}
        )

    assert response.status_code == 202, response.content
    run = AgentRun.objects.get()
    assert (run.status, run.termination_reason) == ("failed", "policy_denied")
    assert GovernanceEvent.objects.get(decision="context_blocked").source_identifier == "messages[2]"
    assert fake_provider.requests == []


def test_a_malformed_run_conversation_stores_nothing(setup, fake_provider, make_caller):
    configuration, _ = setup()
    caller = make_caller("runs:create", configurations=(configuration,))

    response = caller.post(
        "/api/v1/runs",
        {"configuration": configuration.identifier, "messages": [{"role": "assistant", "content": "Hi"}]},
    )

    assert response.status_code == 400
    assert response.json()["code"] == "invalid_message"
    assert AgentRun.objects.count() == 0


def test_max_tokens_above_every_model_limit_is_a_400_naming_it(setup, fake_provider):
    configuration, caller = setup(model_max_output_tokens=500)

    response = chat(caller, configuration, [{"role": "user", "content": "Hi"}], max_completion_tokens=501)

    error = openai_error(response, 400, "invalid_value")
    assert error["param"] == "max_tokens"
    assert fake_provider.requests == []


def test_a_streamed_secret_split_across_provider_chunks_never_comes_out(setup, fake_provider):
    configuration, caller = setup()
    fake_provider.script(Reply(text=f"The deploy key is {GITHUB.value} and nothing else matters here."))

    response = chat(caller, configuration, [{"role": "user", "content": "Hi"}], stream=True)

    chunks = events_of(response)
    pieces = [
        c["choices"][0]["delta"].get("content") for c in chunks if c["choices"][0]["delta"].get("content")
    ]
    assert len(pieces) > 2  # forwarded as the provider's pieces arrive, not as one answer
    assert "".join(pieces) == "The deploy key is [REDACTED:github_token] and nothing else matters here."
    assert leaked(json.dumps(chunks), GITHUB) == []


def test_a_provider_stream_that_breaks_ends_with_an_error_event_and_no_done(setup, fake_provider):
    configuration, caller = setup()
    fake_provider.script(
        Reply(text="A long answer that will be cut off halfway through.", truncate_stream=True)
    )

    response = chat(caller, configuration, [{"role": "user", "content": "Hi"}], stream=True)

    raw = b"".join(response.streaming_content).decode()
    assert "[DONE]" not in raw
    last = json.loads(raw.strip().split("\n\n")[-1][len("data: ") :])
    assert last["error"]["code"] == "provider_error"
    assert last["error"]["failure_class"] == "connection"


def test_a_streamed_delta_reaches_the_client_before_the_provider_sends_the_rest(setup, fake_provider):
    configuration, caller = setup()
    gate = threading.Event()
    fake_provider.script(Reply(text="Short sentences. Warm and direct. No jargon at all.", gate=gate))
    response = chat(caller, configuration, [{"role": "user", "content": "Hi"}], stream=True)
    opened = threading.Timer(20, gate.set)  # only if the delta never came: then the test fails below
    opened.start()
    try:
        seen_before_the_rest = None
        for block in response.streaming_content:
            event = json.loads(block.decode().removeprefix("data: ")) if b"[DONE]" not in block else None
            if event and event["choices"] and event["choices"][0]["delta"].get("content"):
                seen_before_the_rest = not gate.is_set()
                gate.set()
                break
        rest = b"".join(response.streaming_content).decode()
    finally:
        opened.cancel()
        gate.set()

    assert seen_before_the_rest is True
    assert rest.endswith("data: [DONE]\n\n")


def test_an_anthropic_served_configuration_streams_the_same_openai_chunks(fake_provider, make_caller):
    provider = provider_make(
        kind=ProviderKind.ANTHROPIC,
        base_url=fake_provider.anthropic_base_url,
        trust_zone=TrustZone.EXTERNAL_EU,
        max_retries=0,
    )
    configuration = configuration_make(model=model_make(provider=provider, model_id="claude-sonnet-4-5"))
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(Reply(text="Warm, direct and brief: that is our tone."))

    response = chat(
        caller,
        configuration,
        [{"role": "user", "content": "Tone?"}],
        stream=True,
        stream_options={"include_usage": True},
    )

    chunks = events_of(response)
    assert fake_provider.requests[0].path == "/v1/messages"
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]) == (
        "Warm, direct and brief: that is our tone."
    )
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    assert chunks[-1]["usage"]["prompt_tokens"] > 0 and chunks[-1]["usage"]["completion_tokens"] > 0


def test_tool_call_arguments_holding_a_quoted_secret_stay_json_on_the_wire(fake_provider, make_caller):
    # A secret right before an escaped quote: redacted as plain text, the placeholder took the escape
    # with it and the arguments were no longer JSON (an Anthropic-served call was then refused).
    provider = provider_make(
        kind=ProviderKind.ANTHROPIC, base_url=fake_provider.anthropic_base_url, max_retries=0
    )
    configuration = configuration_make(model=model_make(provider=provider, model_id="claude-sonnet-4-5"))
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(Reply(text="Done."))
    arguments = json.dumps({"command": f'curl --header "PRIVATE-TOKEN: {GITHUB.value}" https://x.test'})
    call = {"id": "call_1", "type": "function", "function": {"name": "run", "arguments": arguments}}
    messages = [
        {"role": "user", "content": "Fetch it."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Fetched."},
    ]

    response = chat(caller, configuration, messages)

    assert response.status_code == 200, response.content
    [use] = [b for b in fake_provider.bodies()[0]["messages"][1]["content"] if b["type"] == "tool_use"]
    assert set(use["input"]) == {"command"}
    assert use["input"]["command"].startswith('curl --header "PRIVATE-TOKEN: [REDACTED:')
    assert use["input"]["command"].endswith('" https://x.test')
    assert leaked(fake_provider.requests[0].raw.decode(), GITHUB) == []
    assert sum(response.json()["governance"]["redactions"]["sent"].values()) == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply(text="Oslo is calm today.", minimal_chunks=True),
        Reply(text="Oslo is calm today.", minimal_chunks=True, finish_reason=False, done=False),
    ],
    ids=["minimal-chunks", "minimal-chunks-without-finish-reason-or-done"],
)
def test_a_self_hosted_upstream_that_streams_minimal_chunks_is_served(setup, fake_provider, reply):
    configuration, caller = setup()
    fake_provider.script(reply)

    response = chat(caller, configuration, [{"role": "user", "content": "Weather?"}], stream=True)

    assert response.status_code == 200
    events = events_of(response)
    text = "".join(event["choices"][0]["delta"].get("content") or "" for event in events if event["choices"])
    assert text == "Oslo is calm today."
    assert [event["choices"][0]["finish_reason"] for event in events if event["choices"]][-1] == "stop"
    assert len(fake_provider.requests) == 1
    assert CompletionRecord.objects.get().completion_tokens == 6
