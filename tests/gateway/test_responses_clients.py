"""``/api/openai/v1/responses`` with the frameworks consumer apps use, unchanged, against a live server
whose configuration is served by the loopback fake provider: LangChain's ``ChatOpenAI`` with
``use_responses_api=True`` (whole, streamed, ``bind_tools``) and the OpenAI Agents SDK with its
default model (``OpenAIResponsesModel``), a function tool, ``Runner.run_sync`` and
``Runner.run_streamed``. The fake's recorder proves what reached the wire.

Canary secrets are drawn at test time (tests/canaries.py); none is written in this file.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from catalog.services import api_client_create
from gateway.models import StoredResponse
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

CANARIES = {canary.kind: canary for canary in generate_canaries(seed=20261204)}
GITHUB = CANARIES["github_classic_pat"]
SYSTEM_PROMPT = "You write release notes for the Atlas team."


def leaked(text: str, *canaries) -> list[str]:
    return [c.kind for c in canaries for fragment in c.fragments() if fragment in text]


@pytest.fixture
def served(fake_provider):
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


def chat_model(live_server, token: str, configuration, **kwargs):
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=configuration.identifier,
        base_url=f"{live_server.url}/api/openai/v1",
        api_key=token,
        max_retries=0,
        timeout=20,
        use_responses_api=True,
        **kwargs,
    )


def test_langchain_invoke_and_stream_over_the_responses_api_are_governed_and_redacted(
    live_server, fake_provider, served
):
    from langchain_core.messages import HumanMessage, SystemMessage

    configuration, token = served
    answer = "Search is faster; the importer is new; exports need fewer clicks than before, in every view."
    fake_provider.script(Reply(text="Atlas ships Monday."), Reply(text=answer))
    model = chat_model(live_server, token, configuration)

    reply = model.invoke([SystemMessage("Be brief."), HumanMessage(f"When do we ship? token {GITHUB.value}")])
    pieces = list(model.stream("Summarise."))

    assert reply.text == "Atlas ships Monday."
    assert reply.usage_metadata["input_tokens"] > 0
    streamed = sum(pieces[1:], pieces[0])
    assert streamed.text == answer
    assert len([piece for piece in pieces if piece.text]) > 1
    assert streamed.usage_metadata["output_tokens"] > 0
    first, _ = fake_provider.bodies()
    assert first["messages"][0]["content"] == SYSTEM_PROMPT
    assert first["messages"][1]["content"] == (
        'Context item "system":\nBe brief.\n\nWhen do we ship? token [REDACTED:github_token]'
    )
    assert leaked(fake_provider.wire_text(), GITHUB) == []


def test_langchain_bind_tools_round_trip_over_the_responses_api(live_server, fake_provider, served):
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
        Reply.tools(("call_2", "release_date", {"product": "atlas"})),
    )
    model = chat_model(live_server, token, configuration).bind_tools([release_date])
    history = [HumanMessage("When does Atlas ship?")]

    first = model.invoke(history)
    (call,) = first.tool_calls
    history += [first, ToolMessage(release_date.invoke(call["args"]), tool_call_id=call["id"])]
    second = model.invoke(history)
    pieces = list(model.stream("When does Atlas ship?"))
    streamed = sum(pieces[1:], pieces[0])

    assert (call["name"], call["args"], call["id"]) == ("release_date", {"product": "atlas"}, "call_1")
    assert second.text == "Atlas ships on 7 December."
    assert [(c["name"], c["args"], c["id"]) for c in streamed.tool_calls] == [
        ("release_date", {"product": "atlas"}, "call_2")
    ]
    sent = fake_provider.bodies()[1]
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool"]
    assert sent["messages"][3]["content"] == "2026-12-07"
    assert [t["function"]["name"] for t in sent["tools"]] == ["release_date"]


# The SDK's import name is ``agents``, as is this project's app: it runs in its own interpreter, in
# isolated mode from another directory, so that ``import agents`` finds the SDK. Its default model is
# OpenAIResponsesModel over the client it is given.
AGENT_SCRIPT = """
import asyncio, json, sys
from openai import AsyncOpenAI
from agents import Agent, Runner, function_tool, set_default_openai_client, set_tracing_disabled

set_tracing_disabled(True)
base_url, token, model, question, mode = sys.argv[1:6]
calls = []

@function_tool
def release_date(product: str) -> str:
    \"\"\"The release date of a product.\"\"\"
    calls.append(product)
    return "2026-12-07"

set_default_openai_client(AsyncOpenAI(base_url=base_url, api_key=token, max_retries=0, timeout=20), use_for_tracing=False)
agent = Agent(name="release-helper", instructions="Answer release questions.", tools=[release_date], model=model)
if mode != "streamed":
    result = Runner.run_sync(agent, question, auto_previous_response_id=mode == "chained")
    deltas = []
else:
    async def streamed():
        result = Runner.run_streamed(agent, question)
        deltas = []
        async for event in result.stream_events():
            if event.type == "raw_response_event" and event.data.type == "response.output_text.delta":
                deltas.append(event.data.delta)
        return result, deltas
    result, deltas = asyncio.run(streamed())
items = [item.type for item in result.new_items]
print(json.dumps({"final": result.final_output, "calls": calls, "items": items, "deltas": "".join(deltas)}))
"""


@pytest.mark.parametrize("mode", ["sync", "streamed", "chained"])
def test_the_agents_sdk_with_its_default_responses_model_runs_a_function_tool_through_this_service(
    live_server, fake_provider, served, tmp_path, mode
):
    configuration, token = served
    fake_provider.script(
        Reply.tools(("call_1", "release_date", {"product": "atlas"})),
        Reply(text="Atlas ships on 7 December, as planned by the team."),
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
            mode,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"OPENAI_AGENTS_DISABLE_TRACING": "1", "PATH": "/usr/bin:/bin"},
    )

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {
        "final": "Atlas ships on 7 December, as planned by the team.",
        "calls": ["atlas"],
        "items": ["tool_call_item", "tool_call_output_item", "message_output_item"],
        "deltas": "Atlas ships on 7 December, as planned by the team." if mode == "streamed" else "",
    }
    # Chained, the second request names the first response and sends only the tool's output; the
    # stored conversation supplies the rest, so the wire is the same.
    first, second = fake_provider.bodies()
    assert [t["function"]["name"] for t in first["tools"]] == ["release_date"]
    assert first["messages"][0]["content"] == SYSTEM_PROMPT
    assert first["messages"][1]["content"] == (
        'Context item "system":\nAnswer release questions.\n\n'
        "When does Atlas ship? Our deploy key is [REDACTED:github_token]"
    )
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert second["messages"][3]["content"] == "2026-12-07"
    assert leaked(fake_provider.wire_text(), GITHUB) == []
    # Chained, the question comes from the stored conversation, already redacted: one redaction, not two.
    redactions = 1 if mode == "chained" else 2
    assert (
        GovernanceEvent.objects.filter(decision="secret_redacted", reason="1 x github_token").count()
        == redactions
    )
    assert StoredResponse.objects.count() == 2
