"""The clients consumer apps are written with today, pointed at this service over HTTP: the official
``openai`` SDK (sync, async, streaming), LangChain's ``ChatOpenAI`` and the OpenAI Agents SDK. Each
runs against a live server whose configuration is served by the loopback fake provider, and the
fake's recorder proves what reached the wire: the configuration's prompt first, the caller's
messages as caller context, secrets redacted, refused context never sent.

Canary secrets are drawn at test time (tests/canaries.py); none is written in this file.
"""

from __future__ import annotations

import asyncio
import json

import openai
import pytest

from catalog.models import ApiClient
from catalog.services import api_client_create
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.factories import snippet_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

CANARIES = {canary.kind: canary for canary in generate_canaries(seed=20261213)}
GITHUB = CANARIES["github_classic_pat"]
SYSTEM_PROMPT = "You write release notes for the Atlas team."


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
        scopes=["configurations:use", "governance:read"],
        configurations=[configuration],
        default_input_data_class=DataClass.PUBLIC_CONTENT,
        trust_zone=TrustZone.EXTERNAL_GLOBAL,
    )
    return configuration, issued.token


def openai_client(live_server, token: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{live_server.url}/api/openai/v1", api_key=token, max_retries=0, timeout=20
    )


def wire_messages(fake_provider) -> list[dict]:
    (request,) = fake_provider.requests
    return request.body["messages"]


def test_the_openai_sdk_gets_a_governed_completion_and_the_wire_holds_no_secret(
    live_server, fake_provider, served
):
    configuration, token = served
    fake_provider.script(Reply(text="Atlas 2.1 ships faster search."))

    completion = openai_client(live_server, token).chat.completions.create(
        model=configuration.identifier,
        messages=[
            {"role": "system", "content": "Answer in one sentence."},
            {"role": "user", "content": f"Summarise the release. Deploy key: {GITHUB.value}"},
        ],
        max_tokens=200,
        temperature=0.2,
    )

    assert completion.choices[0].message.content == "Atlas 2.1 ships faster search."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "release-notes"
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
    assert completion.usage.prompt_tokens_details.cached_tokens == 0
    extra = completion.model_extra
    assert extra["context_usage"]["used_tokens"] == {
        "value": completion.usage.prompt_tokens,
        "provenance": "provider_reported",
    }
    assert extra["context_usage"]["context_window"] == configuration.model.context_window
    assert extra["governance"]["redactions"] == {"sent": {"github_token": 1}, "reply": {}}
    sources = {(s["kind"], s["identifier"]): s["outcome"] for s in extra["governance"]["decision"]["sources"]}
    assert sources == {
        ("system_prompt", "release-notes"): "allowed",
        ("caller_context", "messages[0]"): "allowed",
        ("task_input", "messages[1]"): "allowed",
    }
    messages = wire_messages(fake_provider)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == SYSTEM_PROMPT
    assert messages[1]["content"] == (
        'Context item "system":\nAnswer in one sentence.\n\n'
        "Summarise the release. Deploy key: [REDACTED:github_token]"
    )
    body = fake_provider.requests[0].body
    assert (body["max_tokens"], body["temperature"]) == (200, 0.2)
    assert leaked(fake_provider.wire_text(), GITHUB) == []
    assert GovernanceEvent.objects.filter(decision="secret_redacted", reason="1 x github_token").count() == 1


def test_a_secret_adjacent_message_is_refused_with_permission_denied_and_nothing_is_sent(
    live_server, fake_provider, served
):
    configuration, token = served

    with pytest.raises(openai.PermissionDeniedError) as raised:
        openai_client(live_server, token).chat.completions.create(
            model=configuration.identifier,
            messages=[
                {"role": "user", "content": "Rotate the vault master key.", "data_class": "secret_adjacent"}
            ],
        )

    error = raised.value
    assert error.status_code == 403
    assert error.code == "context_refused"
    assert error.type == "permission_error"
    refused = [s for s in error.body["governance"]["sources"] if s["outcome"] == "refused"]
    assert [(s["kind"], s["identifier"], s["data_class"]) for s in refused] == [
        ("task_input", "messages[0]", "secret_adjacent")
    ]
    assert fake_provider.requests == []
    assert (
        GovernanceEvent.objects.filter(decision="context_blocked", source_identifier="messages[0]").count()
        == 1
    )


def test_a_secret_adjacent_snippet_on_an_external_configuration_refuses_the_sdk_call(
    live_server, fake_provider, served
):
    configuration, token = served
    snippet_make(
        tags=("ops",),
        identifier="vault-runbook",
        text="Break-glass steps for the vault.",
        data_class=DataClass.SECRET_ADJACENT,
        ceiling=TrustZone.LOCAL,
    )
    configuration.snippet_tags = ["ops"]
    configuration.save(update_fields=["snippet_tags"])

    with pytest.raises(openai.PermissionDeniedError) as raised:
        openai_client(live_server, token).chat.completions.create(
            model=configuration.identifier, messages=[{"role": "user", "content": "Hi"}]
        )

    assert raised.value.code == "context_refused"
    refused = [s for s in raised.value.body["governance"]["sources"] if s["outcome"] == "refused"]
    assert [(s["kind"], s["identifier"]) for s in refused] == [("snippet", "vault-runbook")]
    assert "Break-glass" not in str(raised.value.body)
    assert fake_provider.requests == []


def test_n_above_one_is_a_bad_request_naming_the_parameter(live_server, fake_provider, served):
    configuration, token = served

    with pytest.raises(openai.BadRequestError) as raised:
        openai_client(live_server, token).chat.completions.create(
            model=configuration.identifier, messages=[{"role": "user", "content": "Hi"}], n=2
        )

    assert (raised.value.status_code, raised.value.param, raised.value.code) == (
        400,
        "n",
        "unsupported_parameter",
    )
    assert fake_provider.requests == []


def test_the_sdk_streams_with_include_usage_and_context_usage(live_server, fake_provider, served):
    configuration, token = served
    answer = "Atlas 2.1 ships faster search, a new importer and fewer clicks for every export."
    fake_provider.script(Reply(text=answer))

    stream = openai_client(live_server, token).chat.completions.create(
        model=configuration.identifier,
        messages=[{"role": "user", "content": "Summarise the release."}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)

    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == answer
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    last = chunks[-1]
    assert last.choices == [] and last.usage.completion_tokens > 0
    assert last.model_extra["context_usage"]["used_tokens"]["value"] == last.usage.prompt_tokens
    assert all(c.usage is None for c in chunks[:-1])


def test_the_async_sdk_gets_a_completion(live_server, fake_provider, served):
    configuration, token = served
    fake_provider.script(Reply(text="Done."))

    async def call():
        client = openai.AsyncOpenAI(
            base_url=f"{live_server.url}/api/openai/v1", api_key=token, max_retries=0, timeout=20
        )
        async with client:
            return await client.chat.completions.create(
                model=configuration.identifier, messages=[{"role": "user", "content": "Hi"}]
            )

    completion = asyncio.run(call())

    assert completion.choices[0].message.content == "Done."
    assert len(fake_provider.requests) == 1


def test_the_models_list_names_the_configurations_the_token_may_use(live_server, fake_provider, served):
    _, token = served
    fake_configuration(fake_provider, identifier="not-for-this-client")

    models = openai_client(live_server, token).models.list()

    assert [m.id for m in models.data] == ["release-notes"]
    assert ApiClient.objects.count() == 1


def test_a_client_side_tool_round_trip_returns_tool_calls_and_takes_the_result(
    live_server, fake_provider, served
):
    configuration, token = served
    weather = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
    fake_provider.script(
        Reply.tools(("call_7", "get_weather", {"city": "Oslo"})), Reply(text="Sunny in Oslo.")
    )
    client = openai_client(live_server, token)
    messages = [{"role": "user", "content": "Weather in Oslo?"}]

    first = client.chat.completions.create(model=configuration.identifier, messages=messages, tools=[weather])
    call = first.choices[0].message.tool_calls[0]
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"sky": "sunny"})},
    ]
    second = client.chat.completions.create(
        model=configuration.identifier, messages=messages, tools=[weather]
    )

    assert first.choices[0].finish_reason == "tool_calls"
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_7",
        "get_weather",
        {"city": "Oslo"},
    )
    assert second.choices[0].message.content == "Sunny in Oslo."
    first_body, second_body = fake_provider.bodies()
    assert [t["function"]["name"] for t in first_body["tools"]] == ["get_weather"]
    assert [m["role"] for m in second_body["messages"]] == ["system", "user", "assistant", "tool"]
    assert second_body["messages"][3] == {
        "role": "tool",
        "content": '{"sky": "sunny"}',
        "tool_call_id": "call_7",
    }


# --- LangChain --------------------------------------------------------------------------------------------


def chat_model(live_server, token: str, configuration, **kwargs):
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=configuration.identifier,
        base_url=f"{live_server.url}/api/openai/v1",
        api_key=token,
        max_retries=0,
        timeout=20,
        **kwargs,
    )


def test_langchain_invoke_is_governed_and_redacted(live_server, fake_provider, served):
    from langchain_core.messages import HumanMessage, SystemMessage

    configuration, token = served
    fake_provider.script(Reply(text="Atlas ships Monday."))

    reply = chat_model(live_server, token, configuration).invoke(
        [SystemMessage("Be brief."), HumanMessage(f"When do we ship? token {GITHUB.value}")]
    )

    assert reply.content == "Atlas ships Monday."
    assert reply.usage_metadata["input_tokens"] > 0
    messages = wire_messages(fake_provider)
    assert messages[0]["content"] == SYSTEM_PROMPT
    assert messages[1]["content"].endswith("When do we ship? token [REDACTED:github_token]")
    assert leaked(fake_provider.wire_text(), GITHUB) == []


def test_langchain_streams_the_reply(live_server, fake_provider, served):
    configuration, token = served
    answer = "Search is faster; the importer is new; exports need fewer clicks than before, in every view."
    fake_provider.script(Reply(text=answer))

    pieces = list(chat_model(live_server, token, configuration, stream_usage=True).stream("Summarise."))

    assert "".join(piece.content for piece in pieces) == answer
    assert len([piece for piece in pieces if piece.content]) > 1
    assert sum((piece.usage_metadata or {}).get("output_tokens", 0) for piece in pieces) > 0


SHELL_TOOL = {
    "type": "function",
    "function": {
        "name": "shell",
        "description": "Run a command.",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
    },
}


def test_streamed_tool_call_arguments_with_a_quoted_token_parse_in_both_sdks(
    live_server, fake_provider, served
):
    # Issue 26: the placeholder took the escaped quote after the token: json.loads failed in the SDKs
    # and LangChain dropped the tool call as invalid.
    configuration, token = served
    arguments = {"cmd": f'export TOKEN="{GITHUB.value}"'}
    fake_provider.script(
        Reply.tools(("call_1", "shell", arguments)), Reply.tools(("call_2", "shell", arguments))
    )
    client = openai_client(live_server, token)

    with client.chat.completions.stream(
        model=configuration.identifier, messages=[{"role": "user", "content": "Set it."}], tools=[SHELL_TOOL]
    ) as stream:
        final = stream.get_final_completion()
    pieces = list(chat_model(live_server, token, configuration).bind_tools([SHELL_TOOL]).stream("Set it."))
    message = sum(pieces[1:], pieces[0])

    expected = {"cmd": 'export TOKEN="[REDACTED:github_token]"'}
    (call,) = final.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == expected
    assert message.tool_calls == [{"name": "shell", "args": expected, "id": "call_2", "type": "tool_call"}]
    assert message.invalid_tool_calls == []
    assert leaked(call.function.arguments + json.dumps(message.tool_calls), GITHUB) == []


def test_langchain_bind_tools_round_trip_where_the_client_runs_the_tool(live_server, fake_provider, served):
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_core.tools import tool

    @tool
    def release_date(product: str) -> str:
        """The release date of a product."""
        return {"atlas": "2026-12-07"}[product]

    configuration, token = served
    fake_provider.script(
        Reply.tools(("call_1", "release_date", {"product": "atlas"})),
        Reply(text="Atlas ships on 7 December."),
    )
    model = chat_model(live_server, token, configuration).bind_tools([release_date])
    history = [HumanMessage("When does Atlas ship?")]

    first = model.invoke(history)
    (call,) = first.tool_calls
    history += [first, ToolMessage(release_date.invoke(call["args"]), tool_call_id=call["id"])]
    second = model.invoke(history)

    assert (call["name"], call["args"]) == ("release_date", {"product": "atlas"})
    assert second.content == "Atlas ships on 7 December."
    sent = fake_provider.bodies()[1]
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool"]
    assert sent["messages"][3]["content"] == "2026-12-07"
    assert [t["function"]["name"] for t in sent["tools"]] == ["release_date"]


# --- the OpenAI Agents SDK --------------------------------------------------------------------------------

# The SDK's import name is ``agents``, as is this project's app: it runs in its own interpreter, in
# isolated mode from another directory, so that ``import agents`` finds the SDK.
AGENT_SCRIPT = """
import asyncio, json, sys
from openai import AsyncOpenAI
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool, set_tracing_disabled

set_tracing_disabled(True)
base_url, token, model, question = sys.argv[1:5]
calls = []

@function_tool
def release_date(product: str) -> str:
    \"\"\"The release date of a product.\"\"\"
    calls.append(product)
    return "2026-12-07"

async def main():
    client = AsyncOpenAI(base_url=base_url, api_key=token, max_retries=0, timeout=20)
    agent = Agent(
        name="release-helper",
        instructions="Answer release questions.",
        tools=[release_date],
        model=OpenAIChatCompletionsModel(model=model, openai_client=client),
    )
    result = await Runner.run(agent, question, run_config=RunConfig(tracing_disabled=True))
    print(json.dumps({"final": result.final_output, "calls": calls}))

asyncio.run(main())
"""


def test_the_agents_sdk_runs_an_agent_with_a_function_tool_through_this_service(
    live_server, fake_provider, served, tmp_path
):
    import subprocess
    import sys

    configuration, token = served
    fake_provider.script(
        Reply.tools(("call_1", "release_date", {"product": "atlas"})),
        Reply(text="Atlas ships on 7 December."),
    )
    script = tmp_path / "agent_run.py"
    script.write_text(AGENT_SCRIPT)

    done = subprocess.run(
        [
            sys.executable,
            "-I",
            str(script),
            f"{live_server.url}/api/openai/v1",
            token,
            configuration.identifier,
            f"When does Atlas ship? Our deploy key is {GITHUB.value}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"OPENAI_AGENTS_DISABLE_TRACING": "1", "PATH": "/usr/bin:/bin"},
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "final": "Atlas ships on 7 December.",
        "calls": ["atlas"],
    }
    first, second = fake_provider.bodies()
    assert [t["function"]["name"] for t in first["tools"]] == ["release_date"]
    assert first["messages"][0]["content"] == SYSTEM_PROMPT
    assert first["messages"][1]["content"] == (
        'Context item "system":\nAnswer release questions.\n\n'
        "When does Atlas ship? Our deploy key is [REDACTED:github_token]"
    )
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert leaked(fake_provider.wire_text(), GITHUB) == []
    assert GovernanceEvent.objects.filter(decision="secret_redacted", reason="1 x github_token").count() == 2


def test_an_exhausted_budget_raises_rate_limit_error_streamed_or_not_without_retries(
    live_server, fake_provider, served
):
    configuration, token = served
    ApiClient.objects.filter(name="consumer-app").update(daily_token_limit=10)
    # The SDK's own retries are on: the answer's x-should-retry keeps it from retrying a day-long wait.
    client = openai.OpenAI(
        base_url=f"{live_server.url}/api/openai/v1", api_key=token, max_retries=2, timeout=20
    )
    messages = [{"role": "user", "content": "Summarise the release."}]

    for stream in (False, True):
        with pytest.raises(openai.RateLimitError) as raised:
            client.chat.completions.create(model=configuration.identifier, messages=messages, stream=stream)
        error = raised.value
        assert (error.status_code, error.code, error.type) == (429, "budget_exhausted", "rate_limit_error")
        assert error.body["budget"]["kind"] == "tokens"
        assert int(error.response.headers["retry-after"]) > 0

    assert fake_provider.requests == []
    assert GovernanceEvent.objects.filter(decision="budget_exhausted").count() == 2
